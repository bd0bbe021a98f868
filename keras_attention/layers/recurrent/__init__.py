"""An RNN decoder that attends to an encoder memory at every step (`AttentionDecoder`)."""

"""Translators: the Transformer and the RNN encoder-decoder with attention, strings in and out."""

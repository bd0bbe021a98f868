"""Keras layers: attention, position encodings, Transformer blocks, vision."""

"""Layers for images: patches, class token and pooling, Swin windows, CNN self-attention."""

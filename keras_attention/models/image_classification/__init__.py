"""Image classifiers: the Vision Transformer and the Swin Transformer, with their presets."""

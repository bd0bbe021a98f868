"""Image captioners: Show, Attend and Tell, the Transformer captioner and the ViT captioner.

They share `ImageCaptioner` (the decoding protocol and `caption(images)`),
the CNN backbones of `image_backbones`, and `build_captioner` (one by name).
"""

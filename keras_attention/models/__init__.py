"""Functional-API models and their builders: translators, captioners and the Vision Transformer.

The names load on first use (PEP 562, `keras_attention.layers.lazy_exports`):
`import keras_attention.models` alone imports neither a model nor Keras.

>>> import keras_attention as ka
>>> model = ka.models.transformer_translator(
...     source_vocabulary_size=50, target_vocabulary_size=60,
...     max_source_length=12, max_target_length=10,
...     hidden_dim=16, num_layers=1, num_heads=2, intermediate_dim=32,
... )
>>> sorted(model.input)
['source', 'target']
"""

from keras_attention.layers import lazy_exports

# Public name -> the module of this package that defines it.
_EXPORTS = {
    "build_captioner": "captioning.captioner_builder",
    "image_backbone": "captioning.image_backbones",
    "image_size_of": "captioning.image_backbones",
    "ImageCaptioner": "captioning.image_captioner",
    "ShowAttendTellCaptioner": "captioning.show_attend_tell_captioner",
    "caption_attention_model": "captioning.show_attend_tell_captioner",
    "show_attend_tell_captioner": "captioning.show_attend_tell_captioner",
    "TransformerCaptioner": "captioning.transformer_captioner",
    "transformer_captioner": "captioning.transformer_captioner",
    "ViTCaptioner": "captioning.vit_captioner",
    "SWIN_PRESETS": "image_classification.swin_sizes",
    "SwinTransformer": "image_classification.swin_transformer",
    "swin_transformer_from_preset": "image_classification.swin_transformer",
    "VisionTransformer": "image_classification.vision_transformer",
    "get_attention_scores": "image_classification.vision_transformer",
    "vision_transformer": "image_classification.vision_transformer",
    "vision_transformer_from_preset": "image_classification.vision_transformer",
    "vision_transformer_no_decay_variables": "image_classification.vision_transformer",
    "vision_transformer_token_layout": "image_classification.vision_transformer",
    "TrainingAugmentation": "image_classification.vit_image_preprocessing",
    "VIT_PRESETS": "image_classification.vit_sizes",
    "vision_transformer_preset": "image_classification.vit_sizes",
    "copy_vision_transformer_weights": "image_classification.vit_weight_transfer",
    "RNNAttentionTranslator": "translation.rnn_attention_translator",
    "rnn_attention_translator": "translation.rnn_attention_translator",
    "TransformerTranslator": "translation.transformer_translator",
    "transformer_translator": "translation.transformer_translator",
}
__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

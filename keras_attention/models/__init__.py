"""Functional-API models and their builders: translators, captioners and the Vision Transformer.

>>> import keras_attention as ka
>>> model = ka.models.transformer_translator(
...     source_vocabulary_size=50, target_vocabulary_size=60,
...     max_source_length=12, max_target_length=10,
...     hidden_dim=16, num_layers=1, num_heads=2, intermediate_dim=32,
... )
>>> sorted(model.input)
['source', 'target']
"""

from keras_attention.models.captioning.captioner_builder import build_captioner
from keras_attention.models.captioning.image_backbones import image_backbone
from keras_attention.models.captioning.image_backbones import image_size_of
from keras_attention.models.captioning.image_captioner import ImageCaptioner
from keras_attention.models.captioning.show_attend_tell_captioner import ShowAttendTellCaptioner
from keras_attention.models.captioning.show_attend_tell_captioner import caption_attention_model
from keras_attention.models.captioning.show_attend_tell_captioner import show_attend_tell_captioner
from keras_attention.models.captioning.transformer_captioner import TransformerCaptioner
from keras_attention.models.captioning.transformer_captioner import transformer_captioner
from keras_attention.models.captioning.vit_captioner import ViTCaptioner
from keras_attention.models.image_classification.swin_sizes import SWIN_PRESETS
from keras_attention.models.image_classification.swin_transformer import SwinTransformer
from keras_attention.models.image_classification.swin_transformer import (
    swin_transformer_from_preset,
)
from keras_attention.models.image_classification.vision_transformer import VisionTransformer
from keras_attention.models.image_classification.vision_transformer import get_attention_scores
from keras_attention.models.image_classification.vision_transformer import vision_transformer
from keras_attention.models.image_classification.vision_transformer import (
    vision_transformer_from_preset,
)
from keras_attention.models.image_classification.vision_transformer import (
    vision_transformer_no_decay_variables,
)
from keras_attention.models.image_classification.vision_transformer import (
    vision_transformer_token_layout,
)
from keras_attention.models.image_classification.vit_image_preprocessing import TrainingAugmentation
from keras_attention.models.image_classification.vit_sizes import VIT_PRESETS
from keras_attention.models.image_classification.vit_sizes import vision_transformer_preset
from keras_attention.models.image_classification.vit_weight_transfer import (
    copy_vision_transformer_weights,
)
from keras_attention.models.translation.rnn_attention_translator import RNNAttentionTranslator
from keras_attention.models.translation.rnn_attention_translator import rnn_attention_translator
from keras_attention.models.translation.transformer_translator import TransformerTranslator
from keras_attention.models.translation.transformer_translator import transformer_translator

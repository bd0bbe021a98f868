"""Keras layers: attention, position encodings, Transformer blocks, vision.

Every layer is registered for serialization under the package name
"keras_attention", so saved `.keras` files load without `custom_objects`.
"""

from keras_attention.layers.attention.additive_attention import AdditiveAttention
from keras_attention.layers.attention.base_attention import BaseAttention
from keras_attention.layers.attention.dot_product_attention import DotProductAttention
from keras_attention.layers.attention.grouped_query_attention import GroupedQueryAttention
from keras_attention.layers.attention.grouped_query_attention import GroupQueryAttention
from keras_attention.layers.attention.multi_head_attention import MultiHeadAttention
from keras_attention.layers.attention.self_attention import SelfAttention
from keras_attention.layers.position.alibi_bias import AlibiBias
from keras_attention.layers.position.alibi_bias_2d import AlibiBias2D
from keras_attention.layers.position.position_embedding import PositionEmbedding
from keras_attention.layers.position.position_embedding_2d import PositionEmbedding2D
from keras_attention.layers.position.relative_position_bias import RelativePositionBias
from keras_attention.layers.position.rotary_embedding import RotaryEmbedding
from keras_attention.layers.position.sinusoidal_position_encoding import SinusoidalPositionEncoding
from keras_attention.layers.position.sinusoidal_position_encoding_2d import (
    SinusoidalPositionEncoding2D,
)
from keras_attention.layers.position.token_and_position_embedding import TokenAndPositionEmbedding
from keras_attention.layers.recurrent.attention_decoder import AttentionDecoder
from keras_attention.layers.transformer.stochastic_depth import StochasticDepth
from keras_attention.layers.transformer.transformer_decoder import TransformerDecoder
from keras_attention.layers.transformer.transformer_decoder_block import TransformerDecoderBlock
from keras_attention.layers.transformer.transformer_encoder import TransformerEncoder
from keras_attention.layers.transformer.transformer_encoder_block import TransformerEncoderBlock
from keras_attention.layers.vision.class_token import ClassToken
from keras_attention.layers.vision.patch_embedding import PatchEmbedding
from keras_attention.layers.vision.patch_merging import PatchMerging
from keras_attention.layers.vision.spatial_self_attention import SpatialSelfAttention
from keras_attention.layers.vision.swin_transformer_block import SwinTransformerBlock
from keras_attention.layers.vision.token_pooling import TokenPooling
from keras_attention.layers.vision.window_attention import WindowAttention

__all__ = [
    "AdditiveAttention",
    "AlibiBias",
    "AlibiBias2D",
    "AttentionDecoder",
    "BaseAttention",
    "ClassToken",
    "DotProductAttention",
    "GroupQueryAttention",
    "GroupedQueryAttention",
    "MultiHeadAttention",
    "PatchEmbedding",
    "PatchMerging",
    "PositionEmbedding",
    "PositionEmbedding2D",
    "RelativePositionBias",
    "RotaryEmbedding",
    "SelfAttention",
    "SinusoidalPositionEncoding",
    "SinusoidalPositionEncoding2D",
    "SpatialSelfAttention",
    "StochasticDepth",
    "SwinTransformerBlock",
    "TokenAndPositionEmbedding",
    "TokenPooling",
    "TransformerDecoder",
    "TransformerDecoderBlock",
    "TransformerEncoder",
    "TransformerEncoderBlock",
    "WindowAttention",
]

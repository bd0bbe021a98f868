"""Keras layers: attention, position encodings, Transformer blocks, vision.

Every layer is registered for serialization under the package name
"keras_attention", so saved `.keras` files load without `custom_objects`.

The layers load on first use (PEP 562): `ka.layers.MultiHeadAttention`
imports its module, and with it Keras, the first time it is asked for, so
that light modules below the package (`layers.attention.score_modes`, which
the command line reads) import without Keras. `lazy_exports` makes such a
package; `keras_attention.models` and the task packages load the same way.

>>> from keras_attention import layers
>>> layers.PositionEmbedding.__module__
'keras_attention.layers.position.position_embedding'
"""

import importlib
import sys

# Public name -> the module of this package that defines it.
_EXPORTS = {
    "AdditiveAttention": "attention.additive_attention",
    "BaseAttention": "attention.base_attention",
    "DotProductAttention": "attention.dot_product_attention",
    "GroupedQueryAttention": "attention.grouped_query_attention",
    "GroupQueryAttention": "attention.grouped_query_attention",
    "MultiHeadAttention": "attention.multi_head_attention",
    "SelfAttention": "attention.self_attention",
    "AlibiBias": "position.alibi_bias",
    "AlibiBias2D": "position.alibi_bias_2d",
    "PositionEmbedding": "position.position_embedding",
    "PositionEmbedding2D": "position.position_embedding_2d",
    "RelativePositionBias": "position.relative_position_bias",
    "RotaryEmbedding": "position.rotary_embedding",
    "SinusoidalPositionEncoding": "position.sinusoidal_position_encoding",
    "SinusoidalPositionEncoding2D": "position.sinusoidal_position_encoding_2d",
    "TokenAndPositionEmbedding": "position.token_and_position_embedding",
    "AttentionDecoder": "recurrent.attention_decoder",
    "StochasticDepth": "transformer.stochastic_depth",
    "TransformerDecoder": "transformer.transformer_decoder",
    "TransformerDecoderBlock": "transformer.transformer_decoder_block",
    "TransformerEncoder": "transformer.transformer_encoder",
    "TransformerEncoderBlock": "transformer.transformer_encoder_block",
    "ClassToken": "vision.class_token",
    "PatchEmbedding": "vision.patch_embedding",
    "PatchMerging": "vision.patch_merging",
    "SpatialSelfAttention": "vision.spatial_self_attention",
    "SwinTransformerBlock": "vision.swin_transformer_block",
    "TokenPooling": "vision.token_pooling",
    "WindowAttention": "vision.window_attention",
}
__all__ = sorted(_EXPORTS)


def lazy_exports(package, exports):
    """A module `__getattr__` that imports `package.<module>` for each exported name.

    Args:
        package: the package's `__name__`.
        exports: dict name -> the package's module that defines it, relative
            to the package (`"attention.multi_head_attention"`).

    Returns:
        `(__getattr__, __dir__)` functions for the package module (PEP 562);
        `__dir__` lists the package's own names and the exported ones.

    Example:

    >>> from keras_attention.layers import lazy_exports
    >>> getattr_, dir_ = lazy_exports("keras_attention.layers",
    ...                              {"AlibiBias": "position.alibi_bias"})
    >>> getattr_("AlibiBias").__name__, "AlibiBias" in dir_()
    ('AlibiBias', True)
    """

    def __getattr__(name):
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{exports[name]}"), name)

    def __dir__():
        return sorted(set(vars(sys.modules[package])) | set(exports))

    return __getattr__, __dir__


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

"""The attentional RNN decoder's cache, as a base for the captioner's adapter.

An `RNNAttentionTranslator` decodes itself (it implements the decoding
protocol); this base class lends its `initial_cache` and the names of its
state entries to adapters of models that do not.
"""

from keras_attention.generation.decoder_adapter import DecoderAdapter
from keras_attention.models.rnn_attention_translator import INITIAL_STATE_PREFIX
from keras_attention.models.rnn_attention_translator import MEMORY
from keras_attention.models.rnn_attention_translator import PRECOMPUTED_KEYS
from keras_attention.models.rnn_attention_translator import STATE_PREFIX
from keras_attention.models.rnn_attention_translator import RNNAttentionTranslator

__all__ = [
    "INITIAL_STATE_PREFIX",
    "MEMORY",
    "PRECOMPUTED_KEYS",
    "RNNTranslatorDecoder",
    "STATE_PREFIX",
]


class RNNTranslatorDecoder(DecoderAdapter):
    """Base of adapters whose cache is an `AttentionDecoder` state.

    A subclass writes `encode` (returning `"memory"`, `"memory_mask"`,
    `"precomputed_keys"` and the decoder's first state as
    `"initial_state_<i>"`) and `step`; the cache, `"state_<i>"`, starts as
    `RNNAttentionTranslator.initial_cache` starts it.

    Example:

    >>> from keras_attention.generation.rnn_translator_decoder import RNNTranslatorDecoder
    >>> from keras_attention.models.rnn_attention_translator import RNNAttentionTranslator
    >>> RNNTranslatorDecoder.initial_cache is RNNAttentionTranslator.initial_cache
    True
    """

    initial_cache = RNNAttentionTranslator.initial_cache

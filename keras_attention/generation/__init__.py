"""Greedy and beam-search decoding with fixed-size caches, compiled with XLA."""

from keras_attention.generation.beam_search import beam_search
from keras_attention.generation.beam_search import length_penalty
from keras_attention.generation.decoding_protocol import DecoderAdapter
from keras_attention.generation.decoding_protocol import captioner_decoder
from keras_attention.generation.decoding_protocol import decoder_for_model
from keras_attention.generation.greedy_search import greedy_search

__all__ = [
    "DecoderAdapter",
    "beam_search",
    "captioner_decoder",
    "decoder_for_model",
    "greedy_search",
    "length_penalty",
]

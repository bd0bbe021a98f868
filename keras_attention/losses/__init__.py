"""What the models train with, as `keras.losses` has it.

- `masked_sparse_categorical_crossentropy`: cross-entropy over the real
  tokens of padded target sequences (translation, captions).
- `doubly_stochastic_penalty`, `DoublyStochasticAttentionRegularizer`: the
  Show, Attend and Tell penalty that spreads a caption's attention over the
  whole image.
"""

from keras_attention.losses.doubly_stochastic import DoublyStochasticAttentionRegularizer
from keras_attention.losses.doubly_stochastic import doubly_stochastic_penalty
from keras_attention.losses.masked_cross_entropy import masked_sparse_categorical_crossentropy

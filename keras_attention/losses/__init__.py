"""What the models train with, as `keras.losses` has it.

- `masked_sparse_categorical_crossentropy`: cross-entropy over the real
  tokens of padded target sequences (translation, captions).
- `doubly_stochastic_penalty`, `DoublyStochasticAttentionRegularizer`: the
  Show, Attend and Tell penalty that spreads a caption's attention over the
  whole image.
- `prior_cross_entropy`: the loss of a model that ignores its input (the
  entropy of the label frequencies), the baseline `LearningMonitor` watches.

>>> from keras_attention import losses
>>> round(losses.prior_cross_entropy([0, 0, 1, 1]), 4)  # ln 2
0.6931
"""

from keras_attention.losses.doubly_stochastic import DoublyStochasticAttentionRegularizer
from keras_attention.losses.doubly_stochastic import doubly_stochastic_penalty
from keras_attention.losses.masked_cross_entropy import masked_sparse_categorical_crossentropy
from keras_attention.losses.prior_cross_entropy import prior_cross_entropy

"""Functional-API models built from the layers: translators (and more to come).

>>> import keras_attention as ka
>>> model = ka.models.transformer_translator(
...     source_vocabulary_size=50, target_vocabulary_size=60,
...     max_source_length=12, max_target_length=10,
...     hidden_dim=16, num_layers=1, num_heads=2, intermediate_dim=32,
... )
>>> sorted(model.input)
['source', 'target']
"""

from keras_attention.models.rnn_attention_translator import rnn_attention_translator
from keras_attention.models.transformer_translator import transformer_translator
from keras_attention.models.translation_losses import MaskedSparseCategoricalAccuracy
from keras_attention.models.translation_losses import masked_sparse_categorical_crossentropy

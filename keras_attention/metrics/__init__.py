"""What the models are scored with, as `keras.metrics` has it.

- `MaskedSparseCategoricalAccuracy`: token accuracy over the real tokens of
  padded target sequences.

How much of a captioner's attention falls on the object a word names is
measured in `keras_attention.tasks.captioning.attention_on_objects`.
"""

from keras_attention.metrics.masked_accuracy import MaskedSparseCategoricalAccuracy

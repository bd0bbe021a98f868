"""What the models are scored with, as `keras.metrics` has it.

- `MaskedSparseCategoricalAccuracy`: token accuracy over the real tokens of
  padded target sequences.
- The caption attention measures: how much of a captioner's attention falls
  on the object a word names (`object_attention_fractions`,
  `attention_on_objects_summary`, `attention_on_mask`,
  `mask_coverage_on_grid`, `attention_peak_in_box`).
"""

from keras_attention.metrics.attention_on_objects_report import attention_on_objects_report
from keras_attention.metrics.caption_attention import attention_on_mask
from keras_attention.metrics.caption_attention import attention_on_objects_summary
from keras_attention.metrics.caption_attention import attention_peak_in_box
from keras_attention.metrics.caption_attention import mask_coverage_on_grid
from keras_attention.metrics.caption_attention import object_attention_fractions
from keras_attention.metrics.masked_accuracy import MaskedSparseCategoricalAccuracy

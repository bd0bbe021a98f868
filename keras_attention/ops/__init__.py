"""Pure functions on `keras.ops`: masks, masked softmax and attention kernels."""

from keras_attention.ops.attention import IMPLEMENTATIONS
from keras_attention.ops.attention import attention_weights
from keras_attention.ops.attention import dot_product_attention
from keras_attention.ops.chunked_attention import chunked_attention
from keras_attention.ops.hashed_dropout import hashed_dropout
from keras_attention.ops.masks import causal_mask
from keras_attention.ops.masks import key_padding_mask
from keras_attention.ops.masks import merge_masks
from keras_attention.ops.masks import padding_mask_from_ids
from keras_attention.ops.masks import padding_mask_from_lengths
from keras_attention.ops.masks import query_key_mask
from keras_attention.ops.masks import relative_positions
from keras_attention.ops.masks import sliding_window_mask
from keras_attention.ops.rotary import apply_rotary
from keras_attention.ops.rotary import rotary_angles
from keras_attention.ops.softmax import masked_softmax
from keras_attention.ops.softmax import softmax_with_empty_rows

"""keras-attention: attention layers and attention models for Keras 3.

>>> import keras_attention as ka
>>> layer = ka.layers.MultiHeadAttention(num_heads=2, key_dim=8)
"""

from keras_attention import callbacks
from keras_attention import data
from keras_attention import generation
from keras_attention import layers
from keras_attention import models
from keras_attention import ops
from keras_attention import serving
from keras_attention import text
from keras_attention import training
from keras_attention import visualization
from keras_attention.version import __version__

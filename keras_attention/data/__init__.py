"""tf.data pipelines: tfds loaders, user files and built-in offline datasets.

Every example runs by default on a dataset generated here in code, with real
structure for attention to find: a Spanish-like corpus with agreement and word
reordering, scenes of coloured shapes captioned by where they are, and shapes
classified by kind and quadrant.
"""

from keras_attention.data.caption_sources import load_caption_dataset
from keras_attention.data.image_augmentation import augment_batches
from keras_attention.data.image_classification_sources import ImageClassificationData
from keras_attention.data.image_classification_sources import load_image_classification_dataset
from keras_attention.data.shapes_classification import generate_shape_classification
from keras_attention.data.shapes_classification import shape_classification_class_names
from keras_attention.data.shapes_classification import shape_classification_splits
from keras_attention.data.shapes_scenes import generate_shape_scenes
from keras_attention.data.shapes_scenes import shape_scene_splits
from keras_attention.data.translation_batches import make_translation_batches
from keras_attention.data.translation_corpus import builtin_translation_pairs
from keras_attention.data.translation_corpus import builtin_translation_splits
from keras_attention.data.translation_sources import load_translation_pairs
from keras_attention.data.translation_sources import read_tsv_pairs

"""tf.data pipelines: tfds loaders, data sets as users download them, built-in offline datasets.

Every example runs by default on a dataset generated here in code, with real
structure for attention to find: a Spanish-like corpus with agreement and word
reordering, scenes of coloured shapes captioned by where they are, and shapes
classified by kind and quadrant.
"""

from keras_attention.data.builtin_caption_objects import builtin_test_objects
from keras_attention.data.caption_batches import count_examples
from keras_attention.data.caption_batches import fits_in_memory
from keras_attention.data.caption_batches import training_and_validation_batches
from keras_attention.data.caption_image_size import native_caption_image_size
from keras_attention.data.caption_sources import load_caption_dataset
from keras_attention.data.caption_vocabulary import caption_length
from keras_attention.data.caption_vocabulary import caption_token_ids
from keras_attention.data.caption_vocabulary import train_caption_vocabulary
from keras_attention.data.dataset_splits import DatasetSplits
from keras_attention.data.image_augmentation import augment_batches
from keras_attention.data.image_classification_sources import ImageClassificationData
from keras_attention.data.image_classification_sources import load_image_classification_dataset
from keras_attention.data.known_length import with_known_length
from keras_attention.data.shapes_classification import generate_shape_classification
from keras_attention.data.shapes_classification import shape_classification_class_names
from keras_attention.data.shapes_classification import shape_classification_splits
from keras_attention.data.shapes_scenes import generate_shape_scenes
from keras_attention.data.shapes_scenes import shape_scene_splits
from keras_attention.data.tfds_download import DatasetDownloadError
from keras_attention.data.translation_batches import make_translation_batches
from keras_attention.data.translation_corpus import builtin_translation_pairs
from keras_attention.data.translation_corpus import builtin_translation_splits
from keras_attention.data.translation_sources import load_translation_pairs
from keras_attention.data.translation_sources import read_tsv_pairs

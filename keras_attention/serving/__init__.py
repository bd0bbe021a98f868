"""SavedModel export with serving signatures: pixels or strings in, strings and scores out."""

from keras_attention.serving.image_classifier_export import export_image_classifier
from keras_attention.serving.image_classifier_export import load_image_classifier

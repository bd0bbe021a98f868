"""SavedModel export with serving signatures: pixels or strings in, strings and scores out.

The `load_*` helpers return the serving function already called once
(warmed up), so that the first request after loading is as fast as the next.
"""

from keras_attention.serving.captioning_export import export_captioner
from keras_attention.serving.captioning_export import load_captioner
from keras_attention.serving.captioning_export import make_caption_function
from keras_attention.serving.image_classification_export import export_image_classifier
from keras_attention.serving.image_classification_export import load_image_classifier
from keras_attention.serving.text_translation import translate_texts
from keras_attention.serving.translation_export import export_translator
from keras_attention.serving.translation_export import load_translator
from keras_attention.serving.translation_export import make_translation_function

"""Drawing attention: NumPy arrays in, `matplotlib.figure.Figure` out.

Alignment matrices for translation, spatial attention over images for
captioning, attention rollout and per-head maps for Vision Transformers, and
confusion matrices. The arithmetic (`attention_rollout`,
`rollout_to_image_map`, `upsample_attention`, `confusion_matrix`) needs only
NumPy; the `plot_*` functions import matplotlib when called (`pip install
matplotlib`) and never touch pyplot's global state. The `write_*_explorer`
functions write interactive, self-contained HTML pages (NumPy only).
"""

from keras_attention.visualization.alignment import plot_alignment
from keras_attention.visualization.confusion import confusion_matrix
from keras_attention.visualization.confusion import plot_confusion_matrix
from keras_attention.visualization.explorer import whole_word_example
from keras_attention.visualization.explorer import word_maps
from keras_attention.visualization.explorer import words_and_attention
from keras_attention.visualization.explorer import write_caption_explorer
from keras_attention.visualization.explorer import write_translation_explorer
from keras_attention.visualization.explorer import write_vit_explorer
from keras_attention.visualization.figures import save_figure
from keras_attention.visualization.image_attention import plot_caption_attention
from keras_attention.visualization.image_attention import upsample_attention
from keras_attention.visualization.rollout import attention_rollout
from keras_attention.visualization.rollout import plot_head_maps
from keras_attention.visualization.rollout import plot_rollout
from keras_attention.visualization.rollout import rollout_to_image_map
from keras_attention.visualization.window_maps import window_attention_map
from keras_attention.visualization.window_maps import window_attention_matrices

"""Interactive attention explorers: one self-contained HTML page per model family.

`write_translation_explorer`, `write_caption_explorer` and
`write_vit_explorer` write a single .html file (scripts, styles, data and
images inlined) that opens from disk in a browser, with no network and no
server. `words_and_attention` turns subword pieces into whole words and pools
the attention between them.
"""

from keras_attention.visualization.explorer.captioning import write_caption_explorer
from keras_attention.visualization.explorer.image_classification import write_vit_explorer
from keras_attention.visualization.explorer.translation import write_translation_explorer
from keras_attention.visualization.explorer.words import whole_word_example
from keras_attention.visualization.explorer.words import word_maps
from keras_attention.visualization.explorer.words import words_and_attention

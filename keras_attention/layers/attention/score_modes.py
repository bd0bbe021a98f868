"""The names of the attention scores, in one place that imports nothing.

`DotProductAttention` takes a `score_mode` of `SCORE_MODES`; `ATTENTION_SCORES`
adds `AdditiveAttention`'s score, Bahdanau's, before them: every score an
attention layer of `keras_attention.layers.attention` computes, which is what
the RNN translator's `attention` and the translation script's `--attention`
choose from. Plain Python, so that a command line offers them without Keras.

>>> from keras_attention.layers.attention.score_modes import ATTENTION_SCORES
>>> ATTENTION_SCORES
('additive', 'scaled_dot', 'dot', 'general', 'concat')
"""

# `DotProductAttention`'s scores: Luong's dot and general, scaled dot-product, keras' concat.
SCORE_MODES = ("scaled_dot", "dot", "general", "concat")
# Bahdanau's additive score (`AdditiveAttention`), then `DotProductAttention`'s.
ATTENTION_SCORES = ("additive", *SCORE_MODES)

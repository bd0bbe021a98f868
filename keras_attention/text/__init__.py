"""Tokenization and translation scores: WordPiece vocabularies, encoders, BLEU/chrF.

>>> from keras_attention import text
>>> encoder = text.SubwordEncoder(["[PAD]", "[UNK]", "[START]", "[END]", "hola"])
>>> encoder.encode(["hola"], 3, add_start=True).numpy().tolist()
[[2, 4, 0]]
"""

from keras_attention.text.scores import corpus_bleu
from keras_attention.text.scores import corpus_chrf
from keras_attention.text.subword_encoder import SubwordEncoder
from keras_attention.text.wordpiece_vocabulary import train_wordpiece_vocabulary

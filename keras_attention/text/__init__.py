"""Tokenization and translation scores: reversible and WordPiece tokenizers, BLEU/chrF.

`ReversibleTokenizer` gives back the exact text (spacing and punctuation) and
exports with TensorFlow alone; the models' training scripts use it.
`SubwordEncoder` is keras-hub's WordPiece (its SavedModels need
`import tensorflow_text` before loading, and it puts spaces around punctuation).

>>> from keras_attention import text
>>> tokenizer = text.ReversibleTokenizer.train(["hola, mundo"], 300)
>>> tokenizer.decode(tokenizer.encode(["hola, mundo"], 12)).numpy().tolist()
[b'hola, mundo']
"""

from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
from keras_attention.text.reversible_tokenizer import normalize_whitespace
from keras_attention.text.scores import corpus_bleu
from keras_attention.text.scores import corpus_chrf
from keras_attention.text.subword_encoder import SubwordEncoder
from keras_attention.text.wordpiece_vocabulary import train_wordpiece_vocabulary

"""Tokenization and translation scores: reversible and WordPiece tokenizers, BLEU/chrF.

`ReversibleTokenizer` gives back the exact text (spacing and punctuation): a
SentencePiece model learned by SentencePiece's trainer, with byte pieces for
characters it lacks; the models' training scripts use it. Its SavedModels,
as those of the others, need `import tensorflow_text` before loading.
`SubwordEncoder` is keras-hub's WordPiece (its SavedModels need
`import tensorflow_text` before loading, and it puts spaces around punctuation).
`SentencePieceTokenizer` cuts text with a SentencePiece model and numbers the
pieces with a vocabulary of its own, as pretrained Marian (opus-mt) translators do.

>>> from keras_attention import text
>>> tokenizer = text.ReversibleTokenizer.train(["hola, mundo"], 300)
>>> tokenizer.decode(tokenizer.encode(["hola, mundo"], 12)).numpy().tolist()
[b'hola, mundo']
"""

import importlib

# Public name -> the module that defines it. They load on first use (PEP 562),
# so that `keras_attention.text.word_pieces`, which models and plots use on
# every backend, does not pull in the tokenizers and TensorFlow with it.
_PUBLIC_NAMES = {
    "ReversibleTokenizer": "reversible_tokenizer",
    "normalize_whitespace": "whitespace",
    "corpus_bleu": "scores",
    "corpus_chrf": "scores",
    "SubwordEncoder": "subword_encoder",
    "SentencePieceTokenizer": "sentencepiece_tokenizer",
    "train_wordpiece_vocabulary": "wordpiece_vocabulary",
    "save_tokenizer": "tokenizer_files",
    "load_tokenizer": "tokenizer_files",
}
__all__ = sorted(_PUBLIC_NAMES)


def __getattr__(name):
    if name in _PUBLIC_NAMES:
        module = importlib.import_module(f"keras_attention.text.{_PUBLIC_NAMES[name]}")
        return getattr(module, name)
    raise AttributeError(f"module 'keras_attention.text' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_PUBLIC_NAMES))

"""A tokenizer saved to a folder with a note of its kind, and loaded back whole from it.

`save_tokenizer` writes the tokenizer's files (its own `save`) and
`tokenizer.json`, which names its class and special tokens;
`load_tokenizer` reads such a folder back, and also a folder written by
`save` alone, told apart by its files (`reversible_tokenizer.json`, or a
`vocabulary.json` token list: a `ReversibleTokenizer`; `vocabulary.txt`: a
`SubwordEncoder` with the default special tokens;
`sentencepiece_vocabulary.json`: a `SentencePieceTokenizer`), as the example
scripts leave under `OUTPUT_DIR/vocabulary`.

Example:

>>> import tempfile
>>> from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
>>> from keras_attention.text.tokenizer_files import load_tokenizer, save_tokenizer
>>> tokenizer = ReversibleTokenizer.train(["a b a", "b a b"], 300)
>>> folder = tempfile.mkdtemp()
>>> save_tokenizer(tokenizer, folder)
>>> load_tokenizer(folder).vocabulary == tokenizer.vocabulary
True
"""

import json
import os

from keras_attention.text import reversible_tokenizer
from keras_attention.text import sentencepiece_tokenizer
from keras_attention.text import subword_encoder
from keras_attention.text import vocabulary_json
from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
from keras_attention.text.sentencepiece_tokenizer import SentencePieceTokenizer
from keras_attention.text.subword_encoder import SubwordEncoder

TOKENIZER_FILE = "tokenizer.json"
# Class name -> (class, the files that tell a folder of its own `save` apart).
_KINDS = {
    "ReversibleTokenizer": (
        ReversibleTokenizer,
        (reversible_tokenizer.SETTINGS_FILENAME, vocabulary_json.VOCABULARY_FILENAME),
    ),
    "SubwordEncoder": (SubwordEncoder, (subword_encoder.VOCABULARY_FILENAME,)),
    "SentencePieceTokenizer": (
        SentencePieceTokenizer,
        (sentencepiece_tokenizer.VOCABULARY_FILENAME,),
    ),
}


def check_savable_tokenizer(tokenizer, name="tokenizer"):
    """Raises a ValueError unless `tokenizer` is of a kind `save_tokenizer` writes."""
    if not isinstance(tokenizer, tuple(kind for kind, _ in _KINDS.values())):
        raise ValueError(
            f"`{name}` must be a keras_attention.text tokenizer ({', '.join(_KINDS)}), which "
            f"a .keras file can hold. Received: {name} of type {type(tokenizer).__name__}"
        )


def save_tokenizer(tokenizer, directory):
    """Writes `tokenizer`'s vocabulary and `tokenizer.json` into `directory` (made if missing)."""
    check_savable_tokenizer(tokenizer)
    tokenizer.save(directory)
    # The kind it loads back as (a subclass is saved as the kind it extends).
    note = {
        "class_name": next(
            name for name, (kind, _) in _KINDS.items() if isinstance(tokenizer, kind)
        )
    }
    if isinstance(tokenizer, SubwordEncoder):
        note["special_tokens"] = tokenizer.special_tokens
    with open(os.path.join(directory, TOKENIZER_FILE), "w", encoding="utf-8") as file:
        json.dump(note, file, indent=2)


def load_tokenizer(directory):
    """The tokenizer `save_tokenizer` (or a tokenizer's own `save`) wrote into `directory`.

    Raises:
        ValueError: naming the folder, when it holds no tokenizer.
    """
    note_path = os.path.join(directory, TOKENIZER_FILE)
    if os.path.isfile(note_path):
        with open(note_path, encoding="utf-8") as file:
            note = json.load(file)
        kind, _ = _KINDS.get(note.get("class_name"), (None, None))
        if kind is None:
            raise ValueError(
                f"`directory` holds a tokenizer of an unknown kind {note.get('class_name')!r} "
                f"(known: {', '.join(_KINDS)}). Received: directory={directory!r}"
            )
        if kind is SubwordEncoder:
            return SubwordEncoder.load(directory, **note.get("special_tokens", {}))
        return kind.load(directory)
    for kind, files in _KINDS.values():
        if any(os.path.isfile(os.path.join(directory, file)) for file in files):
            return kind.load(directory)
    raise ValueError(
        f"`directory` must hold a tokenizer: {TOKENIZER_FILE} or a vocabulary file "
        f"({', '.join(file for _, files in _KINDS.values() for file in files)}). "
        f"Received: directory={directory!r}"
    )

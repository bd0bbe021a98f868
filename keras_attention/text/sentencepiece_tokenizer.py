"""SentencePiece pieces looked up in a vocabulary of their own, as Marian's tokenizers are.

An opus-mt (Marian) checkpoint cuts text with a SentencePiece model per
language (`source.spm`, `target.spm`) and numbers the pieces with one joint
vocabulary (`vocab.json`) that is not the SentencePiece models' own
numbering. `SentencePieceTokenizer` does the same in TensorFlow ops: the
SentencePiece op of tensorflow-text (`keras_attention.text.sentencepiece_model`)
cuts the text, a lookup table numbers the pieces, and decoding joins the
pieces of the ids back into text. Its graph traces into `tf.data` and
SavedModel signatures; loading such a SavedModel needs
`import tensorflow_text` first (TensorFlow Serving has the op built in).
"""

import json
import os

import tensorflow as tf

from keras_attention.text.id_rows import check_ids
from keras_attention.text.id_rows import from_end_on
from keras_attention.text.sentencepiece_model import WORD_START
from keras_attention.text.sentencepiece_model import parse_model_proto
from keras_attention.text.sentencepiece_model import read_model_file
from keras_attention.text.sentencepiece_model import read_model_into_op
from keras_attention.text.sentencepiece_model import sentencepiece_tokenize
from keras_attention.text.sentencepiece_model import write_model_file
from keras_attention.text.tokenizer_base import FixedLengthEncoder
from keras_attention.validation import check_bool

MODEL_FILENAME = "sentencepiece.model"
VOCABULARY_FILENAME = "sentencepiece_vocabulary.json"
# A leading ">>fr<<" names the target language of a multilingual model: one token.
_LANGUAGE_CODE = r"^>>[^<]*<<"


class SentencePieceTokenizer(FixedLengthEncoder, tf.Module):
    """Text to ids with a SentencePiece model and a vocabulary of its pieces, and back.

    Encoding: a leading language code such as `">>fr<<"` is one token (as
    Marian's tokenizer keeps it); the rest is cut into pieces by the
    SentencePiece model; each piece's id is its index in `vocabulary`, and
    `unknown_id` where the vocabulary lacks it. With `always_add_end` the end
    token closes every encoding (Marian's source sentences). Decoding stops
    at the end token, drops the special tokens (padding, start, end and
    unknown, as transformers' `skip_special_tokens=True` does) and joins the
    pieces with the SentencePiece model.

    Args:
        model_proto: the serialized SentencePiece model (bytes), such as
            the contents of Marian's `source.spm`.
        vocabulary: the piece of each id, in id order; id 0 is padding.
        start_id: id of the start token.
        end_id: id of the end token.
        unknown_id: id of pieces the vocabulary lacks.
        always_add_end: end every encoding with `end_id`, as if `encode`
            were called with `add_end=True`.

    Example (a SentencePiece model trained on a few lines):

    >>> import io
    >>> import sentencepiece
    >>> from keras_attention.text.sentencepiece_tokenizer import SentencePieceTokenizer
    >>> model = io.BytesIO()
    >>> sentencepiece.SentencePieceTrainer.train(
    ...     sentence_iterator=iter(["the cat sat", "the dog sat", "a cat ran"] * 20),
    ...     model_writer=model, vocab_size=16, minloglevel=2)
    >>> processor = sentencepiece.SentencePieceProcessor(model_proto=model.getvalue())
    >>> pieces = [processor.id_to_piece(i) for i in range(3, processor.vocab_size())]
    >>> tokenizer = SentencePieceTokenizer(
    ...     model.getvalue(), ["<pad>", "</s>", "<unk>", "<s>"] + pieces,
    ...     start_id=3, end_id=1, unknown_id=2, always_add_end=True)
    >>> ids = tokenizer.encode(["the dog"], 12)
    >>> [tokenizer.vocabulary[i] for i in ids.numpy()[0]]  # tiny model: mostly letters
    ['▁', 't', 'h', 'e', '▁', 'd', 'o', 'g', '</s>', '<pad>', '<pad>', '<pad>']
    >>> tokenizer.decode(ids).numpy().tolist()
    [b'the dog']
    """

    # How a piece marks the start of a word (`keras_attention.text.word_pieces`).
    word_continuation = "sentencepiece"

    def __init__(
        self, model_proto, vocabulary, *, start_id, end_id, unknown_id, always_add_end=False
    ):
        """Checks the arguments; makes the SentencePiece op and the lookup tables."""
        super().__init__(name="sentencepiece_tokenizer")
        parse_model_proto(model_proto)
        self._set_vocabulary(vocabulary)
        for name, value in (("start_id", start_id), ("end_id", end_id), ("unknown_id", unknown_id)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"`{name}` must be an int id. Received: {name}={value!r}")
            if not 0 < value < len(vocabulary):
                raise ValueError(
                    f"`{name}` must be an id of the vocabulary, 1 .. {len(vocabulary) - 1} "
                    f"(0 is padding). Received: {name}={value}"
                )
        check_bool("always_add_end", always_add_end)
        read_model_into_op(model_proto)  # once per model and process, quietly
        self._model_proto = model_proto
        self._start_id, self._end_id, self._unknown_id = start_id, end_id, unknown_id
        self._always_add_end = always_add_end
        self._piece_ids = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(
                tf.constant(self._vocabulary), tf.range(len(self._vocabulary), dtype=tf.int32)
            ),
            default_value=unknown_id,
        )
        self._pieces = tf.constant(self._vocabulary, dtype=tf.string)
        special = [0, start_id, end_id, unknown_id]
        self._is_special = tf.constant(
            [index in special for index in range(len(self._vocabulary))], dtype=tf.bool
        )

    pad_id = property(lambda self: 0, doc="Id of the padding token: always 0.")
    start_id = property(lambda self: self._start_id, doc="Id of the start token.")
    end_id = property(lambda self: self._end_id, doc="Id of the end token.")
    unknown_id = property(lambda self: self._unknown_id, doc="Id of pieces the vocabulary lacks.")
    always_add_end = property(lambda self: self._always_add_end, doc="Whether every encoding ends.")

    @property
    def special_pieces(self):
        """The pieces of the padding, start, end and unknown ids (words of their own in plots)."""
        ids = (0, self._start_id, self._end_id, self._unknown_id)
        return tuple(self._vocabulary[index] for index in ids)

    def tokenize(self, strings):
        """Ids of each string, unpadded, without the start and end tokens.

        Args:
            strings: `tf.string` tensor `(B,)` or a list of strings.

        Returns:
            int32 `tf.RaggedTensor` `(B, None)`.
        """
        strings = tf.convert_to_tensor(strings, dtype=tf.string)  # (B,)
        has_code = tf.strings.regex_full_match(strings, _LANGUAGE_CODE + ".*")  # (B,)
        codes = tf.strings.regex_replace(strings, "(" + _LANGUAGE_CODE + ").*", r"\1")  # (B,)
        text = tf.where(has_code, tf.strings.regex_replace(strings, _LANGUAGE_CODE, ""), strings)
        pieces = sentencepiece_tokenize(self._model_proto, text, tf.string)  # (B, None)
        code_ids = tf.ragged.boolean_mask(
            self._piece_ids.lookup(codes)[:, None], has_code[:, None]
        )  # (B, 0 or 1)
        return tf.concat(
            [code_ids, pieces.with_flat_values(self._piece_ids.lookup(pieces.flat_values))], axis=1
        )  # (B, None)

    def _encode(self, batch, sequence_length, add_start, add_end):
        return super()._encode(
            batch, sequence_length, add_start, tf.logical_or(add_end, self._always_add_end)
        )

    def decode(self, ids):
        """Text of ids `(B, T)` or `(T,)`: up to the end token, special tokens dropped.

        Returns:
            `tf.string` tensor `(B,)`, or a scalar for `(T,)` ids.
        """
        batch, single = check_ids(ids)  # (B, T)
        in_range = (batch >= 0) & (batch < self.vocabulary_size)
        safe = tf.where(in_range, batch, 0)  # (B, T)
        keep = in_range & ~from_end_on(batch, self.end_id) & ~tf.gather(self._is_special, safe)
        pieces = tf.where(keep, tf.gather(self._pieces, safe), "")  # (B, T)
        # SentencePiece's decoding of pieces, as transformers calls it: the pieces
        # joined, each word-start mark a space, the ends trimmed.
        text = tf.strings.reduce_join(pieces, axis=1)  # (B,)
        text = tf.strings.strip(tf.strings.regex_replace(text, WORD_START, " "))
        return text[0] if single else text

    def save(self, directory):
        """Writes `sentencepiece.model` and `sentencepiece_vocabulary.json` into `directory`.

        Returns:
            str, the path of the vocabulary file.
        """
        write_model_file(os.path.join(directory, MODEL_FILENAME), self._model_proto)
        settings = {
            "tokens": self._vocabulary,
            "start_id": self._start_id,
            "end_id": self._end_id,
            "unknown_id": self._unknown_id,
            "always_add_end": self._always_add_end,
        }
        path = os.path.join(directory, VOCABULARY_FILENAME)
        with open(path, "w", encoding="utf-8") as file:
            json.dump(settings, file, ensure_ascii=False, indent=0)
        return path

    @classmethod
    def load(cls, directory):
        """The tokenizer `save` wrote into `directory`."""
        paths = [os.path.join(directory, name) for name in (MODEL_FILENAME, VOCABULARY_FILENAME)]
        missing = [path for path in paths if not os.path.isfile(path)]
        if missing:
            raise ValueError(
                f"`directory` must hold {MODEL_FILENAME} and {VOCABULARY_FILENAME} written by "
                f"`save`. Received: directory={directory!r}, missing {missing}"
            )
        model_proto = read_model_file(paths[0])
        parse_model_proto(model_proto, paths[0])  # a damaged file: an error naming it
        with open(paths[1], encoding="utf-8") as file:
            settings = json.load(file)
        tokens = settings.pop("tokens")
        return cls(model_proto, tokens, **settings)

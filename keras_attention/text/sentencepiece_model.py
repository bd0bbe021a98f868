"""A SentencePiece model in TensorFlow graphs: its checks, its file and tensorflow-text's op.

Both SentencePiece tokenizers of this package (`ReversibleTokenizer` and
Marian's `SentencePieceTokenizer`) cut text with the SentencePiece op of
tensorflow-text (installed with keras-hub). The op traces into `tf.data`
maps and SavedModel signatures; loading such a SavedModel needs
`import tensorflow_text` first (TensorFlow Serving has the op built in).

Example:

>>> import io
>>> import sentencepiece
>>> import tensorflow as tf
>>> from keras_attention.text.sentencepiece_model import sentencepiece_tokenize
>>> model = io.BytesIO()
>>> sentencepiece.SentencePieceTrainer.train(
...     sentence_iterator=iter(["a b", "b a"]), model_writer=model, vocab_size=8,
...     hard_vocab_limit=False, minloglevel=2)
>>> sentencepiece_tokenize(model.getvalue(), tf.constant(["a b"]), tf.string).to_list()
[[b'\\xe2\\x96\\x81a', b'\\xe2\\x96\\x81b']]
"""

import hashlib
import os

import tensorflow as tf

from keras_attention.native_start_up_lines import native_start_up_lines_dropped

WORD_START = "\u2581"  # SentencePiece's mark of a space before a piece


def parse_model_proto(model_proto, name="model_proto"):
    """The `ModelProto` of serialized SentencePiece model bytes; a ValueError names `name`.

    Args:
        model_proto: bytes of a SentencePiece model, such as a `.model` file holds.
        name: what the error calls the bytes (an argument, or a file's path).

    Returns:
        `sentencepiece.sentencepiece_model_pb2.ModelProto`.

    Example:

    >>> from keras_attention.text.sentencepiece_model import parse_model_proto
    >>> parse_model_proto(b"not a model", "tokenizer.model")
    Traceback (most recent call last):
    ...
    ValueError: `tokenizer.model` must be a SentencePiece model ... Received: 11 bytes ...
    """
    import sentencepiece
    from sentencepiece import sentencepiece_model_pb2

    if not isinstance(model_proto, bytes) or not model_proto:
        raise ValueError(
            f"`{name}` must be the bytes of a SentencePiece model. "
            f"Received: {name} of type {type(model_proto).__name__}"
            + (" (empty)" if isinstance(model_proto, bytes) else "")
        )
    try:
        # The processor checks what parsing alone does not: pieces, ids, normalizer.
        sentencepiece.SentencePieceProcessor(model_proto=model_proto)
    except (RuntimeError, OSError):
        raise ValueError(
            f"`{name}` must be a SentencePiece model (a serialized ModelProto). "
            f"Received: {len(model_proto)} bytes that do not parse as one"
        ) from None
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(model_proto)
    return proto


def sentencepiece_tokenize(model_proto, texts, out_type):
    """Cut strings `(B,)` with tensorflow-text's SentencePiece op: ragged `(B, None)`.

    The op that holds the parsed model is made where this runs: in the
    graph being traced, whose node carries the model (a SavedModel keeps
    it), or eagerly. No handle to it is kept: TensorFlow drops eager ops
    when `tf.random.set_seed` (`keras.utils.set_random_seed`) clears its
    caches, and a handle made by one would then point at nothing.

    Args:
        model_proto: bytes of a SentencePiece model.
        texts: `tf.string` tensor `(B,)`.
        out_type: `tf.int32` (the model's ids) or `tf.string` (its pieces).

    Returns:
        `tf.RaggedTensor` `(B, None)` of `out_type`.
    """
    from tensorflow_text.python.ops.sentencepiece_tokenizer import gen_sentencepiece_tokenizer

    # A name of the model's own: graphs (a SavedModel's functions) share the parsed
    # model by name, so two models under one name would both read the first.
    name = "sentencepiece_" + hashlib.sha256(model_proto).hexdigest()[:16]
    with tf.name_scope(name):
        model = gen_sentencepiece_tokenizer.sentencepiece_op(model=model_proto, shared_name=name)
        values, row_splits = gen_sentencepiece_tokenizer.sentencepiece_tokenize_op(
            model,
            texts,
            nbest_size=0,  # the best segmentation, no sampling
            alpha=1.0,
            add_bos=False,
            add_eos=False,
            reverse=False,
            out_type=out_type,
        )
    return tf.RaggedTensor.from_row_splits(values, row_splits, validate=False)


def read_model_into_op(model_proto):
    """Has tensorflow-text's op read the model once, now, without its start-up line.

    The op says "precompiled_charsmap is empty" (these models do not
    normalise text, on purpose) the first time a process reads each model;
    read here, eagerly, in a block that drops that line, the model is not
    announced later in the middle of a progress bar.

    Args:
        model_proto: bytes of a SentencePiece model.
    """
    with tf.init_scope(), native_start_up_lines_dropped():
        sentencepiece_tokenize(model_proto, tf.constant([""]), tf.int32)


def write_model_file(path, model_proto):
    """Writes the model's bytes to `path` (its folder made if missing); returns `path`.

    Example:

    >>> import os, tempfile
    >>> from keras_attention.text.sentencepiece_model import read_model_file, write_model_file
    >>> path = os.path.join(tempfile.mkdtemp(), "tokenizer.model")
    >>> read_model_file(write_model_file(path, b"bytes")) == b"bytes"
    True
    """
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "wb") as file:
        file.write(model_proto)
    return path


def read_model_file(path):
    """The bytes of the model file at `path`; a ValueError names the file when it is missing.

    Example:

    >>> from keras_attention.text.sentencepiece_model import read_model_file
    >>> read_model_file("missing/tokenizer.model")
    Traceback (most recent call last):
    ...
    ValueError: `path` must be ... Received: path='missing/tokenizer.model', which does not exist
    """
    if not os.path.isfile(path):
        raise ValueError(
            "`path` must be a SentencePiece model file. "
            f"Received: path={str(path)!r}, which does not exist"
        )
    with open(path, "rb") as file:
        return file.read()

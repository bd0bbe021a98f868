"""Export a translation model as a TensorFlow SavedModel: text in, translation out.

The exported graph holds the whole pipeline: tokenization of the source,
XLA-compiled greedy or beam-search decoding with the model's key/value caches,
and detokenization of the result; `make_translation_function` builds that
graph for use in the same process. The tokenizers' ops come from
tensorflow-text (SentencePiece for `ReversibleTokenizer`, WordPiece for
`SubwordEncoder`): a serving process needs TensorFlow and
`import tensorflow_text` before `tf.saved_model.load` (TensorFlow Serving has
these ops built in), never this package.
"""

import os
import tempfile

import tensorflow as tf

from keras_attention.backend_support import require_tensorflow_backend
from keras_attention.generation.decoding_protocol import missing_protocol_methods
from keras_attention.serving.grouped_decoding import decode_in_groups
from keras_attention.serving.saved_model_kinds import TRANSLATOR
from keras_attention.serving.serving_signature import SERVING_SIGNATURE
from keras_attention.serving.serving_signature import load_serving_signature
from keras_attention.text.reversible_tokenizer import normalize_whitespace_strings
from keras_attention.validation import check_positive_int

SOURCE_VOCABULARY_ASSET = "source_vocabulary.txt"
TARGET_VOCABULARY_ASSET = "target_vocabulary.txt"
# What a tokenizer needs for export: `ReversibleTokenizer` and `SubwordEncoder` have it.
_TOKENIZER_ATTRIBUTES = ("encode", "decode", "vocabulary", "vocabulary_size", "start_id", "end_id")
# What a model needs besides the protocol's methods; `source_vocabulary_size` and
# `max_source_length`, where a model has them, are checked against the arguments.
PROTOCOL_ATTRIBUTES = ("vocabulary_size", "max_length")


def _check_arguments(model, source_encoder, target_encoder, lengths, beam_width, length_penalty):
    """A ValueError naming the first argument of an export that cannot work.

    Args:
        lengths: `{"max_source_length": ..., "max_target_length": ...,
            "decode_batch_size": ...}`, each a positive int.
    """
    for name, encoder in (("source_encoder", source_encoder), ("target_encoder", target_encoder)):
        _check_tokenizer(name, encoder)
    for name, value in lengths.items():
        check_positive_int(name, value)
    check_positive_int("beam_width", beam_width)
    if (
        isinstance(length_penalty, bool)
        or not isinstance(length_penalty, (int, float))
        or length_penalty < 0
    ):
        raise ValueError(
            f"`length_penalty` must be a number >= 0. Received: length_penalty={length_penalty!r}"
        )
    _check_protocol(model)
    _check_model_fits(model, source_encoder, target_encoder, lengths)


def _check_tokenizer(name, encoder):
    """A ValueError when the tokenizer argument `name` lacks what export needs."""
    missing = [attribute for attribute in _TOKENIZER_ATTRIBUTES if not hasattr(encoder, attribute)]
    if missing:
        raise ValueError(
            f"`{name}` must be a tokenizer such as keras_attention's ReversibleTokenizer "
            f"(with {', '.join(_TOKENIZER_ATTRIBUTES)}). Received: {name}={encoder!r}, "
            f"which lacks {', '.join(missing)}"
        )


def _check_model_fits(model, source_encoder, target_encoder, lengths):
    """A ValueError when the tokenizers' vocabularies or the lengths exceed the model's."""
    vocabulary_sizes = (
        # Optional: a model without `source_vocabulary_size` is not checked on that side.
        ("source", source_encoder, getattr(model, "source_vocabulary_size", None)),
        ("target", target_encoder, model.vocabulary_size),
    )
    for side, encoder, model_size in vocabulary_sizes:
        if model_size is not None and encoder.vocabulary_size != model_size:
            raise ValueError(
                f"`{side}_encoder` must have as many tokens as the model has {side} ids "
                f"({model_size}). Received: {side}_encoder.vocabulary_size="
                f"{encoder.vocabulary_size}"
            )
    # A Transformer has a position table per side: longer inputs have no position.
    position_limits = (
        ("max_source_length", getattr(model, "max_source_length", None)),
        ("max_target_length", model.max_length),
    )
    for name, limit in position_limits:
        if limit is not None and lengths[name] > limit:
            raise ValueError(
                f"`{name}` must be at most {limit}, the longest sequence the model's position "
                f"embedding covers. Received: {name}={lengths[name]}"
            )


def _check_protocol(model):
    """A ValueError naming what `model` lacks of the decoding protocol."""
    missing = missing_protocol_methods(model) + [
        name for name in PROTOCOL_ATTRIBUTES if not hasattr(model, name)
    ]
    if missing:
        raise ValueError(
            "`model` must be a translator that implements the decoding protocol "
            "(`encode`, `initial_cache`, `step`, `vocabulary_size`, `max_length`, as "
            "`TransformerTranslator` and `RNNAttentionTranslator` do; a captioner exports "
            f"with `export_captioner`). Received: model={getattr(model, 'name', model)!r}, "
            f"which lacks {', '.join(missing)}"
        )
    if callable(getattr(model, "caption", None)):
        raise ValueError(
            "`model` must be a translator (text in); a captioner exports with "
            f"`export_captioner`. Received: model={getattr(model, 'name', model)!r}, a captioner"
        )


def _write_vocabulary(encoder, folder, filename):
    path = os.path.join(folder, filename)
    with open(path, "w", encoding="utf-8") as file:
        file.write("".join(token + "\n" for token in encoder.vocabulary))
    return path


def _token_strings(vocabulary, ids):
    """The piece of every id `(B, L)`, with "" for padding (id 0)."""
    pieces = tf.gather(tf.constant(vocabulary, dtype=tf.string), ids)  # (B, L)
    return tf.where(tf.equal(ids, 0), "", pieces)


def make_translation_function(
    model,
    source_encoder,
    target_encoder,
    max_source_length,
    max_target_length,
    beam_width=1,
    *,
    length_penalty=0.6,
    decode_batch_size=8,
):
    """A `tf.function` that translates strings: the graph `export_translator` saves.

    `translate(text)` takes a `(B,)` string tensor of source sentences, or one scalar string
    (then every output loses its batch axis; text of another rank fails with an error naming
    its shape), and returns a dict of

    - `translation`: `(B,)` string, the decoded target sentences ("" for a blank source);
    - `attention`: `(B, T, S)` float32 with `T = max_target_length` and
      `S = max_source_length`, the attention on the source pieces when each target piece
      was chosen (rows after the end of a translation are 0);
    - `source_tokens`: `(B, S)` string, the source pieces the columns of `attention` stand
      for ("" for padding);
    - `translation_tokens`: `(B, T)` string, the produced pieces the rows stand for (the end
      token included, "" after it);
    - `source_truncated`: `(B,)` bool, whether the source had more than `S` pieces (only
      its first `S` were translated).

    Greedy or beam search decodes groups of `decode_batch_size` sentences (the last padded)
    in one XLA-compiled program, which so serves batches of every size.

    Args:
        model: a translation model that implements the decoding protocol: a
            `TransformerTranslator`, an `RNNAttentionTranslator` (built, or re-loaded from a
            `.keras` file) or a user's own model.
        source_encoder: the tokenizer the model's source ids come from: a
            `ReversibleTokenizer` (or a WordPiece `SubwordEncoder`).
        target_encoder: the tokenizer of the target ids; its start and end tokens start and
            stop decoding.
        max_source_length: number of source pieces the model reads.
        max_target_length: most target pieces produced, the end token included.
        beam_width: 1 for greedy search, more for beam search.
        length_penalty: GNMT length penalty of beam search (`alpha` >= 0).
        decode_batch_size: number of sentences decoded together.

    Returns:
        A `tf.function` with input signature `text: tf.string` of any shape.

    Example:

    >>> import keras_attention as ka
    >>> tokenizer = ka.text.ReversibleTokenizer.train(["a b a", "b a b"], 300)
    >>> size = tokenizer.vocabulary_size
    >>> model = ka.models.rnn_attention_translator(
    ...     source_vocabulary_size=size, target_vocabulary_size=size, embedding_dim=4, units=4)
    >>> translate = make_translation_function(
    ...     model, tokenizer, tokenizer, max_source_length=4, max_target_length=3)
    >>> outputs = translate(["a b a", "b"])
    >>> outputs["translation"].shape, outputs["attention"].shape
    (TensorShape([2]), TensorShape([2, 3, 4]))
    >>> outputs["source_tokens"].numpy().tolist()
    [[b' a', b' b', b' a', b''], [b' b', b'', b'', b'']]
    >>> translate(" \t ")["translation"].numpy()
    b''
    """
    require_tensorflow_backend("SavedModel export (make_translation_function)")
    lengths = {
        "max_source_length": max_source_length,
        "max_target_length": max_target_length,
        "decode_batch_size": decode_batch_size,
    }
    _check_arguments(model, source_encoder, target_encoder, lengths, beam_width, length_penalty)
    translate_batch = _batch_translator(
        model, source_encoder, target_encoder, lengths, beam_width, length_penalty
    )
    return tf.function(
        _keeping_text_shape(translate_batch),
        input_signature=[tf.TensorSpec(None, tf.string, name="text")],
        autograph=False,
    )


def _keeping_text_shape(translate_batch):
    """`translate_batch` for a scalar or `(B,)` text, its outputs keeping that shape in front."""

    def translate(text):
        check_rank = tf.debugging.Assert(
            tf.rank(text) < 2,
            [
                "`text` must be a string or a 1D batch of strings. Received: text with shape",
                tf.shape(text),
            ],
        )
        with tf.control_dependencies([check_rank]):
            batch = tf.reshape(text, [-1])  # (B,)
        outputs = translate_batch(batch)
        # Scalars in, scalars out: each output keeps the shape of `text` in front.
        return {
            name: tf.reshape(value, tf.concat([tf.shape(text), tf.shape(value)[1:]], axis=0))
            for name, value in outputs.items()
        }

    return translate


def _batch_translator(model, source_encoder, target_encoder, lengths, beam_width, length_penalty):
    """The translation of a `(B,)` string batch: encode, decode in groups, decode to text."""
    source_length, target_length = (
        int(lengths["max_source_length"]),
        int(lengths["max_target_length"]),
    )
    group_size = int(lengths["decode_batch_size"])
    start_id, end_id = target_encoder.start_id, target_encoder.end_id

    def translate_batch(text):
        blank = tf.equal(normalize_whitespace_strings(text), "")  # (B,)
        source_ids = source_encoder.encode(text, source_length)  # (B, S), cut to S pieces
        # Pieces beyond S are not read: say so, rather than translate part of a text unseen.
        truncated = source_encoder.tokenize(text).row_lengths() > source_length  # (B,)
        tokens, attention = decode_in_groups(
            model,
            source_ids,
            start_id,
            end_id,
            target_length,
            (source_length,),
            group_size,
            beam_width,
            length_penalty,
        )  # (B, T), (B, T, S)
        # A blank source has nothing to translate: no invented sentence.
        tokens = tf.where(blank[:, None], 0, tokens)  # (B, T)
        attention = tf.where(blank[:, None, None], 0.0, attention)  # (B, T, S)
        return {
            "translation": tf.where(blank, "", target_encoder.decode(tokens)),
            "attention": attention,
            "source_tokens": _token_strings(source_encoder.vocabulary, source_ids),
            "translation_tokens": _token_strings(target_encoder.vocabulary, tokens),
            "source_truncated": truncated,
        }

    return translate_batch


def export_translator(
    model,
    path,
    source_encoder,
    target_encoder,
    max_source_length,
    max_target_length,
    beam_width=1,
    *,
    length_penalty=0.6,
    decode_batch_size=8,
):
    """Writes a SavedModel that translates strings, tokenizer and decoding included.

    The `serving_default` signature takes `text`, a `(B,)` string tensor of
    source sentences (or a scalar string, answered with scalars), and returns
    `translation` `(B,)` string ("" for blank text), `attention`
    `(B, T, S)` float32 (`T = max_target_length`, `S = max_source_length`),
    the pieces its axes stand for, `source_tokens` `(B, S)` and
    `translation_tokens` `(B, T)` strings, and `source_truncated` `(B,)` bool
    (the source had more than `S` pieces, and only its first `S` were
    translated): the graph of
    `make_translation_function`, whose tokenization, XLA-compiled greedy
    (`beam_width=1`) or beam-search decoding and detokenization all run
    inside the SavedModel.

    The vocabularies are constants of the graph, so the folder needs no other
    file; they are also written as assets (`assets/source_vocabulary.txt`,
    `assets/target_vocabulary.txt`, one token per line, in id order) and
    reachable as `loaded.source_vocabulary.asset_path`. Loading needs
    TensorFlow and `import tensorflow_text` first, for the tokenizers' ops
    (SentencePiece for a `ReversibleTokenizer`, WordPiece for a
    `SubwordEncoder`), never this package:

        import tensorflow as tf
        import tensorflow_text  # registers the tokenizers' ops
        translate = tf.saved_model.load(path).signatures["serving_default"]
        translate(text=tf.constant(["the dog sleeps"]))["translation"]

    `saved_model_cli show --all --dir path` describes the signature.

    One function on purpose: its length is this contract of the SavedModel's signature;
    the code makes the translation function and saves it.

    Args:
        path: folder to write the SavedModel to.
        model, source_encoder, target_encoder, max_source_length,
            max_target_length, beam_width, length_penalty, decode_batch_size:
            as for `make_translation_function`.

    Returns:
        `path` as a string.

    Example:

    >>> import os, tempfile
    >>> import tensorflow as tf
    >>> from keras_attention.models.translation.transformer_translator import transformer_translator
    >>> from keras_attention.serving.translation_export import export_translator
    >>> from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
    >>> encoder = ReversibleTokenizer.train(["a b", "b a"], 300)
    >>> size = encoder.vocabulary_size
    >>> model = transformer_translator(
    ...     source_vocabulary_size=size, target_vocabulary_size=size, max_source_length=4,
    ...     max_target_length=3, hidden_dim=8, num_layers=1, num_heads=2, intermediate_dim=8)
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = export_translator(model, os.path.join(folder, "nmt"), encoder, encoder,
    ...                              max_source_length=4, max_target_length=3)
    ...     translate = tf.saved_model.load(path).signatures["serving_default"]
    ...     outputs = translate(text=tf.constant(["a b", "b"]))
    >>> outputs["translation"].dtype.name, tuple(outputs["translation"].shape)
    ('string', (2,))
    >>> tuple(outputs["attention"].shape)
    (2, 3, 4)
    """
    require_tensorflow_backend("SavedModel export (export_translator)")
    translate = make_translation_function(
        model,
        source_encoder,
        target_encoder,
        max_source_length,
        max_target_length,
        beam_width,
        length_penalty=length_penalty,
        decode_batch_size=decode_batch_size,
    )
    return _save_translation_module(model, translate, source_encoder, target_encoder, path)


def _save_translation_module(model, translate, source_encoder, target_encoder, path):
    """Save `translate` with the model's variables, tokenizer tables and vocabulary assets."""
    module = tf.Module()
    # The variables must belong to the saved object for the graph to use them.
    module.model_variables = list(model.variables)
    # Tokenizers that are tf.Modules own lookup tables the graph reads.
    module.tokenizers = [
        encoder for encoder in (source_encoder, target_encoder) if isinstance(encoder, tf.Module)
    ]
    module.translate = translate
    path = str(path)
    with tempfile.TemporaryDirectory() as folder:
        # Saving copies each asset file into `path/assets`.
        module.source_vocabulary = tf.saved_model.Asset(
            _write_vocabulary(source_encoder, folder, SOURCE_VOCABULARY_ASSET)
        )
        module.target_vocabulary = tf.saved_model.Asset(
            _write_vocabulary(target_encoder, folder, TARGET_VOCABULARY_ASSET)
        )
        signature = translate.get_concrete_function()
        tf.saved_model.save(module, path, signatures={SERVING_SIGNATURE: signature})
    return path


def load_translator(path, warm_up=True):
    """Loads the `serving_default` function of an exported translator, warmed up.

    Plain TensorFlow plus tensorflow-text, imported when it is installed,
    whose ops the tokenizers run (SentencePiece for a `ReversibleTokenizer`,
    WordPiece for a `SubwordEncoder`); it returns
    `tf.saved_model.load(path).signatures["serving_default"]`, keeping the
    loaded object alive.

    The first call of a loaded SavedModel optimizes its graph and compiles
    its XLA decoding loop, which takes seconds; a SavedModel cannot store
    that work. With `warm_up` this function pays it here, translating one
    short sentence before returning, so that the first request is as fast
    as the later ones (see benchmarks/README.md, "Cold start"). Code that
    loads with `tf.saved_model.load` itself should do the same.

    Args:
        path: a folder written by `export_translator`.
        warm_up: translate one sentence at load time.

    Returns:
        A callable `translate(text)` taking a string, a list or a `(B,)`
        tensor of strings and returning the dict of `translation`, `attention`,
        `source_tokens`, `translation_tokens` and `source_truncated`.

    Raises:
        ValueError: when `path` is not a SavedModel folder, or holds another
            kind of export (an image classifier, a captioner); the message
            names the path, what it holds and the function that loads it.

    Example:

    >>> import os, tempfile
    >>> from keras_attention.models.translation.rnn_attention_translator import (
    ...     rnn_attention_translator)
    >>> from keras_attention.serving.translation_export import export_translator, load_translator
    >>> from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
    >>> encoder = ReversibleTokenizer.train(["a b", "b a"], 300)
    >>> model = rnn_attention_translator(source_vocabulary_size=encoder.vocabulary_size,
    ...     target_vocabulary_size=encoder.vocabulary_size, embedding_dim=4, units=4)
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     translate = load_translator(export_translator(
    ...         model, folder, encoder, encoder, max_source_length=4, max_target_length=3))
    ...     outputs = translate(["a b a"])
    >>> outputs["translation"].shape, outputs["translation_tokens"].shape
    (TensorShape([1]), TensorShape([1, 3]))
    """
    try:
        import tensorflow_text  # noqa: F401  the tokenizers' SentencePiece (or WordPiece) ops
    except ImportError:
        pass

    loaded, serve = load_serving_signature(path, TRANSLATOR)

    def call(text):
        return serve(text=tf.convert_to_tensor(text, dtype=tf.string))

    if warm_up:
        # Batches up to the export's decode group size share one compiled loop.
        call(["warm up"])["translation"].numpy()
    call.saved_model = loaded  # keeps the variables alive
    return call

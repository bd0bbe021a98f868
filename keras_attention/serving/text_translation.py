"""Translating Python strings in the process, with the graph the SavedModel export holds."""

import warnings

import numpy as np
import tensorflow as tf

from keras_attention.backend_support import require_tensorflow_backend
from keras_attention.serving.translation_export import make_translation_function


def _check_texts(texts):
    if isinstance(texts, str):
        return [texts], True
    if isinstance(texts, (list, tuple)) and all(isinstance(text, str) for text in texts):
        return list(texts), False
    raise ValueError(f"`texts` must be a string or a list of strings. Received: texts={texts!r}")


def length_or_models(model, name, value):
    """`value`, or the model's own `name` (`max_source_length`, ...) when `value` is None."""
    if value is None:
        value = getattr(model, name, None)
        if value is None:
            raise ValueError(
                f"`{name}` must be given for a model without a `{name}` of its own. "
                f"Received: {name}=None"
            )
    return value


def _pieces(row):
    """The non-padding pieces of a `(L,)` string array, as text."""
    return [piece.decode("utf-8") for piece in row if piece]


def translate_texts(
    model,
    texts,
    source_encoder,
    target_encoder,
    *,
    max_source_length=None,
    max_target_length=None,
    beam_width=1,
    length_penalty=0.6,
    return_attention=False,
):
    """Translates Python strings with `make_translation_function`'s graph.

    The function is built once per tokenizer pair, lengths and search
    settings and kept on the model, so later calls reuse its compiled
    search. The translators' `translate` method calls this.

    Args:
        model: a model that implements the decoding protocol
            (`TransformerTranslator`, `RNNAttentionTranslator` or a user's).
        texts: one string, or a list of strings.
        source_encoder: the tokenizer of the source ids.
        target_encoder: the tokenizer of the target ids.
        max_source_length: source pieces read; defaults to
            `model.max_source_length`.
        max_target_length: most pieces produced, the end token included;
            defaults to `model.max_target_length`.
        beam_width: 1 for greedy search, more for beam search.
        length_penalty: GNMT length penalty of beam search (>= 0).
        return_attention: also return each text's alignment.

    A text of more than `max_source_length` pieces is cut to its first
    ones, with a warning that counts them.

    Returns:
        The translation (a string for a string, a list for a list) and, with
        `return_attention`, the alignment of each text: a dict of
        `"attention"` `(T, S)` float32, `"source_tokens"` (S pieces) and
        `"translation_tokens"` (T pieces), padding cut off.

    Example:

    >>> from keras_attention.models.translation.rnn_attention_translator import (
    ...     RNNAttentionTranslator)
    >>> from keras_attention.serving.text_translation import translate_texts
    >>> from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
    >>> tokenizer = ReversibleTokenizer.train(["a b a", "b a b"], 300)
    >>> model = RNNAttentionTranslator(
    ...     source_vocabulary_size=tokenizer.vocabulary_size,
    ...     target_vocabulary_size=tokenizer.vocabulary_size, embedding_dim=4, units=4)
    >>> translations = translate_texts(model, ["a b", " "], tokenizer, tokenizer,
    ...                                max_source_length=4, max_target_length=3)
    >>> len(translations), translations[1]
    (2, '')
    """
    require_tensorflow_backend("translate_texts (a translator's translate)")
    batch, is_scalar = _check_texts(texts)
    source_length = length_or_models(model, "max_source_length", max_source_length)
    target_length = length_or_models(model, "max_target_length", max_target_length)
    settings = (source_length, target_length, beam_width, length_penalty)
    translate = _translation_function(model, source_encoder, target_encoder, settings)
    outputs = translate(tf.constant(batch, dtype=tf.string))
    cut = int(np.sum(outputs["source_truncated"].numpy()))
    if cut:
        warnings.warn(
            f"{cut} of {len(batch)} texts had more than max_source_length={source_length} "
            f"pieces: only the first {source_length} of each were translated. Split long text "
            "into sentences, or give a larger max_source_length where the model allows it.",
            stacklevel=3,
        )
    translations = [
        text.decode("utf-8", errors="replace") for text in outputs["translation"].numpy()
    ]
    if not return_attention:
        return translations[0] if is_scalar else translations
    alignments = _alignments(outputs)
    if is_scalar:
        return translations[0], alignments[0]
    return translations, alignments


def _translation_function(model, source_encoder, target_encoder, settings):
    """`make_translation_function`'s graph for these tokenizers and settings, made once.

    Args:
        settings: `(max_source_length, max_target_length, beam_width, length_penalty)`.
    """
    source_length, target_length, beam_width, length_penalty = settings
    key = (id(source_encoder), id(target_encoder), *settings)
    # A plain dict in the instance dict: Keras does not track it, saving ignores it.
    functions = vars(model).setdefault("_translation_functions", {})
    entry = functions.get(key)
    if entry is None or entry[0] is not source_encoder or entry[1] is not target_encoder:
        function = make_translation_function(
            model,
            source_encoder,
            target_encoder,
            source_length,
            target_length,
            beam_width,
            length_penalty=length_penalty,
        )
        # The encoders are kept with it, so that their ids in the key stay theirs.
        entry = functions[key] = (source_encoder, target_encoder, function)
    return entry[2]


def _alignments(outputs):
    """One dict per text of the attention `(T, S)` and its pieces, padding cut off."""
    alignments = []
    attention = outputs["attention"].numpy()  # (B, T, S)
    for row, sources, produced in zip(
        attention, outputs["source_tokens"].numpy(), outputs["translation_tokens"].numpy()
    ):
        source_tokens, translation_tokens = _pieces(sources), _pieces(produced)
        alignments.append(
            {
                "attention": np.asarray(
                    row[: len(translation_tokens), : len(source_tokens)], dtype="float32"
                ),
                "source_tokens": source_tokens,
                "translation_tokens": translation_tokens,
            }
        )
    return alignments

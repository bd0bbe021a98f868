"""Scoring a translator on held-out sentence pairs: its translations, BLEU, chrF and exact matches.

`translate_pairs` runs any translation function that maps a batch of
strings to a dict of outputs (as `make_translation_function` or a reloaded
SavedModel does) over `(source, reference)` pairs; `score_translations`
compares what came out with the references; `translate_held_out` does both
for a trained model, with the graph its SavedModel export holds.

Example:

>>> import tensorflow as tf
>>> from keras_attention.tasks.translation.evaluation import translate_pairs
>>> pairs = tf.data.Dataset.from_tensor_slices((["a b", "c"], ["B A", "C"]))
>>> shout = lambda text: {"translation": tf.strings.upper(text)}
>>> sources, references, hypotheses, outputs = translate_pairs(shout, pairs)
>>> hypotheses, outputs["translation"].shape
(['A B', 'C'], (2,))
"""

import numpy as np

from keras_attention.data.dataset_length import known_length
from keras_attention.progress import ProgressBar
from keras_attention.serving.translation_export import make_translation_function
from keras_attention.text.scores import corpus_bleu
from keras_attention.text.scores import corpus_chrf
from keras_attention.validation import check_positive_int

# Outputs small enough to keep for a whole held-out split (attention is not).
_KEPT_FOR_EVERY_SENTENCE = ("translation", "source_truncated")


def _texts(strings):
    return [text.decode("utf-8") for text in strings]


def translate_pairs(translate, pairs, limit=None, batch_size=64, progress=None, keep_outputs=None):
    """Translations of `pairs` (at most `limit`), with their sources and references.

    Args:
        translate: a function from a `(B,)` string tensor to a dict of
            outputs with a leading batch axis, one of them "translation".
        pairs: a `tf.data.Dataset` of `(source, reference)` strings.
        limit: the most pairs to translate, or None for all.
        batch_size: sentences given to `translate` at once.
        progress: None, or an object whose `add(count)` is called with the
            sentences of each batch translated (a `ProgressBar`).
        keep_outputs: None to keep every output of every sentence, or how
            many leading sentences keep their outputs other than
            "translation" (attention `(T, S)` a sentence adds up over a
            large held-out split; the figures draw a few).

    Returns:
        `(sources, references, hypotheses, outputs)`: three lists of str and
        the dict of the outputs of `translate`, concatenated over batches as
        NumPy arrays ("translation" and "source_truncated" for every
        sentence, the others for the first `keep_outputs`).

    Example:

    >>> import tensorflow as tf
    >>> from keras_attention.tasks.translation.evaluation import translate_pairs
    >>> pairs = tf.data.Dataset.from_tensor_slices((["x", "y", "z"], ["1", "2", "3"]))
    >>> translate_pairs(lambda text: {"translation": text}, pairs, limit=2, batch_size=1)[:3]
    (['x', 'y'], ['1', '2'], ['x', 'y'])
    """
    check_positive_int("limit", limit, allow_none=True)
    check_positive_int("batch_size", batch_size)
    if limit is not None:
        pairs = pairs.take(limit)
    if keep_outputs is not None and (
        isinstance(keep_outputs, bool) or not isinstance(keep_outputs, int) or keep_outputs < 0
    ):
        raise ValueError(
            "`keep_outputs` must be None or an integer >= 0. "
            f"Received: keep_outputs={keep_outputs!r}"
        )
    sources, references, outputs = [], [], []
    for source, reference in pairs.batch(batch_size):
        kept = None if keep_outputs is None else max(0, keep_outputs - len(sources))
        sources += _texts(source.numpy())
        references += _texts(reference.numpy())
        batch = translate(source)
        outputs.append(
            {
                name: value.numpy()[: None if name in _KEPT_FOR_EVERY_SENTENCE else kept]
                for name, value in batch.items()
            }
        )
        if progress is not None:
            progress.add(len(outputs[-1]["translation"]))
    if not outputs:
        raise ValueError("`pairs` must hold at least one sentence pair. Received: an empty dataset")
    outputs = {name: np.concatenate([batch[name] for batch in outputs]) for name in outputs[0]}
    return sources, references, _texts(outputs["translation"]), outputs


def score_translations(hypotheses, references):
    """Corpus BLEU and chrF (0 to 100) and the fraction of exactly right translations.

    Args:
        hypotheses: list of str, the translations.
        references: list of str, one reference each.

    Returns:
        dict with "bleu", "chrf" and "exact_match" (0 to 1), floats.

    Example:

    >>> from keras_attention.tasks.translation.evaluation import score_translations
    >>> scores = score_translations(["the cat sat", "a dog"], ["the cat sat", "the dog"])
    >>> scores["exact_match"], round(scores["bleu"], 1) < 100.0
    (0.5, True)
    """
    bleu, chrf = corpus_bleu(hypotheses, references), corpus_chrf(hypotheses, references)
    exact = float(np.mean([h == r for h, r in zip(hypotheses, references)]))
    return {"bleu": bleu, "chrf": chrf, "exact_match": exact}


def translate_held_out(model, encoders, pairs, args, batch_size=64):
    """Translates held-out pairs as the exported SavedModel would, and scores them.

    The translation function is the graph `export_translator` writes (the
    tokenizers, the XLA-compiled greedy or beam search of `args.beam_width`
    and the detokenizer), so the scores are those of the served model.

    Args:
        model: a trained translator.
        encoders: `(source_encoder, target_encoder)`.
        pairs: `tf.data.Dataset` of `(source, reference)` strings.
        args: the parsed flags: `max_length`, `beam_width`, `eval_sentences`.
        batch_size: sentences translated at once.

    Returns:
        `(sources, references, hypotheses, outputs, scores)`: the first three
        lists of strings, `outputs` as `translate_pairs` returns them (all
        outputs for the first `max(args.plots, args.samples)` sentences),
        `scores` as `score_translations` does.
    """
    translate = make_translation_function(
        model,
        *encoders,
        max_source_length=args.max_length,
        max_target_length=args.max_length,
        beam_width=args.beam_width,
        decode_batch_size=batch_size,
    )
    total = args.eval_sentences or known_length(pairs)
    search = "greedy search" if args.beam_width == 1 else f"beam search of width {args.beam_width}"
    shown = max(getattr(args, "plots", 0), getattr(args, "samples", 0))
    with ProgressBar(f"translating the held-out split ({search})", total, "sentences") as bar:
        sources, references, hypotheses, outputs = translate_pairs(
            translate, pairs, args.eval_sentences, batch_size, progress=bar, keep_outputs=shown
        )
    cut = int(np.sum(outputs["source_truncated"]))
    if cut:  # their translations cover a part of the source: the scores count them as they are
        print(
            f"{cut} of {len(sources)} held-out sources had more than --max-length "
            f"{args.max_length} pieces: each was cut to its first {args.max_length}"
        )
    return sources, references, hypotheses, outputs, score_translations(hypotheses, references)

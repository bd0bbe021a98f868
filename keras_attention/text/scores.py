"""Corpus-level translation scores (BLEU and chrF) computed by sacrebleu.

sacrebleu is imported only when a score is asked for, so the rest of the
package works without it.
"""


def _import_sacrebleu():
    try:
        import sacrebleu
    except ImportError as error:
        raise ImportError(
            "Translation scores need the sacrebleu package. Install it with "
            "`pip install sacrebleu`."
        ) from error
    return sacrebleu


def _as_text(value):
    """Bytes (as `SubwordEncoder.decode(...).numpy()` gives) become str."""
    return value.decode("utf-8") if isinstance(value, bytes) else value


def _texts_and_reference_streams(hypotheses, references):
    """Check the inputs and lay references out as sacrebleu's reference streams."""
    hypotheses = [_as_text(text) for text in hypotheses]
    references = [_as_text(reference) for reference in references]
    if len(references) != len(hypotheses):
        raise ValueError(
            "`references` must hold one entry per hypothesis. Received: "
            f"len(references)={len(references)} for len(hypotheses)={len(hypotheses)}"
        )
    if not hypotheses:
        raise ValueError("`hypotheses` must not be empty. Received: hypotheses=[]")
    if not all(isinstance(text, str) for text in hypotheses):
        raise ValueError(
            f"`hypotheses` must be strings. Received: hypotheses={hypotheses[:3]!r}..."
        )
    if all(isinstance(reference, str) for reference in references):
        return hypotheses, [references]
    # Several references per hypothesis: sacrebleu wants one stream per rank.
    alternatives = [[_as_text(text) for text in reference] for reference in references]
    counts = {len(alternative) for alternative in alternatives}
    if len(counts) != 1 or not all(isinstance(t, str) for a in alternatives for t in a):
        raise ValueError(
            "`references` must be strings, or lists of strings of the same length. "
            f"Received: references={references[:3]!r}..."
        )
    return hypotheses, [list(stream) for stream in zip(*alternatives)]


def corpus_bleu(hypotheses, references):
    """Corpus BLEU (sacrebleu defaults: 13a tokenization, exponential smoothing).

    N-gram orders that no hypothesis is long enough to have are left out
    (sacrebleu's `effective_order`): a corpus of three-word captions is
    scored on 1- to 3-grams instead of 0 by construction. Wherever a
    hypothesis has four tokens, this is sacrebleu's standard corpus BLEU.

    Args:
        hypotheses: list of translated sentences (str or UTF-8 bytes).
        references: one reference sentence per hypothesis, or one list of
            several references per hypothesis (the same number for all).

    Returns:
        float in [0, 100].

    Example:

    >>> from keras_attention.text.scores import corpus_bleu
    >>> round(corpus_bleu(["the cat sat on the mat"], ["the cat sat on the mat"]), 6)
    100.0
    >>> round(corpus_bleu(["the cat sat on the mat"], ["the cat sat on a mat"]), 2)
    53.73
    >>> round(corpus_bleu(["a red circle"], ["a red circle"]), 6)
    100.0
    """
    return _corpus_score("BLEU", hypotheses, references, effective_order=True)


def _corpus_score(metric, hypotheses, references, **options):
    """`sacrebleu.metrics.<metric>(**options).corpus_score(...).score` as a float."""
    sacrebleu = _import_sacrebleu()
    hypotheses, streams = _texts_and_reference_streams(hypotheses, references)
    return float(
        getattr(sacrebleu.metrics, metric)(**options).corpus_score(hypotheses, streams).score
    )


def corpus_chrf(hypotheses, references):
    """Corpus chrF (character n-gram F-score, sacrebleu defaults), in [0, 100].

    Takes the `hypotheses` and `references` of `corpus_bleu`.

    Example:

    >>> from keras_attention.text.scores import corpus_chrf
    >>> round(corpus_chrf(["el perro come"], ["el perro come"]), 6)
    100.0
    """
    return _corpus_score("CHRF", hypotheses, references)

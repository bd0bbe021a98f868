"""Captioning held-out images and scoring the captions against their references.

Sources with several captions per image (Flickr8k, COCO) repeat the image
once per caption, one after the other; `caption_split` captions each image
once and gathers its captions as its references. `caption_scores` gives
corpus BLEU and the share of exact captions (BLEU counts up to 4-grams, and
only the orders the captions are long enough to have: three-word captions are
scored on 1- to 3-grams).

Example:

>>> from keras_attention.tasks.captioning.evaluation import caption_scores
>>> bleu, exact = caption_scores(["a red circle"], [["a red circle", "a circle"]])
>>> exact
1.0
"""

import numpy as np

from keras_attention.progress import ProgressBar
from keras_attention.text.scores import corpus_bleu
from keras_attention.validation import check_positive_int

# Images captioned at once.
EVALUATION_BATCH_SIZE = 50


def _image_groups(pairs):
    """`(image, [captions])` of each run of consecutive pairs of one image."""
    image, texts = None, []
    for next_image, text in pairs.as_numpy_iterator():
        if image is not None and np.array_equal(image, next_image):
            texts.append(text.decode("utf-8"))
            continue
        if image is not None:
            yield image, texts
        image, texts = next_image, [text.decode("utf-8")]
    if image is not None:
        yield image, texts


def caption_split(
    caption,
    pairs,
    limit=None,
    batch_size=EVALUATION_BATCH_SIZE,
    progress=None,
    keep_images=None,
    keep_attention=None,
):
    """Captions of the images of `pairs` with their references, one entry per image.

    The pairs are read once, `batch_size` images at a time: memory holds one
    batch of images, the first `keep_images` and the attention maps of the
    first `keep_attention`, whatever the split's size.

    Args:
        caption: `caption(images)` returns `(captions, attention, words)`, as
            `model.caption(..., return_attention=True)` does.
        pairs: a `tf.data.Dataset` of `(image, caption)`, the captions of
            one image next to each other.
        limit: the pairs read at most (None: all).
        batch_size: images captioned per call of `caption`.
        progress: None, or an object whose `add(count)` is called with the
            images of each batch captioned (a `ProgressBar`).
        keep_images: the first images returned (None: all of them).
        keep_attention: the first images whose attention maps are returned
            (None: all of them).

    Returns:
        `(images, references, hypotheses, outputs)`: lists of the first
        `keep_images` images, of every image's reference captions (str) and
        of its generated caption, and dict "attention" (the attention maps
        of the first `keep_attention` images, concatenated) and "words"
        (the generated words of each caption).

    Example:

    >>> import numpy as np
    >>> import tensorflow as tf
    >>> from keras_attention.tasks.captioning.evaluation import caption_split
    >>> pairs = tf.data.Dataset.from_tensor_slices(
    ...     (np.zeros((2, 4, 4, 3)), ["a circle", "one circle"]))
    >>> def caption(images):
    ...     return ["x"] * len(images), np.ones((len(images), 1, 2, 2)), [["x"]] * len(images)
    >>> images, references, hypotheses, outputs = caption_split(caption, pairs)
    >>> references, hypotheses, outputs["attention"].shape
    ([['a circle', 'one circle']], ['x'], (1, 1, 2, 2))
    """
    check_positive_int("limit", limit, allow_none=True)
    check_positive_int("batch_size", batch_size)
    check_positive_int("keep_images", keep_images, allow_none=True)
    check_positive_int("keep_attention", keep_attention, allow_none=True)
    if limit is not None:
        pairs = pairs.take(limit)
    kept, references, hypotheses, attention, words, batch = [], [], [], [], [], []

    def caption_batch():
        batch_captions, batch_attention, batch_words = caption(np.stack(batch))
        kept_maps = None if keep_attention is None else max(0, keep_attention - len(hypotheses))
        hypotheses.extend(batch_captions)
        attention.append(np.asarray(batch_attention)[:kept_maps])
        words.extend(batch_words)
        if progress is not None:
            progress.add(len(batch))
        batch.clear()

    for image, texts in _image_groups(pairs):
        references.append(texts)
        batch.append(image)
        if keep_images is None or len(kept) < keep_images:
            kept.append(image)
        if len(batch) == batch_size:
            caption_batch()
    if batch:
        caption_batch()
    outputs = {"attention": np.concatenate(attention) if attention else np.zeros(0), "words": words}
    return kept, references, hypotheses, outputs


def caption_with_model(
    model,
    encoder,
    pairs,
    max_length,
    beam_width=1,
    limit=None,
    batch_size=EVALUATION_BATCH_SIZE,
    num_images=None,
    keep_images=None,
    keep_attention=None,
):
    """`caption_split` with a captioner's `caption` method: greedy or beam search, with maps.

    Args:
        model: a captioner with `caption(images, encoder, max_length=, beam_width=,
            return_attention=True, decode_batch_size=)` (`ImageCaptioner`).
        encoder: the captions' tokenizer.
        pairs: a `tf.data.Dataset` of `(image, caption)`.
        max_length: caption tokens generated at most.
        beam_width: 1 for greedy search, more for beam search.
        limit: the pairs read at most (None: all).
        batch_size: images captioned at once.
        num_images: the images of `pairs`, for the progress bar (None: unknown).
        keep_images: the first images returned (None: all).
        keep_attention: the first images whose attention maps are returned
            (None: all).

    Returns:
        as `caption_split`.
    """

    def caption(images):
        return model.caption(
            images,
            encoder,
            max_length=max_length,
            beam_width=beam_width,
            return_attention=True,
            decode_batch_size=batch_size,
        )

    search = "greedy search" if beam_width == 1 else f"beam search of width {beam_width}"
    with ProgressBar(f"captioning the test images ({search})", num_images, "images") as bar:
        return caption_split(caption, pairs, limit, batch_size, bar, keep_images, keep_attention)


def bleu_references(references):
    """The references of each image, the first repeated to give all the same number.

    sacrebleu wants the same number of references for every hypothesis; a
    repeated reference changes no n-gram count.

    Example:

    >>> from keras_attention.tasks.captioning.evaluation import bleu_references
    >>> bleu_references([["a red circle", "a circle"], ["a square"]])
    [['a red circle', 'a circle'], ['a square', 'a square']]
    """
    most = max(len(texts) for texts in references)
    return [texts + texts[:1] * (most - len(texts)) for texts in references]


def caption_scores(hypotheses, references):
    """Corpus BLEU and the share of captions equal to one of their references.

    Args:
        hypotheses: one generated caption per image.
        references: a list of reference captions per image.

    Returns:
        `(bleu, exact)`: BLEU in [0, 100] (sacrebleu), exact in [0, 1].
    """
    if len(hypotheses) != len(references) or not hypotheses:
        raise ValueError(
            "`hypotheses` and `references` must have one entry per image, at least one. "
            f"Received: {len(hypotheses)} hypotheses and {len(references)} references"
        )
    bleu = corpus_bleu(hypotheses, bleu_references(references))
    exact = float(np.mean([text in texts for text, texts in zip(hypotheses, references)]))
    return bleu, exact

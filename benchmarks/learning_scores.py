"""Scores of exported SavedModels on held-out data: what the learning benchmark reports.

- captioning: exact match (the caption string equals the reference), corpus
  BLEU (sacrebleu; n-gram orders longer than every caption left out), and
  the attention peak on the named object: for every
  generated word that names an object, the argmax cell of that word's
  attention map, mapped to image coordinates (the cell's centre), lies in
  that object's box. `chance` is the same rate for a cell drawn uniformly.
- classification: accuracy of the `labels` output.
- translation: exact string match, corpus BLEU and chrF (sacrebleu) of the
  `translation` output.

Everything but `load_serving` works on numpy arrays and strings, so the
rules can be checked without a model.

Example:

>>> import numpy as np
>>> from benchmarks.learning_scores import attention_peak_in_box
>>> attention = np.zeros((2, 4)); attention[1, 3] = 1.0  # a 2 x 4 grid, peak bottom right
>>> attention_peak_in_box(attention, (16, 32), [8, 24, 16, 32])  # box rows 8-15, cols 24-31
True
"""

import importlib.util

import numpy as np


def load_serving(path):
    """`serving_default` of a SavedModel, as a function of keyword tensors.

    Translators exported with a tensorflow-text tokenizer need its ops
    registered before loading; it is imported when installed.

    Example:

    >>> import tempfile, tensorflow as tf
    >>> from benchmarks.learning_scores import load_serving
    >>> module = tf.Module()
    >>> module.f = tf.function(lambda x: {"y": 2 * x}, input_signature=[tf.TensorSpec(None)])
    >>> with tempfile.TemporaryDirectory() as path:
    ...     tf.saved_model.save(module, path, signatures={"serving_default": module.f})
    ...     float(load_serving(path)(x=tf.constant(3.0))["y"])
    6.0
    """
    if importlib.util.find_spec("tensorflow_text") is not None:
        import tensorflow_text  # noqa: F401  (registers its ops for loading)
    from keras_attention.serving.serving_signature import load_serving_signature

    loaded, function = load_serving_signature(path)

    def serve(**inputs):
        return function(**inputs)

    serve.loaded = loaded  # keeps the variables alive as long as the function
    return serve


def _text(value):
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def word_rows(tokens, caption):
    """The attention row (token index) at which each word of `caption` was chosen.

    Rows stand for the produced tokens (`caption_tokens`); a word's row is
    that of the token holding its first character. When the tokens do not
    spell the caption (or are not given), word `k` is taken to be row `k`.

    Args:
        tokens: sequence of str (or bytes) pieces, "" after the end, or None.
        caption: the decoded caption.

    Returns:
        list of int, one per space-separated word of `caption`.

    Example:

    >>> from benchmarks.learning_scores import word_rows
    >>> word_rows(["one", " thr", "ee", " five", "", ""], "one three five")
    [0, 1, 3]
    >>> word_rows(None, "one three")
    [0, 1]
    """
    words = caption.split()
    if tokens is None:
        return list(range(len(words)))
    pieces = [_text(piece) for piece in tokens]
    if "".join(pieces).strip() != caption.strip():
        return list(range(len(words)))
    owner = []  # the token of every character of the joined pieces
    for index, piece in enumerate(pieces):
        owner.extend([index] * len(piece))
    joined = "".join(pieces)
    rows, position = [], 0
    for word in words:
        position = joined.index(word, position)
        rows.append(owner[position])
        position += len(word)
    return rows


def _cell_centres(grid, image_size):
    """Image coordinates (row, col) of the centres of a `grid` of cells."""
    (h, w), (height, width) = grid, image_size
    return (np.arange(h) + 0.5) * height / h, (np.arange(w) + 0.5) * width / w


def attention_peak_in_box(attention, image_size, box):
    """Whether the argmax cell of an `(h, w)` map has its centre inside `box`.

    Args:
        attention: array `(h, w)` over the feature grid.
        image_size: `(height, width)` of the image the grid covers.
        box: `[row0, col0, row1, col1]`, end exclusive, in image pixels.

    Returns:
        bool.

    Example:

    >>> import numpy as np
    >>> from benchmarks.learning_scores import attention_peak_in_box
    >>> attention_peak_in_box(np.eye(3), (30, 30), [0, 0, 10, 10])  # ties: the first cell
    True
    """
    attention = np.asarray(attention)
    i, j = np.unravel_index(int(np.argmax(attention)), attention.shape)
    rows, cols = _cell_centres(attention.shape, image_size)
    row0, col0, row1, col1 = box
    return bool(row0 <= rows[i] < row1 and col0 <= cols[j] < col1)


def _box_chance(grid, image_size, box):
    """Share of the grid's cells whose centre lies in `box`."""
    rows, cols = _cell_centres(grid, image_size)
    row0, col0, row1, col1 = box
    inside_rows = np.count_nonzero((rows >= row0) & (rows < row1))
    inside_cols = np.count_nonzero((cols >= col0) & (cols < col1))
    return inside_rows * inside_cols / (len(rows) * len(cols))


def attention_on_named_objects(
    captions, references, attention, tokens, boxes, image_size, object_words
):
    """Attention-peak hits of the generated words that name an object.

    The `k`-th generated occurrence of an object word is matched with its
    `k`-th occurrence among the reference's object words, whose box is
    `boxes[i][m]` for the `m`-th object word of the reference; generated
    object words with no such occurrence are not counted.

    Args:
        captions: generated captions, list of str.
        references: reference captions, list of str.
        attention: array `(B, T, h, w)`.
        tokens: array `(B, T)` of produced pieces, or None.
        boxes: per image, the boxes of the reference's object words in order.
        image_size: `(height, width)` of the images the model was given.
        object_words: the words that name objects.

    Returns:
        dict with "hits", "words" (counted), "fraction" (None without any
        counted word) and "chance" (mean share of cells inside the boxes).

    Example:

    >>> import numpy as np
    >>> from benchmarks.learning_scores import attention_on_named_objects
    >>> attention = np.zeros((1, 3, 1, 2)); attention[0, 0, 0, 0] = attention[0, 1, 0, 0] = 1
    >>> result = attention_on_named_objects(
    ...     ["one two"], ["one two"], attention, None, [[[0, 0, 8, 8], [0, 8, 8, 16]]],
    ...     (8, 16), {"one", "two"})
    >>> result["hits"], result["words"], result["fraction"], result["chance"]
    (1, 2, 0.5, 0.5)
    """
    object_words = set(object_words)
    attention = np.asarray(attention)
    hits = counted = 0
    chances = []
    for index, (caption, reference) in enumerate(zip(captions, references)):
        named = [word for word in reference.split() if word in object_words]
        rows = word_rows(None if tokens is None else tokens[index], caption)
        seen = {}
        for word, row in zip(caption.split(), rows):
            if word not in object_words:
                continue
            occurrence = seen.get(word, 0)
            seen[word] = occurrence + 1
            matches = [m for m, name in enumerate(named) if name == word]
            if occurrence >= len(matches) or row >= attention.shape[1]:
                continue
            box = boxes[index][matches[occurrence]]
            counted += 1
            hits += attention_peak_in_box(attention[index, row], image_size, box)
            chances.append(_box_chance(attention.shape[2:], image_size, box))
    return {
        "hits": int(hits),
        "words": int(counted),
        "fraction": hits / counted if counted else None,
        "chance": float(np.mean(chances)) if chances else None,
    }


def corpus_scores(hypotheses, references):
    """Exact match, BLEU and chrF of strings against one reference each.

    BLEU is sacrebleu's corpus BLEU with `effective_order`: n-gram orders
    that no hypothesis has (4-grams of three-word captions) are left out
    instead of making the score 0; with every order present it is the
    standard corpus BLEU.

    Example:

    >>> from benchmarks.learning_scores import corpus_scores
    >>> scores = corpus_scores(["15.04.1957", "1.1.2000"], ["15.04.1957", "01.01.2000"])
    >>> scores["exact_match"], scores["count"]
    (0.5, 2)
    """
    import sacrebleu
    from sacrebleu.metrics import BLEU

    hypotheses = [_text(h) for h in hypotheses]
    references = [_text(r) for r in references]
    exact = [h == r for h, r in zip(hypotheses, references)]
    return {
        "exact_match": float(np.mean(exact)) if exact else None,
        "bleu": BLEU(effective_order=True).corpus_score(hypotheses, [references]).score,
        "chrf": sacrebleu.corpus_chrf(hypotheses, [references]).score,
        "count": len(exact),
    }


def _batches(count, size):
    return [slice(start, min(start + size, count)) for start in range(0, count, size)]


def score_captioner(serve, images, references, boxes, object_words, batch_size=32):
    """Caption held-out images with an exported captioner and score it.

    Args:
        serve: `load_serving` of a captioner export (`images` -> `caption`,
            `attention`, optionally `caption_tokens`).
        images: float32 array `(N, H, W, 3)` in 0..255.
        references: list of N reference captions.
        boxes: per image, the boxes of the reference's object words.
        object_words: the words that name objects.
        batch_size: images per call.

    Returns:
        dict of `corpus_scores` plus "attention_on_object" (fraction),
        "attention_chance", "attention_words" and a few "samples".
    """
    import tensorflow as tf

    captions, attention, tokens = [], [], []
    for part in _batches(len(images), batch_size):
        outputs = serve(images=tf.constant(images[part], dtype=tf.float32))
        captions += [_text(c) for c in outputs["caption"].numpy()]
        if "attention" in outputs:
            attention.append(outputs["attention"].numpy())
        if "caption_tokens" in outputs:
            tokens.append(outputs["caption_tokens"].numpy())
    scores = corpus_scores(captions, references)
    if attention:
        on_objects = attention_on_named_objects(
            captions,
            references,
            np.concatenate(attention),
            np.concatenate(tokens) if tokens else None,
            boxes,
            images.shape[1:3],
            object_words,
        )
        scores.update(
            attention_on_object=on_objects["fraction"],
            attention_chance=on_objects["chance"],
            attention_words=on_objects["words"],
        )
    scores["samples"] = [
        {"reference": r, "caption": c} for r, c in list(zip(references, captions))[:5]
    ]
    return scores


def score_classifier(serve, images, labels, batch_size=64):
    """Accuracy of an exported classifier's `labels` output against label strings.

    Example:

    >>> import numpy as np, tensorflow as tf
    >>> from benchmarks.learning_scores import score_classifier
    >>> serve = lambda images: {"labels": tf.where(
    ...     tf.reduce_mean(images, axis=[1, 2, 3]) > 100, "light", "dark")}
    >>> images = np.stack([np.zeros((4, 4, 3)), np.full((4, 4, 3), 200.0)])
    >>> score_classifier(serve, images, ["dark", "dark"])["accuracy"]
    0.5
    """
    import tensorflow as tf

    predicted = []
    for part in _batches(len(images), batch_size):
        outputs = serve(images=tf.constant(images[part], dtype=tf.float32))
        predicted += [_text(label) for label in outputs["labels"].numpy()]
    correct = [p == t for p, t in zip(predicted, labels)]
    return {"accuracy": float(np.mean(correct)) if correct else None, "count": len(correct)}


def score_translator(serve, sources, references, batch_size=64, max_errors=0):
    """Translate held-out sources with an exported translator and score the strings.

    The first five pairs are kept as `"samples"`; with `max_errors`, the
    first that many wrong translations as `"errors"`.

    Example:

    >>> import tensorflow as tf
    >>> from benchmarks.learning_scores import score_translator
    >>> serve = lambda text: {"translation": tf.strings.upper(text)}
    >>> score_translator(serve, ["ab", "cd"], ["AB", "Cd"])["exact_match"]
    0.5
    """
    import tensorflow as tf

    hypotheses = []
    for part in _batches(len(sources), batch_size):
        outputs = serve(text=tf.constant(sources[part], dtype=tf.string))
        hypotheses += [_text(t) for t in outputs["translation"].numpy()]
    scores = corpus_scores(hypotheses, references)
    scores["samples"] = [
        {"source": s, "reference": r, "translation": h}
        for s, r, h in list(zip(sources, references, hypotheses))[:5]
    ]
    if max_errors:
        wrong = [(s, r, h) for s, r, h in zip(sources, references, hypotheses) if h != r]
        scores["errors"] = [
            {"source": s, "reference": r, "translation": h} for s, r, h in wrong[:max_errors]
        ]
    return scores

"""A translator's attention on held-out sentences, over whole words: plots and one HTML page.

`word_alignments` turns the outputs of a translation function (pieces and a
`(T, S)` alignment per sentence) into words and word-to-word attention;
`draw_alignments` saves one plot per sentence; `write_word_translation_explorer`
writes every attention map a model gives (`attention_examples`) as one page.

Example:

>>> import numpy as np
>>> from keras_attention.tasks.translation.figures import word_alignments
>>> outputs = {
...     "translation": np.array([b"rojo"]),
...     "source_tokens": np.array([[b"a", b" re", b"d", b""]]),
...     "translation_tokens": np.array([[b"ro", b"jo", b""]]),
...     "attention": np.array([[[0.5, 0.25, 0.25, 0.0], [0.0, 0.5, 0.5, 0.0], [0.0] * 4]]),
... }
>>> [(index, source, target, weights.tolist()) for index, source, target, weights
...  in word_alignments(outputs, 3)]
[(0, ['a', 'red'], ['rojo'], [[0.25, 0.75]])]
"""

import os

from keras_attention.text.word_pieces import SPECIAL_TOKENS
from keras_attention.visualization.alignment import plot_alignment
from keras_attention.visualization.explorer.translation import write_translation_explorer
from keras_attention.visualization.explorer.words import whole_word_example
from keras_attention.visualization.explorer.words import words_and_attention
from keras_attention.visualization.figures import save_figure


def word_rules(tokenizer):
    """`{"continuation", "special_tokens"}`: how `tokenizer`'s pieces make words.

    See `keras_attention.text.word_pieces.group_pieces` for the rules.
    """
    return {
        "continuation": getattr(tokenizer, "word_continuation", "leading_space"),
        "special_tokens": getattr(tokenizer, "special_pieces", SPECIAL_TOKENS),
    }


def _pieces(row):
    """Non-empty pieces of one row of a string tensor, as str."""
    pieces = [piece.decode("utf-8", "replace") for piece in row]
    return [piece for piece in pieces if piece]


def word_alignments(outputs, count, tokenizer=None):
    """Whole words and word-to-word attention of the first `count` translations.

    A sentence with nothing to align (an empty source or translation) is
    left out, with a printed line saying so.

    Args:
        outputs: dict of NumPy arrays as a translation function gives them:
            "translation" `(B,)`, "source_tokens" `(B, S)` and
            "translation_tokens" `(B, T)` bytes ("" for padding), and
            "attention" `(B, T, S)`.
        count: the most sentences to align.
        tokenizer: the translator's tokenizer, whose rule joins pieces into
            words (`word_rules`); None: `ReversibleTokenizer`'s.

    Returns:
        list of `(index, source_words, target_words, weights)`, `weights` a
        `(T', S')` array over words.
    """
    alignments = []
    for index in range(min(count, len(outputs["translation"]))):
        source = _pieces(outputs["source_tokens"][index])
        target = _pieces(outputs["translation_tokens"][index])
        if not source or not target:
            print(f"  no alignment for held-out sentence {index}: nothing to align")
            continue
        weights = outputs["attention"][index, : len(target), : len(source)]  # (T, S)
        alignments.append(
            (index, *words_and_attention(source, target, weights, **word_rules(tokenizer)))
        )
    return alignments


def draw_alignments(alignments, output_dir):
    """Saves `alignment_<index>.png` under `output_dir` for each of `word_alignments`.

    Args:
        alignments: list of `(index, source_words, target_words, weights)`.
        output_dir: the folder of the figures.

    Returns:
        list of the paths written, as str.
    """
    paths = []
    for index, source, target, weights in alignments:
        figure = plot_alignment(weights, source, target, title="attention while translating")
        paths.append(str(save_figure(figure, os.path.join(output_dir, f"alignment_{index}.png"))))
    return paths


def write_word_translation_explorer(path, examples, title="Translation attention", tokenizer=None):
    """Writes the examples with a source and a translation, over whole words, as one page.

    Args:
        path: the HTML file to write.
        examples: list of dicts as a translator's `attention_examples` gives
            them (pieces and attention maps), one per held-out sentence.
        title: the page's title.
        tokenizer: the translator's tokenizer, as for `word_alignments`.

    Returns:
        `path`, or None where no example had both a source and a translation
        (and nothing was written).

    Example:

    >>> import numpy as np, pathlib, tempfile
    >>> from keras_attention.tasks.translation.figures import (
    ...     write_word_translation_explorer)
    >>> example = {"source_tokens": ["a", " b"], "target_tokens": ["c"],
    ...            "cross_attention": np.array([[[[0.5, 0.5]]]])}
    >>> page = pathlib.Path(tempfile.mkdtemp()) / "page.html"
    >>> write_word_translation_explorer(page, [example]) == page
    True
    >>> "held-out sentence 0" in page.read_text()
    True
    >>> write_word_translation_explorer(page, [{**example, "target_tokens": []}]) is None
    True
    """
    pages = [
        {
            **whole_word_example(example, **word_rules(tokenizer)),
            "name": f"held-out sentence {index}",
        }
        for index, example in enumerate(examples)
        if example["source_tokens"] and example["target_tokens"]
    ]
    if not pages:
        return None
    write_translation_explorer(path, pages, title=title)
    return path

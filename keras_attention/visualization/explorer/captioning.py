"""The caption explorer: where an image captioner looked for each word."""

from keras_attention.visualization.explorer import inputs
from keras_attention.visualization.explorer.page import encode_array
from keras_attention.visualization.explorer.page import png_data_uri
from keras_attention.visualization.explorer.page import write_page


def write_caption_explorer(path, examples, title=None):
    """Writes an interactive page of a captioner's spatial attention to one HTML file.

    The page opens from disk (no network, no server). It shows the image
    with the attention map of one caption word laid over it, cell by cell
    on the feature grid: the word under the cursor, or the selected one
    (click a word; the prev / next buttons and the left / right arrow keys
    step through the caption). Colours follow viridis from the map's
    smallest to largest weight, labelled on the colour bar (see
    `keras_attention.visualization.explorer.page`); a slider sets the
    overlay's opacity (at 1 the cells show the colour map alone).

    The DOM states what is shown: the root `#explorer` carries
    `data-example` and `data-word` (the word's index); each overlay cell
    carries `data-row`, `data-col` and `data-weight`.

    Args:
        path: the .html file to write (its folder must exist).
        examples: a list of dicts (or one dict), each with
            - "image": (H, W, 3) pixels in 0..255, uint8 or float
              ((H, W) and (H, W, 1) grayscale work too),
            - "words": the T caption words (str or bytes), at least one,
            - "attention": (T, h, w) weights over the (h, w) feature grid,
              one map per word, laid over the whole image,
            - optionally "name": the label in the example picker.
        title: page title; "Caption attention" by default.

    Returns:
        The written `pathlib.Path`.

    Example:

    >>> import pathlib, tempfile
    >>> import numpy as np
    >>> from keras_attention.visualization import write_caption_explorer
    >>> rng = np.random.default_rng(0)
    >>> example = {"image": rng.integers(0, 256, (64, 64, 3), dtype="uint8"),
    ...            "words": ["a", "red", "circle"],
    ...            "attention": rng.dirichlet(np.ones(16), size=3).reshape(3, 4, 4)}
    >>> folder = tempfile.mkdtemp()
    >>> page = write_caption_explorer(pathlib.Path(folder) / "captions.html", example)
    >>> "data:image/png;base64," in page.read_text()
    True
    """
    examples = inputs.as_examples(examples)
    encoded = []
    for index in range(len(examples)):
        pixels = inputs.image_pixels(examples, index)
        words = inputs.tokens(examples, index, "words")
        attention = inputs.weights(
            examples, index, "attention", (len(words), None, None), "(len(words), h, w)"
        )
        encoded.append(
            {
                "name": str(inputs.field(examples, index, "name", f"example {index}")),
                "image": png_data_uri(pixels),
                "size": list(pixels.shape[:2]),
                "words": words,
                "attention": encode_array(attention),
            }
        )
    title = "Caption attention" if title is None else str(title)
    scripts = ("common.js", "overlay.js", "caption.js")
    return write_page(path, title, "caption.html", scripts, {"examples": encoded})

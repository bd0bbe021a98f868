"""The Vision Transformer explorer: attention rollout and every head's map over the image."""

import numpy as np

from keras_attention.visualization.explorer import inputs
from keras_attention.visualization.explorer.page import encode_array
from keras_attention.visualization.explorer.page import png_data_uri
from keras_attention.visualization.explorer.page import write_page
from keras_attention.visualization.rollout import attention_rollout


def _grid_size(examples, index):
    """`examples[index]["grid_size"]` checked as (rows, columns) of positive ints."""
    grid_size = inputs.field(examples, index, "grid_size")
    shape = tuple(grid_size) if hasattr(grid_size, "__len__") else (grid_size,)
    if len(shape) != 2 or not all(
        isinstance(size, (int, np.integer)) and size > 0 for size in shape
    ):
        raise ValueError(
            f"Expected `examples[{index}]['grid_size']` to be (rows, columns) of patches, "
            f"two positive integers. Received: grid_size={grid_size!r}"
        )
    return int(shape[0]), int(shape[1])


def write_vit_explorer(path, examples, title=None):
    """Writes an interactive page of a Vision Transformer's attention to one HTML file.

    The page opens from disk (no network, no server). It shows the image
    with a map over its patch grid; the layer control picks the attention
    rollout (Abnar and Zuidema 2020, computed here with
    `attention_rollout`: heads averaged, residual added, layers multiplied)
    or one layer, and the head control one head or the mean of the heads.
    The map is the class token's row (what the prediction attends to), or
    without a class token the mean of all tokens' rows; clicking a patch
    shows that patch's row instead (what it attends to), clicking it again
    goes back. Colours follow viridis from the map's smallest to largest
    weight, labelled on the colour bar (see
    `keras_attention.visualization.explorer.page`); a slider sets the
    overlay's opacity.

    The DOM states what is shown: the root `#explorer` carries
    `data-example`, `data-layer` ("rollout" or a number), `data-head`
    ("mean" or a number) and `data-query` (the token whose row is shown, or
    "mean"); each overlay cell carries `data-row`, `data-col` and
    `data-weight`.

    Every weight is stored (as float32), so a page grows by about
    5.4 * layers * heads * N**2 bytes per example: some 30 MB for a
    ViT-B/16 at 224 x 224 (12 layers, 12 heads, N = 197), which Chromium
    opens in a few seconds. Slice `attention` to fewer layers or heads for
    lighter pages.

    Args:
        path: the .html file to write (its folder must exist).
        examples: a list of dicts (or one dict), each with
            - "image": (H, W, 3) pixels in 0..255, uint8 or float
              ((H, W) and (H, W, 1) grayscale work too),
            - "label": the class name shown with the image,
            - optionally "probability": the predicted probability of it,
            - "attention": (layers, heads, N, N) weights, first layer first,
              N = rows * columns (+ 1 with a class token),
            - "grid_size": (rows, columns) of the patch grid; patches are
              numbered row by row, as patch embedding flattens them,
            - optionally "has_class_token": whether token 0 is a class
              token (default True),
            - optionally "name": the label in the example picker.
        title: page title; "Vision Transformer attention" by default.

    Returns:
        The written `pathlib.Path`.

    Example:

    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> attention = rng.dirichlet(np.ones(5), size=(2, 3, 5))  # class token + 2 x 2 patches
    >>> example = {"image": np.zeros((32, 32, 3), dtype="uint8"), "label": "cat",
    ...            "probability": 0.9, "attention": attention, "grid_size": (2, 2)}
    >>> page = write_vit_explorer(Path(tempfile.mkdtemp()) / "vit.html", [example])
    >>> page.stat().st_size > 0
    True
    """
    examples = inputs.as_examples(examples)
    encoded = [_encoded_example(examples, index) for index in range(len(examples))]
    title = "Vision Transformer attention" if title is None else str(title)
    scripts = ("common.js", "overlay.js", "vit.js")
    return write_page(path, title, "vit.html", scripts, {"examples": encoded})


def _encoded_example(examples, index):
    """The page's record of `examples[index]`, checked: image, label, weights and rollout."""
    pixels = inputs.image_pixels(examples, index)
    rows, columns = _grid_size(examples, index)
    class_token = bool(inputs.field(examples, index, "has_class_token", True))
    tokens = rows * columns + int(class_token)
    description = "(layers, heads, N, N) with N = grid_size[0] * grid_size[1]" + (
        " + 1 (class token)" if class_token else ""
    )
    attention = inputs.weights(
        examples, index, "attention", (None, None, tokens, tokens), description
    )
    label = inputs.field(examples, index, "label")
    label = label.decode("utf-8", errors="replace") if isinstance(label, bytes) else str(label)
    return {
        "name": str(inputs.field(examples, index, "name", f"example {index}")),
        "label": label,
        "probability": _probability(examples, index),
        "image": png_data_uri(pixels),
        "size": list(pixels.shape[:2]),
        "grid": [rows, columns],
        "classToken": class_token,
        "attention": encode_array(attention),
        "rollout": encode_array(attention_rollout(attention)),  # (N, N)
    }


def _probability(examples, index):
    """The optional probability of `examples[index]` as a float in [0, 1], or None."""
    probability = inputs.field(examples, index, "probability", None)
    if probability is None:
        return None
    try:
        probability = float(probability)
    except (TypeError, ValueError):
        probability = None
    if probability is None or not 0.0 <= probability <= 1.0:
        raise ValueError(
            f"Expected `examples[{index}]['probability']` to be a number in [0, 1]. "
            f"Received: probability={examples[index]['probability']!r}"
        )
    return probability

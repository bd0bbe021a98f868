"""The translation explorer: a translation's attention, example by example, layer by layer."""

from keras_attention.visualization.explorer import inputs
from keras_attention.visualization.explorer.page import encode_array
from keras_attention.visualization.explorer.page import write_page

# Attention kinds: (key in an example, label, query side, key side).
KINDS = (
    ("cross_attention", "cross-attention (target -> source)", "target", "source"),
    ("encoder_attention", "encoder self-attention (source -> source)", "source", "source"),
    ("decoder_attention", "decoder self-attention (target -> target)", "target", "target"),
)


def write_translation_explorer(path, examples, title=None):
    """Writes an interactive page of translation attention to one HTML file.

    The page opens from disk (no network, no server). Its controls pick the
    example, the attention kind (cross-attention, and the encoder and
    decoder self-attention when given), the layer and the head (or the mean
    of the heads), and the view:

    - lines: the query words in a column on the left, the attended words on
      the right, one line per pair whose opacity is the weight (as bertviz
      draws it). Hovering a word shows only its lines and highlights the
      words on the other side by their weight; clicking it keeps it shown.
    - matrix: the heat map of the weights (queries as rows), with a colour
      bar labelled with the smallest and largest weight; hovering a cell
      shows its value.

    Colours follow viridis from the map's smallest to largest weight (see
    `keras_attention.visualization.explorer.page`). Tokens are shown as
    given; to show whole words from subword pieces, pool with
    `words_and_attention` first. The DOM states what is shown: the root
    `#explorer` carries `data-example`, `data-kind`, `data-layer`,
    `data-head` ("mean" or a number) and `data-view`; highlighted tokens and
    matrix cells carry `data-weight`.

    Args:
        path: the .html file to write (its folder must exist).
        examples: a list of dicts (or one dict), each with
            - "source_tokens": the S source words (str or bytes),
            - "target_tokens": the T target words,
            - "cross_attention": (layers, heads, T, S) weights, row t being
              what target word t attended to,
            - optionally "encoder_attention": (layers, heads, S, S) and
              "decoder_attention": (layers, heads, T, T),
            - optionally "name": the label in the example picker.
        title: page title; "Translation attention" by default.

    Returns the written `pathlib.Path`.

    Example:

    >>> import numpy as np
    >>> import pathlib, tempfile
    >>> weights = np.random.default_rng(0).dirichlet(np.ones(3), size=(2, 4, 2))
    >>> example = {"source_tokens": ["la", "maison", "bleue"],
    ...            "target_tokens": ["the", "blue"],
    ...            "cross_attention": weights}  # (layers=2, heads=4, T=2, S=3)
    >>> folder = tempfile.mkdtemp()
    >>> page = write_translation_explorer(pathlib.Path(folder) / "nmt.html", [example])
    >>> page.name, page.read_text().count("<script")
    ('nmt.html', 2)
    """
    examples = inputs.as_examples(examples)
    encoded = [_encoded_example(examples, index) for index in range(len(examples))]
    kinds = [
        {"key": key, "label": label, "query": query_side, "keys": key_side}
        for key, label, query_side, key_side in KINDS
    ]
    title = "Translation attention" if title is None else str(title)
    return write_page(
        path,
        title,
        "translation.html",
        ("common.js", "translation.js"),
        {"kinds": kinds, "examples": encoded},
    )


def _encoded_example(examples, index):
    """The page's record of `examples[index]`: its tokens and each kind of attention given."""
    source = inputs.tokens(examples, index, "source_tokens")
    target = inputs.tokens(examples, index, "target_tokens")
    lengths = {"source": len(source), "target": len(target)}
    attention = {}
    for key, _, query_side, key_side in KINDS:
        if key != "cross_attention" and inputs.field(examples, index, key, None) is None:
            continue
        description = f"(layers, heads, len({query_side}_tokens), len({key_side}_tokens))"
        shape = (None, None, lengths[query_side], lengths[key_side])
        attention[key] = encode_array(inputs.weights(examples, index, key, shape, description))
    return {
        "name": str(inputs.field(examples, index, "name", f"example {index}")),
        "source": source,
        "target": target,
        "attention": attention,
    }

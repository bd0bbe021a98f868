import matplotlib.image
import numpy as np
import pytest
import tensorflow as tf

from keras_attention.visualization.alignment import plot_alignment

SOURCE = ["la", "maison", "bleue", "<end>"]
TARGET = ["the", "blue", "house"]


def _weights(seed=0):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(len(TARGET), len(SOURCE)))
    return np.exp(logits) / np.exp(logits).sum(axis=-1, keepdims=True)


def _tick_texts(labels):
    return [label.get_text() for label in labels]


def test_tokens_label_rows_and_columns():
    weights = _weights()
    figure = plot_alignment(weights, SOURCE, TARGET, title="fr -> en")

    matrix_axes, colorbar_axes = figure.axes
    assert _tick_texts(matrix_axes.get_xticklabels()) == SOURCE
    assert _tick_texts(matrix_axes.get_yticklabels()) == TARGET
    assert figure.get_suptitle() == "fr -> en"
    # Cell (row t, column s) shows the weight of target t on source s.
    np.testing.assert_allclose(matrix_axes.images[0].get_array(), weights)
    assert colorbar_axes.get_ylabel() == "attention weight"


def test_saves_a_readable_png(tmp_path):
    path = tmp_path / "alignment.png"
    plot_alignment(_weights(), SOURCE, TARGET).savefig(path)

    pixels = matplotlib.image.imread(path)
    assert pixels.ndim == 3 and pixels.shape[2] == 4
    assert pixels.shape[0] > 100 and pixels.shape[1] > 100
    assert pixels.std() > 0.0  # something was drawn


def test_accepts_tensors_and_byte_tokens():
    weights = _weights(1)
    figure = plot_alignment(
        tf.constant(weights, dtype="float32"),
        tf.constant(SOURCE).numpy(),  # bytes, as tf.strings returns them
        TARGET,
    )
    assert _tick_texts(figure.axes[0].get_xticklabels()) == SOURCE
    np.testing.assert_allclose(figure.axes[0].images[0].get_array(), weights, rtol=1e-6)


def test_rejects_weights_that_do_not_match_the_tokens():
    with pytest.raises(
        ValueError,
        match=r"\(len\(target_tokens\), len\(source_tokens\)\) = \(3, 4\)\. Received: weights.shape=\(3, 5\)",
    ):
        plot_alignment(np.zeros((3, 5)), SOURCE, TARGET)
    with pytest.raises(ValueError, match=r"Received: weights.shape=\(4, 3\)"):
        plot_alignment(np.zeros((4, 3)), SOURCE, TARGET)
    with pytest.raises(ValueError, match=r"Received: weights.shape=\(12,\)"):
        plot_alignment(np.zeros(12), SOURCE, TARGET)


def test_rejects_bad_token_sequences():
    with pytest.raises(
        ValueError,
        match="Expected `source_tokens` to be a sequence of strings.*Received: source_tokens='la maison'",
    ):
        plot_alignment(np.zeros((3, 9)), "la maison", TARGET)
    with pytest.raises(
        ValueError,
        match=r"`weights` to be empty for an empty target_tokens. "
        r"Received: weights.shape=\(1, 4\)",
    ):
        plot_alignment(np.zeros((1, 4)), SOURCE, [])


@pytest.mark.parametrize(
    "source, target, text",
    [
        (SOURCE, [], "empty translation: nothing to align"),
        ([], TARGET, "empty source: nothing to align"),
    ],
)
def test_an_empty_side_draws_a_note_instead_of_failing(source, target, text):
    figure = plot_alignment(np.zeros((len(target), len(source))), source, target, title="t")
    assert [t.get_text() for t in figure.axes[0].texts] == [text]
    assert figure._suptitle.get_text() == "t"

import matplotlib.image
import numpy as np
import pytest
import tensorflow as tf

from keras_attention.visualization.rollout import attention_rollout
from keras_attention.visualization.rollout import plot_head_maps
from keras_attention.visualization.rollout import plot_rollout
from keras_attention.visualization.rollout import rollout_to_image_map


def _random_attention(shape, seed):
    """Row-stochastic attention weights of the given shape (..., N, N)."""
    logits = np.random.default_rng(seed).normal(size=shape)
    return np.exp(logits) / np.exp(logits).sum(axis=-1, keepdims=True)


def _reference_rollout(layers, fuse, discard_ratio=0.0):
    """Abnar and Zuidema's rollout for one example, written out with loops.

    layers: list of (heads, N, N) arrays, first layer first.
    """
    tokens = layers[0].shape[-1]
    result = [[1.0 if i == j else 0.0 for j in range(tokens)] for i in range(tokens)]
    for layer in layers:
        heads = layer.shape[0]
        fused = [[0.0] * tokens for _ in range(tokens)]
        for i in range(tokens):
            for j in range(tokens):
                values = [layer[h, i, j] for h in range(heads)]
                if fuse == "mean":
                    fused[i][j] = sum(values) / heads
                elif fuse == "max":
                    fused[i][j] = max(values)
                else:
                    fused[i][j] = min(values)
        # Zero the lowest off-diagonal entries.
        count = int(discard_ratio * tokens * (tokens - 1))
        off_diagonal = sorted(
            (fused[i][j], i, j) for i in range(tokens) for j in range(tokens) if i != j
        )
        for _, i, j in off_diagonal[:count]:
            fused[i][j] = 0.0
        residual = [
            [0.5 * fused[i][j] + (0.5 if i == j else 0.0) for j in range(tokens)]
            for i in range(tokens)
        ]
        residual = [[value / sum(row) for value in row] for row in residual]
        result = [
            [sum(residual[i][k] * result[k][j] for k in range(tokens)) for j in range(tokens)]
            for i in range(tokens)
        ]
    return np.array(result)


def test_rollout_of_identity_attention_is_identity():
    identity = np.broadcast_to(np.eye(5), (3, 5, 5))  # 3 heads
    np.testing.assert_allclose(attention_rollout([identity] * 4), np.eye(5), atol=1e-12)
    batched = np.broadcast_to(np.eye(5), (2, 3, 5, 5))
    np.testing.assert_allclose(
        attention_rollout([batched, batched]), np.broadcast_to(np.eye(5), (2, 5, 5)), atol=1e-12
    )


def test_one_swap_layer_by_hand():
    # Token 0 attends only to token 1 and vice versa: with the residual each
    # keeps half of itself and takes half of the other.
    swap = np.array([[[0.0, 1.0], [1.0, 0.0]]])
    np.testing.assert_allclose(attention_rollout([swap]), [[0.5, 0.5], [0.5, 0.5]])
    np.testing.assert_allclose(attention_rollout([swap, swap]), [[0.5, 0.5], [0.5, 0.5]])


def test_two_layers_three_tokens_match_the_written_out_formula():
    first = np.array(
        [
            [[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8]],
            [[0.2, 0.2, 0.6], [0.4, 0.4, 0.2], [0.3, 0.3, 0.4]],
        ]
    )
    second = np.array(
        [
            [[0.1, 0.8, 0.1], [0.3, 0.3, 0.4], [0.5, 0.25, 0.25]],
            [[0.7, 0.2, 0.1], [0.1, 0.1, 0.8], [0.2, 0.6, 0.2]],
        ]
    )
    for fuse in ("mean", "max", "min"):
        np.testing.assert_allclose(
            attention_rollout([first, second], head_fusion=fuse),
            _reference_rollout([first, second], fuse),
            atol=1e-12,
        )
    # The first layer acts first: the order of the product matters.
    assert not np.allclose(attention_rollout([first, second]), attention_rollout([second, first]))


@pytest.mark.parametrize("discard_ratio", [0.3, 0.5, 0.9])
def test_discarding_matches_the_written_out_formula(discard_ratio):
    layers = [_random_attention((2, 4, 4), seed) for seed in range(3)]
    np.testing.assert_allclose(
        attention_rollout(layers, discard_ratio=discard_ratio),
        _reference_rollout(layers, "mean", discard_ratio),
        atol=1e-12,
    )


def test_discarding_never_drops_the_diagonal():
    # The diagonal holds the smallest weights, yet it survives any ratio.
    weights = np.array([[[0.01, 0.5, 0.49], [0.6, 0.02, 0.38], [0.3, 0.67, 0.03]]])
    rollout = attention_rollout([weights], discard_ratio=0.99)
    # 0.99 * 6 off-diagonal entries -> the 5 lowest go, only 0.67 stays off the diagonal.
    expected = np.diag([0.505, 0.51, 0.515])
    expected[2, 1] = 0.335
    expected = expected / expected.sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(rollout, expected, atol=1e-12)


def test_rows_sum_to_one_and_batches_match_single_examples():
    layers = [_random_attention((2, 3, 6, 6), seed) for seed in range(4)]  # (B, heads, N, N)
    rollout = attention_rollout(layers, head_fusion="max", discard_ratio=0.2)
    assert rollout.shape == (2, 6, 6)
    np.testing.assert_allclose(rollout.sum(axis=-1), 1.0, atol=1e-12)
    for example in range(2):
        np.testing.assert_allclose(
            rollout[example],
            attention_rollout([layer[example] for layer in layers], "max", 0.2),
            atol=1e-12,
        )


def test_stacked_arrays_and_tensors_match_lists():
    layers = [_random_attention((2, 5, 5), seed) for seed in range(3)]
    expected = attention_rollout(layers)
    np.testing.assert_allclose(attention_rollout(np.stack(layers)), expected, atol=1e-12)
    tensors = [tf.constant(layer, dtype="float32") for layer in layers]
    np.testing.assert_allclose(attention_rollout(tensors), expected, atol=1e-6)


def test_rollout_rejects_bad_arguments():
    layer = _random_attention((2, 3, 3), 0)
    with pytest.raises(
        ValueError, match=r"one of \('mean', 'max', 'min'\). Received: head_fusion='sum'"
    ):
        attention_rollout([layer], head_fusion="sum")
    for ratio in (1.0, -0.1):
        with pytest.raises(
            ValueError, match=rf"number in \[0, 1\). Received: discard_ratio={ratio}"
        ):
            attention_rollout([layer], discard_ratio=ratio)
    with pytest.raises(
        ValueError,
        match=r"attention_maps\[0\].shape=\(2, 3, 3\), attention_maps\[1\].shape=\(2, 4, 4\)",
    ):
        attention_rollout([layer, _random_attention((2, 4, 4), 1)])
    with pytest.raises(ValueError, match=r"attention_maps\[1\].shape=\(1, 2, 3, 3\)"):
        attention_rollout([layer, layer[None]])
    with pytest.raises(ValueError, match=r"attention_maps\[0\].shape=\(2, 3, 4\)"):
        attention_rollout([np.ones((2, 3, 4))])
    with pytest.raises(ValueError, match=r"Received: attention_maps.shape=\(3, 3\)"):
        attention_rollout(np.eye(3))
    with pytest.raises(ValueError, match=r"at least one layer. Received: attention_maps=\[\]"):
        attention_rollout([])
    negative = np.array([[[1.5, -0.5], [0.5, 0.5]]])
    with pytest.raises(
        ValueError,
        match=r"non-negative attention weights. Received: attention_maps\[1\] with min=-0.5, max=1.5",
    ):
        attention_rollout([layer[:, :2, :2], negative])
    with pytest.raises(
        ValueError,
        match=r"finite, non-negative attention weights. Received: attention_maps\[0\] with min=nan",
    ):
        attention_rollout([np.full((1, 2, 2), np.nan)])


def test_image_map_reads_the_class_token_row_in_grid_order():
    rollout = np.arange(49.0).reshape(7, 7)  # class token + 2 x 3 patches
    np.testing.assert_array_equal(
        rollout_to_image_map(rollout, (2, 3)), [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    )
    batched = np.stack([rollout, 2 * rollout])
    np.testing.assert_array_equal(
        rollout_to_image_map(batched, (3, 2)),
        [[[1, 2], [3, 4], [5, 6]], [[2, 4], [6, 8], [10, 12]]],
    )


def test_image_map_without_class_token_averages_all_rows():
    rollout = np.arange(16.0).reshape(4, 4)
    column_means = [
        (0 + 4 + 8 + 12) / 4,
        (1 + 5 + 9 + 13) / 4,
        (2 + 6 + 10 + 14) / 4,
        (3 + 7 + 11 + 15) / 4,
    ]
    np.testing.assert_allclose(
        rollout_to_image_map(rollout, (2, 2), has_class_token=False),
        np.reshape(column_means, (2, 2)),
    )


def test_image_map_rejects_mismatched_grids():
    with pytest.raises(
        ValueError,
        match=r"grid_size\[0\] \* grid_size\[1\] \+ 1 \(class token\) = 5 tokens. Received: rollout.shape=\(4, 4\)",
    ):
        rollout_to_image_map(np.eye(4), (2, 2))
    with pytest.raises(
        ValueError,
        match=r"grid_size\[0\] \* grid_size\[1\] = 4 tokens. Received: rollout.shape=\(5, 5\)",
    ):
        rollout_to_image_map(np.eye(5), (2, 2), has_class_token=False)
    with pytest.raises(ValueError, match=r"Received: rollout.shape=\(4, 5\)"):
        rollout_to_image_map(np.ones((4, 5)), (2, 2))
    with pytest.raises(ValueError, match=r"two positive integers. Received: grid_size=4"):
        rollout_to_image_map(np.eye(5), 4)


def _image():
    return np.random.default_rng(0).integers(0, 256, size=(32, 48, 3), dtype=np.uint8)


def _assert_png(figure, path):
    figure.savefig(path)
    pixels = matplotlib.image.imread(path)
    assert pixels.ndim == 3 and pixels.shape[2] == 4 and pixels.std() > 0.0


def test_plot_rollout_overlays_the_map_on_the_image(tmp_path):
    image = _image()
    rollout_map = np.zeros((2, 3))
    rollout_map[1, 0] = 1.0  # bottom-left patch
    figure = plot_rollout(image, rollout_map, title="cat")
    assert [axes.get_title() for axes in figure.axes] == ["image", "attention rollout"]
    assert figure.get_suptitle() == "cat"
    picture, heat_map = figure.axes[1].images
    assert heat_map.get_array().shape == image.shape[:2]
    assert heat_map.get_extent() == picture.get_extent()
    row, column = np.unravel_index(np.argmax(heat_map.get_array()), image.shape[:2])
    assert row >= 16 and column < 16  # bottom-left patch covers rows 16..31, columns 0..15
    # Edge pixels take their edge patch's value (bilinear resizing clamps at the
    # border), so the colour bar spans exactly 0 to 1 rollout weight.
    (bar_axes,) = figure.axes[1].child_axes
    figure.canvas.draw()
    assert [label.get_text() for label in bar_axes.get_yticklabels()] == ["0", "0.5", "1"]
    _assert_png(figure, tmp_path / "rollout.png")


def test_plot_rollout_rejects_a_batched_map():
    with pytest.raises(ValueError, match=r"Received: rollout_map.shape=\(1, 2, 3\)"):
        plot_rollout(_image(), np.ones((1, 2, 3)))


def test_plot_head_maps_draws_one_panel_per_head(tmp_path):
    image = _image()
    heads, grid = 3, (2, 3)
    attention = np.full((heads, 7, 7), 0.01)
    for head in range(heads):
        attention[head, 0, 1 + 2 * head] = 1.0  # head h: class token -> patch 2h
    figure = plot_head_maps(image, attention, grid, columns=2)
    assert len(figure.axes) == heads
    assert [axes.get_title() for axes in figure.axes] == ["head 0", "head 1", "head 2"]
    for head, axes in enumerate(figure.axes):
        heat_map = axes.images[1].get_array()
        row, column = np.unravel_index(np.argmax(heat_map), image.shape[:2])
        patch_row, patch_column = divmod(2 * head, grid[1])
        assert patch_row * 16 <= row < (patch_row + 1) * 16
        assert patch_column * 16 <= column < (patch_column + 1) * 16
    _assert_png(figure, tmp_path / "heads.png")


def test_plot_head_maps_rejects_bad_input():
    with pytest.raises(
        ValueError, match=r"\(heads, N, N\).*Received: layer_attention.shape=\(1, 2, 7, 7\)"
    ):
        plot_head_maps(_image(), np.ones((1, 2, 7, 7)), (2, 3))
    with pytest.raises(
        ValueError, match=r"= 7 tokens. Received: layer_attention.shape=\(2, 5, 5\)"
    ):
        plot_head_maps(_image(), np.ones((2, 5, 5)), (2, 3))


def _bar_labels(figure, axes_index):
    (bar_axes,) = figure.axes[axes_index].child_axes
    figure.canvas.draw()
    return [label.get_text() for label in bar_axes.get_yticklabels()]


def test_a_nearly_uniform_rollout_is_drawn_nearly_uniform():
    # An untrained ViT's rollout: 196 patches between 0.0576 and 0.0578.
    rollout_map = 0.0576 + 0.0002 * np.random.default_rng(0).random((14, 14))
    rollout_map[0, 0], rollout_map[13, 13] = 0.0576, 0.0578
    figure = plot_rollout(np.zeros((56, 56, 3), np.uint8), rollout_map)
    heat_map = np.asarray(figure.axes[1].images[1].get_array())
    # Colours run from 0 to the largest weight: every pixel is within 0.4% of the top
    # colour, instead of a min-max stretch of the 0.0002 spread over the whole range.
    assert heat_map.min() > 0.996 and heat_map.max() == pytest.approx(1.0)
    assert _bar_labels(figure, 1) == ["0", "0.0289", "0.0578"]


def test_a_peaked_rollout_keeps_its_contrast_from_zero():
    rollout_map = np.full((2, 2), 0.1)
    rollout_map[0, 1] = 0.4
    figure = plot_rollout(np.zeros((32, 32, 3), np.uint8), rollout_map)
    heat_map = np.asarray(figure.axes[1].images[1].get_array())
    assert heat_map.max() == pytest.approx(1.0)
    assert heat_map.min() == pytest.approx(0.25)  # 0.1 of 0.4: a quarter of the top colour
    assert _bar_labels(figure, 1) == ["0", "0.2", "0.4"]


def test_head_maps_are_each_coloured_from_zero():
    attention = np.full((2, 5, 5), 0.2)  # head 0 uniform, head 1 peaked
    attention[1, 0] = [0.2, 0.5, 0.1, 0.1, 0.1]
    figure = plot_head_maps(np.zeros((32, 32, 3), np.uint8), attention, (2, 2))
    uniform = np.asarray(figure.axes[0].images[1].get_array())
    peaked = np.asarray(figure.axes[1].images[1].get_array())
    np.testing.assert_allclose(uniform, 1.0)  # one colour: nothing stands out
    assert peaked.min() == pytest.approx(0.2) and peaked.max() == pytest.approx(1.0)

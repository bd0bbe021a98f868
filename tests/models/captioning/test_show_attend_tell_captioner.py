import keras
import numpy as np
import pytest
from layer_harness import LayerSpec
from layer_harness import harness_test
from model_checks import assert_keras_file_round_trip
from model_checks import assert_summary_lists
from tiny_models import tiny_show_attend_tell_captioner

from keras_attention.losses.doubly_stochastic import DoublyStochasticAttentionRegularizer
from keras_attention.losses.doubly_stochastic import doubly_stochastic_penalty
from keras_attention.models.captioning.show_attend_tell_captioner import ShowAttendTellCaptioner
from keras_attention.models.captioning.show_attend_tell_captioner import caption_attention_model

RNG = np.random.default_rng(0)
IMAGES = RNG.uniform(0, 255, (2, 16, 16, 3)).astype("float32")
CAPTIONS = np.array([[2, 5, 6, 7, 0], [2, 8, 0, 0, 0]])


def _numpy_penalty(alignments, step_mask):
    """Xu et al. eq. 14 per caption: sum_ij (1 - sum_t m_t a_tij)^2."""
    totals = (alignments * step_mask[:, :, None, None]).sum(axis=1)  # (B, h, w)
    return ((1.0 - totals) ** 2).sum(axis=(1, 2))


def test_logits_and_alignments():
    model = tiny_show_attend_tell_captioner()
    logits, alignments = model.caption_attention({"image": IMAGES, "caption": CAPTIONS})
    assert tuple(logits.shape) == (2, 5, 10)
    np.testing.assert_allclose(
        np.asarray(logits), np.asarray(model({"image": IMAGES, "caption": CAPTIONS})), atol=1e-6
    )
    assert keras.backend.standardize_dtype(logits.dtype) == "float32"
    alignments = np.asarray(alignments)
    assert alignments.shape == (2, 5, 4, 4)  # a 4x4 grid for 16-pixel images, stride 4
    np.testing.assert_allclose(alignments.sum(axis=(2, 3)), 1.0, atol=1e-5)
    # The model takes images of any size: they are resized inside.
    assert tuple(model({"image": IMAGES[:, :11], "caption": CAPTIONS}).shape) == (2, 5, 10)


def test_model_adds_the_doubly_stochastic_penalty_over_real_steps():
    model = tiny_show_attend_tell_captioner(doubly_stochastic_lambda=0.7)
    inputs = {"image": IMAGES, "caption": CAPTIONS}
    _, alignments = model.caption_attention(inputs)
    model(inputs)
    (loss,) = model.losses
    step_mask = (CAPTIONS != 0).astype("float64")
    expected = (
        0.7 * _numpy_penalty(np.asarray(alignments, "float64"), step_mask).sum() / step_mask.sum()
    )
    np.testing.assert_allclose(float(loss), expected, rtol=1e-5)


def test_penalty_by_hand():
    # One caption, two steps over a 1x2 grid: step 1 all on the left cell,
    # step 2 split evenly: sums (1.5, 0.5) -> (1 - 1.5)^2 + (1 - 0.5)^2 = 0.5.
    alignments = np.array([[[[1.0, 0.0]], [[0.5, 0.5]]]])  # (1, 2, 1, 2)
    np.testing.assert_allclose(np.asarray(doubly_stochastic_penalty(alignments)), [0.5])
    # Padding steps do not count: only step 1 -> (1 - 1)^2 + (1 - 0)^2 = 1.
    mask = np.array([[True, False]])
    np.testing.assert_allclose(np.asarray(doubly_stochastic_penalty(alignments, mask)), [1.0])
    sequence = RNG.dirichlet(np.ones(5), size=(3, 4))  # (B, T, S) sequence alignments
    np.testing.assert_allclose(
        np.asarray(doubly_stochastic_penalty(sequence)),
        ((1.0 - sequence.sum(axis=1)) ** 2).sum(axis=1),
        rtol=1e-5,
    )


def test_penalty_and_regularizer_reject_bad_arguments():
    with pytest.raises(
        ValueError, match=r"`alignments` must be .* Received: alignments.shape=\(2, 3\)"
    ):
        doubly_stochastic_penalty(np.ones((2, 3)))
    with pytest.raises(
        ValueError, match=r"`step_mask` must be \(batch, steps\). Received: step_mask.shape=\(2,\)"
    ):
        doubly_stochastic_penalty(np.ones((2, 3, 4)), np.ones((2,), bool))
    with pytest.raises(
        ValueError, match=r"`strength` must be a number >= 0. Received: strength=-1"
    ):
        DoublyStochasticAttentionRegularizer(strength=-1)


SPECS = [
    LayerSpec(
        "regularizer",
        DoublyStochasticAttentionRegularizer,
        {"strength": 0.5},
        inputs=[
            RNG.normal(size=(2, 3, 4)).astype("float32"),
            RNG.dirichlet(np.ones(6), size=(2, 3)).reshape(2, 3, 2, 3).astype("float32"),
        ],
        tensor_kwargs={"step_mask": np.array([[True, True, False], [True, False, False]])},
        dynamic_axes=[[1], [1, 2, 3]],
        trainable=False,
    )
]


test_regularizer_harness = harness_test(SPECS)


def test_keras_file_round_trip(tmp_path):
    model = tiny_show_attend_tell_captioner(dropout=0.3)
    inputs = {"image": IMAGES, "caption": CAPTIONS}
    restored = assert_keras_file_round_trip(model, inputs, tmp_path, ShowAttendTellCaptioner)
    assert len(restored.losses) == 1
    _, alignments = restored.caption_attention(inputs)
    np.testing.assert_allclose(
        np.asarray(alignments), np.asarray(model.caption_attention(inputs)[1]), atol=1e-6
    )


def test_the_builder_is_the_class_and_summary_lists_the_parts():
    model = tiny_show_attend_tell_captioner()
    assert type(model) is ShowAttendTellCaptioner
    config = model.get_config()
    assert config["units"] == 16 and config["image_size"] == 16
    assert ShowAttendTellCaptioner.from_config(config).count_params() == model.count_params()
    assert_summary_lists(
        model, ("image_encoder", "initial_state", "word_embedding", "attention_decoder")
    )
    assert (model.vocabulary_size, model.max_length, model.max_caption_length) == (10, None, 6)
    assert (model.image_shape, model.grid_size) == ((16, 16), (4, 4))


def test_bad_inputs():
    with pytest.raises(
        ValueError,
        match=r"name 'image' .* expected axis -1 of input shape to have value 3, but received input with shape \(2, 16, 16, 1\)",
    ):
        tiny_show_attend_tell_captioner()({"image": IMAGES[..., :1], "caption": CAPTIONS})
    with pytest.raises(
        ValueError,
        match=r"`model` must be a captioner with a `caption_attention` method, .* Received: model='plain'",
    ):
        caption_attention_model(
            keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)], name="plain")
        )


def test_wide_images_keep_their_aspect_ratio_into_the_attention():
    model = tiny_show_attend_tell_captioner(image_size=(16, 48))
    strips = RNG.uniform(0, 255, (2, 16, 48, 3)).astype("float32")
    _, alignments = caption_attention_model(model)({"image": strips, "caption": CAPTIONS})
    assert tuple(alignments.shape) == (2, 5, 4, 12)  # (B, T, h, w), h != w
    decoder = model
    assert (decoder.grid_size, decoder.image_shape) == ((4, 12), (16, 48))
    state = decoder.encode(strips)
    cache = decoder.initial_cache(state, batch_size=2, max_length=6)
    _, _, attention = decoder.step(np.array([2, 2]), 0, cache, state)
    assert tuple(attention.shape) == (2, 4, 12)

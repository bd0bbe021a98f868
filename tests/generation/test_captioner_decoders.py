import keras
import numpy as np
import pytest
from full_pass_greedy import greedy_by_full_passes
from tiny_models import tiny_show_attend_tell_captioner
from tiny_models import tiny_transformer_captioner

from keras_attention.generation.beam_search import beam_search
from keras_attention.generation.decoding_protocol import captioner_decoder
from keras_attention.generation.decoding_protocol import decoder_for_model
from keras_attention.generation.greedy_search import greedy_search
from keras_attention.models.captioning.show_attend_tell_captioner import ShowAttendTellCaptioner
from keras_attention.models.captioning.transformer_captioner import TransformerCaptioner

START, END, VOCABULARY, MAX_LENGTH = 2, 3, 9, 6
IMAGES = np.random.default_rng(0).uniform(0, 255, (3, 16, 16, 3)).astype("float32")
# A caption fed so far, with one shorter (padded) caption.
PREFIX = np.array([[START, 4, 5, 6, 7], [START, 8, 4, 0, 0], [START, 6, 6, 5, 4]])


def _show_attend_tell():
    return tiny_show_attend_tell_captioner(
        vocabulary_size=VOCABULARY, max_caption_length=MAX_LENGTH
    )


def _transformer(num_layers=2, encoder_layers=1, **heads):
    sizes = dict(vocabulary_size=VOCABULARY, max_caption_length=MAX_LENGTH)
    return tiny_transformer_captioner(
        **sizes, num_layers=num_layers, encoder_layers=encoder_layers, **heads
    )


MODELS = {
    "show_attend_tell": _show_attend_tell,
    "transformer": _transformer,
    "transformer_no_encoder": lambda: _transformer(num_layers=1, encoder_layers=0),
    "transformer_grouped_query": lambda: _transformer(num_heads=4, num_key_value_heads=2),
    "transformer_multi_query": lambda: _transformer(num_layers=1, num_key_value_heads=1),
}


def _step_by_step(decoder, images, prefix):
    """Logits and attention of every position, fed one token at a time through the cache."""
    state = decoder.encode(images)
    cache = decoder.initial_cache(state, len(images), MAX_LENGTH)
    logits, attention = [], []
    for index in range(prefix.shape[1]):
        step_logits, cache, step_attention = decoder.step(prefix[:, index], index, cache, state)
        logits.append(np.asarray(step_logits))
        attention.append(np.asarray(step_attention))
    return np.stack(logits, axis=1), np.stack(attention, axis=1)  # (B, T, V), (B, T, h, w)


@pytest.mark.parametrize("name", list(MODELS))
def test_cached_steps_equal_the_model_run_on_the_prefix(name):
    model = MODELS[name]()
    logits, attention = _step_by_step(model, IMAGES, PREFIX)
    expected = np.asarray(model({"image": IMAGES, "caption": PREFIX}))
    real = PREFIX != 0  # padded positions are not decoded
    np.testing.assert_allclose(logits[real], expected[real], atol=1e-4)
    assert attention.shape == (3, 5, 4, 4)  # the 4x4 grid of a 16-pixel image
    np.testing.assert_allclose(attention.sum(axis=(2, 3)), 1.0, atol=1e-5)


def test_show_attend_tell_attention_equals_the_teacher_forced_alignments():
    model = _show_attend_tell()
    logits, attention = _step_by_step(model, IMAGES, PREFIX)
    expected_logits, alignments = model.caption_attention({"image": IMAGES, "caption": PREFIX})
    np.testing.assert_allclose(attention, np.asarray(alignments), atol=1e-5)
    real = PREFIX != 0
    np.testing.assert_allclose(logits[real], np.asarray(expected_logits)[real], atol=1e-4)


def test_transformer_attention_is_the_last_cross_attention_averaged_over_heads():
    model = _transformer()
    _, attention = _step_by_step(model, IMAGES, PREFIX)
    # Run the layers by hand on the whole prefix.
    tokens = model.image_encoder(IMAGES)  # (B, 16, D)
    y = model.caption_embedding(PREFIX)
    y = model.decoder_blocks[0](y, tokens, padding_mask=PREFIX != 0)
    _, _, cross = model.decoder_blocks[1](
        y, tokens, padding_mask=PREFIX != 0, return_attention_scores=True
    )
    expected = np.asarray(cross).mean(axis=1).reshape(3, 5, 4, 4)  # heads averaged, on the grid
    real = PREFIX != 0
    np.testing.assert_allclose(attention[real], expected[real], atol=1e-5)
    _, teacher_forced = model.caption_attention({"image": IMAGES, "caption": PREFIX})
    np.testing.assert_allclose(np.asarray(teacher_forced)[real], expected[real], atol=1e-5)


@pytest.mark.parametrize("name", ["show_attend_tell", "transformer", "transformer_multi_query"])
def test_greedy_search_equals_full_passes_and_returns_grid_attention(name):
    model = MODELS[name]()
    # Biases that make END likely at some point, so that ended rows are tested.
    if name == "show_attend_tell":
        logits_layer = model.word_output.get_layer("logits")
    else:
        logits_layer = model.logits_layer
    kernel, bias = logits_layer.get_weights()
    bias[END] = 0.5
    logits_layer.set_weights([kernel * 4.0, bias])
    tokens, attention = greedy_search(model, IMAGES, START, END, MAX_LENGTH, jit_compile=False)
    tokens, attention = np.asarray(tokens), np.asarray(attention)
    expected = greedy_by_full_passes(model, {"image": IMAGES}, "caption", START, END, MAX_LENGTH)
    np.testing.assert_array_equal(tokens, expected)
    live = tokens != 0
    assert attention.shape == (3, MAX_LENGTH, 4, 4)
    np.testing.assert_allclose(attention.sum(axis=(2, 3))[live], 1.0, atol=1e-5)
    assert np.all(attention[~live] == 0)


def test_beam_search_of_width_one_is_greedy_and_wider_beams_score_no_worse():
    model = _transformer()
    decoder = model
    arguments = dict(start_id=START, end_id=END, max_length=MAX_LENGTH, jit_compile=False)
    greedy_tokens, greedy_attention = greedy_search(decoder, IMAGES, **arguments)
    tokens, attention, _ = beam_search(decoder, IMAGES, beam_width=1, **arguments)
    np.testing.assert_array_equal(np.asarray(tokens), np.asarray(greedy_tokens))
    np.testing.assert_allclose(np.asarray(attention), np.asarray(greedy_attention), atol=1e-6)
    tokens, attention, scores = beam_search(
        decoder, IMAGES, beam_width=3, length_penalty=0.0, **arguments
    )
    assert np.asarray(attention).shape == (3, MAX_LENGTH, 4, 4)
    # Log-probability of the greedy captions, scored by full passes of the model.
    greedy_tokens = np.asarray(greedy_tokens)
    prefix = np.concatenate([np.full((3, 1), START), greedy_tokens[:, :-1]], axis=1)
    log_probs = keras.ops.convert_to_numpy(
        keras.ops.log_softmax(model({"image": IMAGES, "caption": prefix}), axis=-1)
    )
    chosen = np.take_along_axis(log_probs, greedy_tokens[..., None], axis=-1)[..., 0]
    greedy_scores = np.where(greedy_tokens != 0, chosen, 0.0).sum(axis=1)
    assert np.all(np.asarray(scores) >= greedy_scores - 1e-4)


@pytest.mark.parametrize("name", ["show_attend_tell", "transformer", "transformer_grouped_query"])
def test_decodes_a_model_reloaded_from_a_keras_file(name, tmp_path):
    model = MODELS[name]()
    model.save(tmp_path / "captioner.keras")
    reloaded = keras.saving.load_model(tmp_path / "captioner.keras")
    assert type(reloaded) is type(model)  # with its decoding methods
    assert reloaded.get_config() == model.get_config()
    expected = _step_by_step(model, IMAGES, PREFIX[:, :2])
    got = _step_by_step(reloaded, IMAGES, PREFIX[:, :2])
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, atol=1e-6)


def test_xla_compiled_greedy_search_matches_eager():
    model = _show_attend_tell()
    decoder = model
    arguments = dict(start_id=START, end_id=END, max_length=4)
    eager, _ = greedy_search(decoder, IMAGES, jit_compile=False, **arguments)
    compiled, _ = greedy_search(decoder, IMAGES, jit_compile=True, **arguments)
    np.testing.assert_array_equal(np.asarray(compiled), np.asarray(eager))


@pytest.mark.parametrize(
    "name, model_class",
    [("show_attend_tell", ShowAttendTellCaptioner), ("transformer", TransformerCaptioner)],
)
def test_captioners_decode_themselves(name, model_class):
    model = MODELS[name]()
    assert type(model) is model_class
    assert captioner_decoder(model) is model
    assert decoder_for_model(model) is model


def test_captioner_decoder_rejects_other_models():
    other = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, name="dense")], name="other")
    with pytest.raises(
        ValueError,
        match=r"`model` must be a captioner that implements the decoding protocol .* Received: model='other' without \['encode', 'initial_cache', 'step', 'vocabulary_size', 'max_length', 'image_shape', 'grid_size'\]",
    ):
        captioner_decoder(other)


def test_transformer_decoding_cannot_go_past_the_position_table():
    with pytest.raises(
        ValueError, match=r"`max_length` must be at most 6.* Received: max_length=7"
    ):
        greedy_search(_transformer(), IMAGES, START, END, 7)

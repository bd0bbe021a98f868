import keras
import numpy as np
import pytest
import tensorflow as tf
from outside_process import SERVE_IMAGES
from outside_process import run_without_the_package
from outside_process import saved_model_cli_show
from tiny_models import tiny_show_attend_tell_captioner
from tiny_models import tiny_transformer_captioner

from keras_attention.generation.greedy_search import greedy_search
from keras_attention.serving.captioning_export import export_captioner
from keras_attention.serving.captioning_export import make_caption_function
from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
from keras_attention.text.subword_encoder import SubwordEncoder

VOCABULARY = ["[PAD]", "[UNK]", "[START]", "[END]", "a", "red", "blue", "circle", "square"]
IMAGES = np.random.default_rng(0).uniform(0, 255, (3, 24, 20, 3)).astype("float32")
MAX_LENGTH = 5


def _sharpened(model):
    """Larger logits weights, so that different images get different captions."""
    for layer in model.layers:
        if layer.name == "logits":
            kernel, bias = layer.get_weights()
            layer.set_weights([kernel * 8.0, bias])
    return model


def _transformer():
    return _sharpened(tiny_transformer_captioner(vocabulary_size=len(VOCABULARY)))


@pytest.fixture(scope="module")
def transformer():
    """One sharpened transformer captioner for the tests that only read it."""
    # Module fixtures run before the per-test seeding: seed as each test would.
    keras.utils.set_random_seed(0)
    return _transformer()


@pytest.fixture(scope="module")
def exported(transformer, tmp_path_factory):
    """`exported(beam_width)`: the transformer's SavedModel path, written once per beam width."""
    paths = {}

    def export(beam_width=1):
        if beam_width not in paths:
            directory = tmp_path_factory.mktemp(f"captioner_beam_{beam_width}")
            paths[beam_width] = export_captioner(
                transformer,
                directory / "captioner",
                VOCABULARY,
                MAX_LENGTH,
                beam_width,
                decode_batch_size=2,
            )
        return paths[beam_width]

    return export


def _expected(model, images):
    """Greedy decoding in this process, on images resized as the export resizes them."""
    resized = tf.image.resize(images, (16, 16), antialias=True)
    encoder = SubwordEncoder(VOCABULARY)
    tokens, attention = greedy_search(
        model,
        resized,
        encoder.start_id,
        encoder.end_id,
        MAX_LENGTH,
        jit_compile=False,
    )
    return [text.decode("utf-8") for text in encoder.decode(tokens).numpy()], np.asarray(attention)


def test_export_round_trip_without_the_package(tmp_path, transformer, exported):
    model, path = transformer, exported()
    np.save(tmp_path / "images.npy", IMAGES)
    served = run_without_the_package(SERVE_IMAGES, path, tmp_path / "images.npy")
    assert not served["package_imported"]
    captions, attention = _expected(model, IMAGES)
    assert served["caption"] == captions
    np.testing.assert_allclose(np.array(served["attention"]), attention, atol=1e-5)
    assert np.array(served["attention"]).shape == (3, MAX_LENGTH, 4, 4)

    shown = saved_model_cli_show(path)
    assert "signature_def['serving_default']" in shown
    for name in ("images", "caption", "attention", "caption_tokens"):
        assert f"['{name}']" in shown


def test_caption_function_matches_greedy_decoding_and_serves_any_batch():
    model = _sharpened(tiny_show_attend_tell_captioner(vocabulary_size=len(VOCABULARY)))
    caption = make_caption_function(
        model, SubwordEncoder(VOCABULARY), MAX_LENGTH, decode_batch_size=2
    )
    outputs = caption(IMAGES)
    captions, attention = _expected(model, IMAGES)
    assert [text.decode("utf-8") for text in outputs["caption"].numpy()] == captions
    np.testing.assert_allclose(outputs["attention"].numpy(), attention, atol=1e-5)
    # The tokens the attention rows stand for, "" after the end.
    tokens = outputs["caption_tokens"].numpy()
    for row, text in zip(tokens, captions):
        words = [token.decode("utf-8") for token in row if token]
        assert " ".join(word for word in words if word != "[END]") == text
    # One image, and a batch that does not fill the last group.
    assert caption(IMAGES[:1])["caption"].shape == (1,)
    assert caption(np.concatenate([IMAGES] * 2))["attention"].shape == (6, MAX_LENGTH, 4, 4)


def test_bad_requests_and_arguments(transformer):
    model = transformer
    caption = make_caption_function(model, VOCABULARY, MAX_LENGTH, decode_batch_size=2)
    with pytest.raises(
        tf.errors.InvalidArgumentError,
        match=r"`images` must be \(batch, height, width, 3\) .* images.shape=\[1 8 8 1\]",
    ):
        caption(tf.zeros((1, 8, 8, 1)))  # 3 channels only
    with pytest.raises(
        tf.errors.InvalidArgumentError,
        match=r"`images` must be \(batch, height, width, 3\) with height, width > 0",
    ):
        caption(tf.zeros((1, 0, 8, 3)))
    with pytest.raises(
        ValueError, match=r"`max_length` must be at most 6, .* Received: max_length=7"
    ):
        make_caption_function(model, VOCABULARY, 7)
    with pytest.raises(
        ValueError,
        match=r"`encoder` must have one token per model output \(9\). Received: encoder with 5 tokens",
    ):
        make_caption_function(model, VOCABULARY[:5], MAX_LENGTH)
    with pytest.raises(
        ValueError,
        match=r"`encoder` must be a tokenizer with `encode`, `decode`, .* Received: encoder=42 without \['encode'",
    ):
        make_caption_function(model, 42, MAX_LENGTH)
    with pytest.raises(
        ValueError, match=r"`beam_width` must be a positive integer. Received: beam_width=0"
    ):
        make_caption_function(model, VOCABULARY, MAX_LENGTH, beam_width=0)


def test_non_square_model_serves_non_square_attention_with_any_tokenizer(tmp_path):
    # A wide-strip captioner: 16 x 48 pixels, a 4 x 12 grid (not a squashed 4 x 4).
    tokenizer = ReversibleTokenizer.train(["one two three", "three two one"] * 2, 300)
    sizes = dict(vocabulary_size=tokenizer.vocabulary_size, image_size=(16, 48))
    model = _sharpened(tiny_show_attend_tell_captioner(**sizes))
    images = np.random.default_rng(1).uniform(0, 255, (3, 32, 96, 3)).astype("float32")
    path = export_captioner(model, tmp_path / "strip", tokenizer, MAX_LENGTH, decode_batch_size=2)
    outputs = tf.saved_model.load(path).signatures["serving_default"](images=tf.constant(images))
    assert tuple(outputs["attention"].shape) == (3, MAX_LENGTH, 4, 12)
    # The captions are the tokenizer's decoding of greedy search on the resized images.
    resized = tf.image.resize(images, (16, 48), antialias=True)
    tokens, attention = greedy_search(
        model,
        resized,
        tokenizer.start_id,
        tokenizer.end_id,
        MAX_LENGTH,
        jit_compile=False,
    )
    assert outputs["caption"].numpy().tolist() == tokenizer.decode(tokens).numpy().tolist()
    np.testing.assert_allclose(outputs["attention"].numpy(), np.asarray(attention), atol=1e-5)
    # The model's own `caption` answers as the SavedModel does, with the same tokenizer.
    captions, model_attention, words = model.caption(
        images, tokenizer, max_length=MAX_LENGTH, return_attention=True, decode_batch_size=2
    )
    assert captions == [text.decode("utf-8") for text in outputs["caption"].numpy()]
    # Whole words: a piece with a leading space starts a word, any other piece
    # continues it; a word's map is the mean of its pieces' maps.
    served_attention = outputs["attention"].numpy()
    for row, pieces in enumerate(outputs["caption_tokens"].numpy()):
        pieces = [piece.decode("utf-8", errors="replace") for piece in pieces if piece]
        stripped = [piece.strip() for piece in pieces]
        pieces = pieces[: stripped.index("[END]")] if "[END]" in stripped else pieces
        groups = []
        for index, piece in enumerate(pieces):
            if not groups or piece[:1].isspace():
                groups.append([])
            groups[-1].append(index)
        assert words[row] == ["".join(pieces[i] for i in group).strip() for group in groups]
        for word, group in enumerate(groups):
            np.testing.assert_allclose(
                model_attention[row, word], served_attention[row, group].mean(0), atol=1e-5
            )
        assert not model_attention[row, len(groups) :].any()


@pytest.mark.parametrize("beam_width", [1, 3])
def test_model_caption_is_what_the_saved_model_answers(transformer, exported, beam_width):
    model = transformer
    # One load serves both requests.
    serve = tf.saved_model.load(exported(beam_width)).signatures["serving_default"]
    served = serve(images=tf.constant(IMAGES))
    expected = [text.decode("utf-8") for text in served["caption"].numpy()]
    captions = model.caption(IMAGES, VOCABULARY, max_length=MAX_LENGTH, beam_width=beam_width)
    assert captions == expected
    uint8 = IMAGES.astype("uint8")
    served = serve(images=tf.constant(uint8, tf.float32))
    captions, attention, words = model.caption(
        uint8, VOCABULARY, max_length=MAX_LENGTH, beam_width=beam_width, return_attention=True
    )
    assert captions == [text.decode("utf-8") for text in served["caption"].numpy()]
    assert attention.shape == (3, MAX_LENGTH, 4, 4)
    assert [" ".join(row) for row in words] == captions
    # Whole-word pieces here: each word's map is the map served for its token.
    for row, caption_words in enumerate(words):
        count = len(caption_words)
        np.testing.assert_allclose(
            attention[row, :count], served["attention"].numpy()[row, :count], atol=1e-5
        )
        assert not attention[row, count:].any()
    if beam_width == 1:
        # Greedy search by hand on the resized images gives the same captions.
        assert captions == _expected(model, uint8.astype("float32"))[0]


def test_models_without_the_protocol_are_refused():
    plain = keras.Sequential([keras.Input((4, 4, 3)), keras.layers.Flatten()], name="plain")
    with pytest.raises(
        ValueError,
        match=r"`model` must be a captioner that implements the decoding protocol .* Received: model='plain' without \['encode', 'initial_cache', 'step', 'vocabulary_size', 'max_length', 'image_shape', 'grid_size'\]",
    ):
        make_caption_function(plain, VOCABULARY, MAX_LENGTH)
    model = _transformer()
    del model.grid_size
    with pytest.raises(
        ValueError, match=r"Received: model='transformer_captioner' without \['grid_size'\]"
    ):
        export_captioner(model, "unused", VOCABULARY, MAX_LENGTH)


def test_encoder_without_padding_id_zero_is_refused(transformer):
    class Shifted:
        encode = decode = None
        start_id, end_id, pad_id, vocabulary_size = 2, 3, 1, len(VOCABULARY)

    with pytest.raises(
        ValueError, match=r"`encoder` must use id 0 for padding, .* Received: encoder with pad_id=1"
    ):
        make_caption_function(transformer, Shifted(), MAX_LENGTH)

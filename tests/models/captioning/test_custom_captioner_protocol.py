"""A user's own captioner that implements the decoding protocol gets searches, export and plots.

`ColourCaptioner` below shares no layer name with the library's captioners.
Its weights are set by hand, so that the captions are known in advance: an
image with a red patch reads "a red circle", one with a blue patch "a blue
square", and its attention is a softmax of the brightness of the 2 x 2 cells.
"""

import keras
import numpy as np
import tensorflow as tf
from keras import ops

from keras_attention.generation.beam_search import beam_search
from keras_attention.generation.decoding_protocol import captioner_decoder
from keras_attention.generation.greedy_search import greedy_search
from keras_attention.serving.captioning_export import export_captioner
from keras_attention.serving.captioning_export import make_caption_function
from keras_attention.visualization.image_attention import plot_caption_attention

VOCABULARY = ["[PAD]", "[UNK]", "[START]", "[END]", "a", "red", "blue", "circle", "square"]
ID = {token: index for index, token in enumerate(VOCABULARY)}
START, END, MAX_LENGTH = ID["[START]"], ID["[END]"], 5
SHARPNESS = 10.0  # attention logits per unit of cell brightness


def _bigram_logits():
    """Next-token logits given the previous token: 10 for the one that follows it."""
    table = np.zeros((len(VOCABULARY), len(VOCABULARY)), "float32")
    for previous, following in [
        ("[START]", "a"),
        ("red", "circle"),
        ("blue", "square"),
        ("circle", "[END]"),
        ("square", "[END]"),
        ("[END]", "[END]"),
    ]:
        table[ID[previous], ID[following]] = 10.0
    # After "a" the colour is left to the image: 5 each, plus up to 5 from the colour.
    table[ID["a"], [ID["red"], ID["blue"]]] = 5.0
    return table


class ColourCaptioner(keras.Model):
    """Captions by a bigram table plus a term from the image's mean colour."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.vocabulary_size = len(VOCABULARY)
        self.max_length = 6
        self.image_shape = (8, 8)
        self.grid_size = (2, 2)
        self.cell_pool = keras.layers.AveragePooling2D(4, name="cell_pool")
        self.bigram_table = keras.layers.Embedding(
            len(VOCABULARY), len(VOCABULARY), name="bigram_table"
        )
        self.colour_words = keras.layers.Dense(len(VOCABULARY), name="colour_words")

    def set_hand_weights(self):
        self.bigram_table.set_weights([_bigram_logits()])
        kernel = np.zeros((3, len(VOCABULARY)), "float32")
        # A patch a quarter of the image: mean channel 0.25 -> +5 for its colour word.
        kernel[0, ID["red"]] = kernel[2, ID["blue"]] = 20.0
        self.colour_words.set_weights([kernel, np.zeros(len(VOCABULARY), "float32")])

    def encode(self, images):
        cells = self.cell_pool(ops.cast(images, "float32") / 255.0)  # (B, 2, 2, 3)
        return {
            "memory_mask": ops.ones(ops.shape(cells)[:3], "bool"),  # (B, 2, 2)
            "colour_logits": self.colour_words(ops.mean(cells, axis=(1, 2))),  # (B, V)
            "brightness": ops.mean(cells, axis=-1),  # (B, 2, 2)
        }

    def initial_cache(self, encoder_state, batch_size, max_length):
        return {"steps": ops.zeros((batch_size,), "int32")}

    def step(self, token_ids, index, cache, encoder_state):
        logits = self.bigram_table(ops.cast(token_ids, "int32")) + encoder_state["colour_logits"]
        brightness = encoder_state["brightness"]
        flat = ops.reshape(brightness, (ops.shape(brightness)[0], -1))  # (B, h * w)
        attention = ops.reshape(ops.softmax(SHARPNESS * flat, axis=-1), ops.shape(brightness))
        return logits, {"steps": cache["steps"] + 1}, attention

    def call(self, inputs):
        state = self.encode(inputs["image"])
        # (B, T, V): the bigram row of every fed token plus the image's colour term.
        return self.bigram_table(inputs["caption"]) + state["colour_logits"][:, None]


def _model():
    model = ColourCaptioner(name="colour_captioner")
    model({"image": np.zeros((1, 8, 8, 3), "float32"), "caption": np.zeros((1, 1), "int32")})
    model.set_hand_weights()
    return model


def _images():
    """A red patch at the top left, a blue patch at the bottom right (8 x 8 pixels)."""
    images = np.zeros((2, 8, 8, 3), "float32")
    images[0, :4, :4, 0] = 255.0
    images[1, 4:, 4:, 2] = 255.0
    return images


def _expected_attention(images):
    """softmax(SHARPNESS * mean brightness of each 4 x 4 cell), in NumPy."""
    cells = images.reshape(len(images), 2, 4, 2, 4, 3).mean(axis=(2, 4, 5)) / 255.0  # (B, 2, 2)
    scores = np.exp(SHARPNESS * cells.reshape(len(images), 4))
    return (scores / scores.sum(axis=1, keepdims=True)).reshape(len(images), 2, 2)


EXPECTED_TOKENS = [
    [ID["a"], ID["red"], ID["circle"], END, 0],
    [ID["a"], ID["blue"], ID["square"], END, 0],
]


def _argmax_loop(model, images):
    """Greedy decoding by hand over the model's own step outputs."""
    state = model.encode(images)
    cache = model.initial_cache(state, len(images), MAX_LENGTH)
    previous = np.full((len(images),), START)
    tokens, finished = np.zeros((len(images), MAX_LENGTH), int), np.zeros(len(images), bool)
    for index in range(MAX_LENGTH):
        logits, cache, _ = model.step(previous, index, cache, state)
        logits = np.asarray(logits).copy()
        logits[:, 0] = -np.inf  # padding is never produced
        previous = logits.argmax(axis=-1)
        tokens[:, index] = np.where(finished, 0, previous)
        finished |= previous == END
    return tokens


def test_greedy_and_beam_search_decode_a_custom_captioner():
    model, images = _model(), _images()
    assert captioner_decoder(model) is model
    tokens, attention = greedy_search(model, images, START, END, MAX_LENGTH)
    np.testing.assert_array_equal(np.asarray(tokens), EXPECTED_TOKENS)
    np.testing.assert_array_equal(np.asarray(tokens), _argmax_loop(model, images))
    expected = _expected_attention(images)
    attention = np.asarray(attention)
    for position in range(4):  # the three words and the end token
        np.testing.assert_allclose(attention[:, position], expected, atol=1e-6)
    assert np.all(attention[:, 4] == 0)  # after the end
    beam_tokens, beam_attention, _ = beam_search(
        model, images, START, END, MAX_LENGTH, beam_width=3
    )
    np.testing.assert_array_equal(np.asarray(beam_tokens), EXPECTED_TOKENS)
    np.testing.assert_allclose(np.asarray(beam_attention), attention, atol=1e-6)


def test_exported_custom_captioner_captions_images(tmp_path):
    model, images = _model(), _images()
    path = export_captioner(
        model, tmp_path / "colours", VOCABULARY, MAX_LENGTH, decode_batch_size=2
    )
    serve = tf.saved_model.load(path).signatures["serving_default"]
    outputs = serve(images=tf.constant(images))
    assert [text.decode("utf-8") for text in outputs["caption"].numpy()] == [
        "a red circle",
        "a blue square",
    ]
    attention = outputs["attention"].numpy()
    assert attention.shape == (2, MAX_LENGTH, 2, 2)
    np.testing.assert_allclose(attention[:, 0], _expected_attention(images), atol=1e-5)
    # Beam search, and uint8 pixels of another size, resized to the model's 8 x 8.
    caption = make_caption_function(
        model, VOCABULARY, MAX_LENGTH, beam_width=2, decode_batch_size=2
    )
    large = np.repeat(np.repeat(images, 2, axis=1), 2, axis=2)  # (2, 16, 16, 3)
    assert caption(large)["caption"].numpy().tolist() == [b"a red circle", b"a blue square"]


def test_attention_plot_of_a_custom_captioner():
    model, images = _model(), _images()
    tokens, attention = greedy_search(model, images[:1], START, END, MAX_LENGTH)
    words = [VOCABULARY[token] for token in np.asarray(tokens)[0] if token not in (0, END)]
    assert words == ["a", "red", "circle"]
    figure = plot_caption_attention(images[0], np.asarray(attention)[0, : len(words)], words)
    assert [axes.get_title() for axes in figure.axes] == ["", "a", "red", "circle"]
    # Each word's heat map peaks on the red patch, at the top left.
    heat = figure.axes[1].images[-1].get_array()
    row, column = np.unravel_index(np.argmax(heat), heat.shape)
    assert row < heat.shape[0] / 2 and column < heat.shape[1] / 2

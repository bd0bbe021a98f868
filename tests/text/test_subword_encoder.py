"""SubwordEncoder: ids by hand, round trips, tf.function, tf.data and SavedModel."""

import numpy as np
import pytest
import tensorflow as tf

from keras_attention.tasks.translation.builtin_corpus import builtin_translation_pairs
from keras_attention.text.subword_encoder import SubwordEncoder
from keras_attention.text.wordpiece_vocabulary import train_wordpiece_vocabulary

TINY_VOCABULARY = ["[PAD]", "[UNK]", "[START]", "[END]", "el", "gato", "perr", "##o", "##s", "ve"]
PAD, UNK, START, END, EL, GATO, PERR, O, S, VE = range(10)  # noqa: E741  (the piece "##o")


@pytest.fixture(scope="module")
def tiny():
    return SubwordEncoder(TINY_VOCABULARY)


@pytest.fixture(scope="module")
def sentences():
    return [target for _, target in builtin_translation_pairs(num_pairs=400, seed=7)]


@pytest.fixture(scope="module")
def corpus_encoder(sentences):
    # A small vocabulary, so that many words are spelled with "##" pieces.
    return SubwordEncoder(train_wordpiece_vocabulary(sentences, vocabulary_size=80))


def test_encode_by_hand(tiny):
    ids = tiny.encode(["el gato ve el perro", "perros", "el lobo"], 7)
    np.testing.assert_array_equal(
        ids,
        [
            [EL, GATO, VE, EL, PERR, O, PAD],
            [PERR, O, S, PAD, PAD, PAD, PAD],
            [EL, UNK, PAD, PAD, PAD, PAD, PAD],
        ],
    )
    assert ids.dtype == tf.int32


def test_start_end_and_truncation_keep_the_end_token(tiny):
    ids = tiny.encode(["el gato ve el perro", "gato"], 6, add_start=True, add_end=True)
    np.testing.assert_array_equal(
        ids,
        [
            [START, EL, GATO, VE, EL, END],
            [START, GATO, END, PAD, PAD, PAD],
        ],
    )
    np.testing.assert_array_equal(tiny.encode(["el gato ve"], 3), [[EL, GATO, VE]])
    np.testing.assert_array_equal(tiny.encode(["el gato ve"], 3, add_end=True), [[EL, GATO, END]])
    np.testing.assert_array_equal(tiny.encode(["el gato"], 3, add_start=True), [[START, EL, GATO]])


def test_single_string_and_empty_batch(tiny):
    np.testing.assert_array_equal(tiny.encode("perros", 4, add_end=True), [PERR, O, S, END])
    assert tiny.encode([], 5).shape == (0, 5)
    assert tiny.decode([START, PERR, O, S, END]).numpy() == b"perros"


def test_decode_by_hand(tiny):
    ids = [
        [START, EL, PERR, O, S, VE, END, GATO, PAD],  # stops at the first [END]
        [EL, GATO, PAD, PAD, PAD, PAD, PAD, PAD, PAD],  # no [END]: up to the padding
        [START, END, EL, PAD, PAD, PAD, PAD, PAD, PAD],  # empty
        [O, S, UNK, PAD, EL, PAD, PAD, PAD, PAD],  # leading piece kept; padding skipped
    ]
    texts = tiny.decode(np.array(ids, dtype=np.int64)).numpy().tolist()
    assert texts == [b"el perros ve", b"el gato", b"", b"##os [UNK] el"]


def test_round_trip_on_builtin_sentences(corpus_encoder, sentences):
    ids = corpus_encoder.encode(sentences, 96, add_start=True, add_end=True).numpy()
    assert (ids[:, -1] == corpus_encoder.pad_id).all()  # nothing was cut
    assert not (ids == corpus_encoder.unknown_id).any()
    vocabulary = corpus_encoder.vocabulary
    assert any(vocabulary[i].startswith("##") for i in np.unique(ids))
    decoded = [text.decode("utf-8") for text in corpus_encoder.decode(ids).numpy()]
    assert decoded == sentences


def test_inside_tf_function_and_tf_data(corpus_encoder, sentences):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def round_trip(strings):
        ids = corpus_encoder.encode(strings, 48, add_start=True, add_end=True)
        return ids, corpus_encoder.decode(ids)

    batch = sentences[:16]
    concrete = round_trip.get_concrete_function()
    assert concrete.structured_outputs[0].shape.as_list() == [None, 48]
    ids, texts = round_trip(tf.constant(batch))
    np.testing.assert_array_equal(ids, corpus_encoder.encode(batch, 48, True, True))
    assert [text.decode("utf-8") for text in texts.numpy()] == batch

    dataset = tf.data.Dataset.from_tensor_slices(batch).map(lambda s: corpus_encoder.encode(s, 48))
    assert dataset.element_spec.shape.as_list() == [48]
    np.testing.assert_array_equal(
        np.stack(list(dataset.as_numpy_iterator())), corpus_encoder.encode(batch, 48)
    )


def test_serving_signature_survives_saved_model(tiny, tmp_path):
    class Echo(tf.Module):
        def __init__(self, encoder):
            super().__init__()
            self.encoder = encoder

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text")])
        def serve(self, text):
            ids = self.encoder.encode(text, 8, add_start=True, add_end=True)
            return {"ids": ids, "text": self.encoder.decode(ids)}

    module = Echo(tiny)
    tf.saved_model.save(module, str(tmp_path), signatures={"serving_default": module.serve})
    served = tf.saved_model.load(str(tmp_path)).signatures["serving_default"]
    outputs = served(text=tf.constant(["el perro ve", "gatos"]))
    np.testing.assert_array_equal(
        outputs["ids"],
        [
            [START, EL, PERR, O, VE, END, PAD, PAD],
            [START, GATO, S, END, PAD, PAD, PAD, PAD],
        ],
    )
    assert outputs["text"].numpy().tolist() == [b"el perro ve", b"gatos"]


def test_save_load_and_properties(corpus_encoder, tmp_path):
    path = corpus_encoder.save(str(tmp_path / "target"))
    with open(path, encoding="utf-8") as file:
        assert file.read().splitlines() == corpus_encoder.vocabulary
    loaded = SubwordEncoder.load(str(tmp_path / "target"))
    assert loaded.vocabulary == corpus_encoder.vocabulary
    assert (loaded.pad_id, loaded.unknown_id, loaded.start_id, loaded.end_id) == (0, 1, 2, 3)
    assert loaded.vocabulary_size == len(corpus_encoder.vocabulary) <= 80
    custom = SubwordEncoder(
        ["<pad>", "<unk>", "<s>", "</s>", "a"],
        pad_token="<pad>",
        unknown_token="<unk>",
        start_token="<s>",
        end_token="</s>",
    )
    custom.save(str(tmp_path / "custom"))
    reloaded = SubwordEncoder.load(
        str(tmp_path / "custom"),
        pad_token="<pad>",
        unknown_token="<unk>",
        start_token="<s>",
        end_token="</s>",
    )
    np.testing.assert_array_equal(
        reloaded.encode(["a"], 3, add_start=True, add_end=True), [[2, 4, 3]]
    )


@pytest.mark.parametrize(
    "vocabulary, kwargs, message",
    [
        (["[UNK]", "[PAD]", "[START]", "[END]"], {}, r"start with the padding token '\[PAD\]'"),
        (["[PAD]", "[UNK]", "[START]"], {}, r"contain `end_token`. Received: end_token='\[END\]'"),
        (["[PAD]", "[UNK]", "[START]", "[END]", "a", "a"], {}, "distinct non-empty strings"),
        ("[PAD]", {}, r"Received: vocabulary='\[PAD\]'"),
        (
            ["<pad>", "[UNK]", "[START]", "[END]"],
            {"pad_token": "<pad>", "start_token": "<s>"},
            "Received: start_token='<s>'",
        ),
    ],
)
def test_bad_vocabulary_raises(vocabulary, kwargs, message):
    with pytest.raises(ValueError, match=message):
        SubwordEncoder(vocabulary, **kwargs)


def test_bad_calls_raise(tiny, tmp_path):
    with pytest.raises(ValueError, match="Received: sequence_length=2"):
        tiny.encode(["el"], 2, add_start=True, add_end=True)
    with pytest.raises(ValueError, match="Received: sequence_length=0"):
        tiny.encode(["el"], 0)
    with pytest.raises(ValueError, match=r"Received: strings with shape=\(1, 2\)"):
        tiny.encode([["el", "gato"]], 4)
    with pytest.raises(ValueError, match=r"Received: ids with dtype=float32 and shape=\(1, 2\)"):
        tiny.decode(np.zeros((1, 2), np.float32))
    with pytest.raises(ValueError, match=r"Received: ids with dtype=int32 and shape=\(1, 1, 2\)"):
        tiny.decode(np.zeros((1, 1, 2), np.int32))
    with pytest.raises(ValueError, match="Received: directory="):
        SubwordEncoder.load(str(tmp_path / "nothing here"))

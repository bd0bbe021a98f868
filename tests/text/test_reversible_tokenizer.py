"""ReversibleTokenizer: exact round trips (hypothesis), id layout, graphs, SavedModels, files."""

import json
import os
import subprocess
import sys
import textwrap

import hypothesis
import hypothesis.strategies as st
import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_attention.tasks.captioning.builtin_scenes import generate_shape_scenes
from keras_attention.tasks.translation.builtin_corpus import builtin_translation_pairs
from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
from keras_attention.text.tokenizer_files import load_tokenizer
from keras_attention.text.tokenizer_files import save_tokenizer
from keras_attention.text.whitespace import normalize_whitespace
from keras_attention.text.word_pieces import group_pieces

# Each example is a batch of strings: one eager call checks many of them.
PROPERTY_SETTINGS = hypothesis.settings(
    max_examples=80, deadline=None, derandomize=True, database=None
)
# SentencePiece writes a space as U+2581: a "▁" in the text comes back as a space.
WORD_START = "\u2581"
ANY_TEXT = st.text(alphabet=st.characters(blacklist_characters=WORD_START), max_size=40)
PUNCTUATED = [
    "It's 15.04.1957, isn't it? \"Yes\" - 3/4 (ok)!",
    "Das Sonnenblumenfeld liegt am 01.05.2024 um 7:30 Uhr.",
    "¿Dónde está el niño? ¡Allí!",
]


@pytest.fixture(scope="module")
def corpus():
    pairs = builtin_translation_pairs(num_pairs=600, seed=3)
    return [text for pair in pairs for text in pair]


@pytest.fixture(scope="module")
def tokenizer(corpus):
    return ReversibleTokenizer.train(corpus + PUNCTUATED * 20, vocabulary_size=600)


@pytest.fixture(scope="module")
def tiny_tokenizer():
    return ReversibleTokenizer.train(["a"], vocabulary_size=300)  # "a", "▁", "▁a" at most


def _round_trip(tokenizer, texts):
    length = int(tokenizer.tokenize(texts).row_lengths().numpy().max(initial=0)) + 3
    ids = tokenizer.encode(texts, length, add_start=True, add_end=True)
    return [text.decode("utf-8") for text in tokenizer.decode(ids).numpy().tolist()]


def _pieces(tokenizer, text):
    return [tokenizer.vocabulary[i] for i in tokenizer.tokenize([text]).to_list()[0]]


@hypothesis.given(st.lists(ANY_TEXT, min_size=1, max_size=30))
@PROPERTY_SETTINGS
def test_decode_of_encode_is_the_text_for_any_unicode(tokenizer, texts):
    assert _round_trip(tokenizer, texts) == [normalize_whitespace(text) for text in texts]


@hypothesis.given(
    st.lists(
        st.text(
            alphabet=st.characters(codec="utf-8", blacklist_characters=WORD_START), max_size=60
        ),
        min_size=1,
        max_size=30,
    )
)
@PROPERTY_SETTINGS
def test_round_trip_with_a_tiny_vocabulary_spells_with_bytes(tiny_tokenizer, texts):
    assert _round_trip(tiny_tokenizer, texts) == [normalize_whitespace(text) for text in texts]


def test_round_trip_of_every_builtin_corpus_line(tokenizer, corpus):
    assert _round_trip(tokenizer, corpus) == corpus


def test_round_trip_of_every_builtin_caption():
    captions = generate_shape_scenes(300, image_size=48, seed=5, max_objects=3)["captions"]
    caption_tokenizer = ReversibleTokenizer.train(captions[:100], vocabulary_size=400)
    assert _round_trip(caption_tokenizer, captions) == captions


@pytest.mark.parametrize(
    "text, expected",
    [
        ("01.01.35", "01.01.35"),
        ("it's a dog, isn't it?", "it's a dog, isn't it?"),
        ('  "Ça  va?"\n\t– oui ! ', '"Ça va?" – oui !'),
        ("", ""),
        (" \t\n ", ""),
        ("日本語のテキスト、です。", "日本語のテキスト、です。"),
        ("emoji 👍🏽 and e\u0301", "emoji 👍🏽 and e\u0301"),
        ("nul\x00byte", "nul\x00byte"),
        ("[END] <0x41> [PAD]", "[END] <0x41> [PAD]"),  # names of special pieces are text
        ("a\u2028b\u00a0c", "a\u2028b\u00a0c"),  # non-ASCII whitespace is kept
        (f"a{WORD_START}b", "a b"),  # the one documented exception
    ],
)
def test_round_trip_by_hand(tokenizer, text, expected):
    assert _round_trip(tokenizer, [text]) == [expected]


def test_vocabulary_layout(tokenizer):
    vocabulary = tokenizer.vocabulary
    assert vocabulary[:4] == ["[PAD]", "[UNK]", "[START]", "[END]"]
    assert vocabulary[4:260] == [f"<0x{value:02X}>" for value in range(256)]
    assert (tokenizer.pad_id, tokenizer.unknown_id, tokenizer.start_id, tokenizer.end_id) == (
        0,
        1,
        2,
        3,
    )
    assert 300 < tokenizer.vocabulary_size <= 600
    assert len(set(vocabulary)) == len(vocabulary)
    # Learned pieces show the space they stand for, never SentencePiece's mark.
    assert not any(WORD_START in token for token in vocabulary)


def test_small_texts_give_smaller_vocabularies(tiny_tokenizer):
    assert 260 < tiny_tokenizer.vocabulary_size < 300
    assert (
        tiny_tokenizer.tokenize(["a a"]).to_list()[0] == [tiny_tokenizer.vocabulary.index(" a")] * 2
    )


def test_frequent_words_are_single_tokens_and_digits_are_split(tokenizer):
    assert _pieces(tokenizer, "el perro") == [" el", " perro"]
    pieces = _pieces(tokenizer, "el 1957 15.04.2024")
    assert "".join(pieces) == " el 1957 15.04.2024"
    digits = [piece for piece in pieces if any(c.isdigit() for c in piece)]
    assert digits == list("195715042024")  # each digit a piece of its own


def test_unknown_characters_fall_back_to_their_utf8_bytes(tokenizer):
    ids = tokenizer.tokenize(["\u263a"]).to_list()[0]  # not in the training text
    assert ids[1:] == [4 + byte for byte in "\u263a".encode("utf-8")]
    assert tokenizer.vocabulary[ids[0]] == " "  # the word start before it
    assert tokenizer.unknown_id not in tokenizer.tokenize(["\u263a xyzzy"]).flat_values.numpy()


def test_rare_compounds_are_spelled_with_learned_subwords():
    parts = ["Sonnen", "blumen", "feld", "haus", "wasser", "berg", "bahn", "schiff"]
    rng = np.random.default_rng(0)

    def compounds(count):
        words = []
        for _ in range(count):
            chosen = rng.choice(len(parts), size=rng.integers(2, 5), replace=False)
            word = "".join(parts[index] for index in chosen)
            words.append(word[0].upper() + word[1:])
        return words

    training = [f"das {word} ist da" for word in compounds(400)]
    tokenizer = ReversibleTokenizer.train(training, vocabulary_size=330)
    unseen = "das Schiffbergwasserfeld ist da"
    assert unseen not in training
    pieces = _pieces(tokenizer, unseen)
    assert "".join(pieces) == " " + unseen
    assert len(pieces) <= 10, pieces  # each part a token or two, not a token per letter
    assert {"wasser", "feld"} <= set(pieces), pieces
    texts = [f"das {word} ist da" for word in compounds(50)]
    assert _round_trip(tokenizer, texts) == texts


def test_pieces_join_into_the_words_of_the_text(tokenizer, corpus):
    # How plots join pieces into words (`word_continuation`): a piece with a leading
    # space starts a word.
    assert tokenizer.word_continuation == "leading_space"
    for text in corpus[:50] + ["el perro, 15.04.1957!"]:
        words, _ = group_pieces(_pieces(tokenizer, text), tokenizer.word_continuation)
        assert words == text.split(" ")


def test_encode_pads_cuts_and_marks(tokenizer):
    ids = tokenizer.encode(["el gato", ""], 5, add_start=True, add_end=True).numpy()
    assert ids[0].tolist() == [2, *tokenizer.tokenize(["el gato"]).to_list()[0], 3, 0]
    assert ids[1].tolist() == [tokenizer.start_id, tokenizer.end_id, 0, 0, 0]
    cut = tokenizer.encode(["el gato ve el perro"], 3, add_end=True).numpy()
    assert tokenizer.decode(cut).numpy().tolist() == [b"el gato"]
    assert cut[0, -1] == tokenizer.end_id  # the end token keeps its place
    assert tokenizer.encode("el", 4).shape == (4,)


def test_decode_stops_at_end_and_ignores_out_of_range_ids(tokenizer):
    el = tokenizer.vocabulary.index(" el")
    assert tokenizer.decode([el, tokenizer.end_id, el]).numpy() == b"el"
    assert tokenizer.decode([[tokenizer.start_id, el, 10**6, -5, 0, 1]]).numpy().tolist() == [b"el"]


def test_decode_gives_valid_utf8_for_any_ids(tokenizer):
    rng = np.random.default_rng(0)
    ids = rng.integers(0, tokenizer.vocabulary_size, size=(200, 12))
    texts = tokenizer.decode(ids).numpy().tolist()
    assert all(isinstance(text.decode("utf-8"), str) for text in texts)
    e_acute = [4 + byte for byte in "é".encode("utf-8")]
    assert tokenizer.decode([e_acute[0], tokenizer.end_id]).numpy().decode() == "\ufffd"
    assert tokenizer.decode(e_acute).numpy().decode() == "é"


def test_works_in_tf_data_and_tf_function(tokenizer):
    texts = ["el gato.", "¿Quién?"]
    dataset = tf.data.Dataset.from_tensor_slices(texts).map(lambda t: tokenizer.encode(t, 8))
    ids = np.stack(list(dataset.as_numpy_iterator()))
    np.testing.assert_array_equal(ids, tokenizer.encode(texts, 8))
    traced = tf.function(lambda t: tokenizer.decode(tokenizer.encode(t, 8)))
    assert traced(tf.constant(texts)).numpy().tolist() == [t.encode() for t in texts]


def _export_round_trip(tokenizers, path):
    module = tf.Module()
    module.tokenizers = list(tokenizers)  # tracked: their SentencePiece models are saved
    module.round_trip = tf.function(
        lambda text: tf.stack(
            [tokenizer.decode(tokenizer.encode(text, 32, add_end=True)) for tokenizer in tokenizers]
        ),
        input_signature=[tf.TensorSpec([None], tf.string)],
    )
    tf.saved_model.save(module, str(path))


def test_exported_graph_loads_with_tensorflow_text_without_the_package(tokenizer, tmp_path):
    # Two tokenizers in one SavedModel (a translator's source and target): each
    # keeps its own SentencePiece model.
    other = ReversibleTokenizer.train(["x y z", "z y x"], 300)
    _export_round_trip([tokenizer, other], tmp_path / "model")
    text = "It's 01.01.35, ok? x y"
    script = textwrap.dedent(
        f"""
        import sys
        sys.modules["keras_attention"] = None
        import tensorflow as tf
        import tensorflow_text  # registers the SentencePiece op
        loaded = tf.saved_model.load({str(tmp_path / "model")!r})
        out = loaded.round_trip(tf.constant([{text!r}])).numpy().tolist()
        print(out)
        """
    )
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == str([[text.encode()], [text.encode()]])


def test_save_and_load_keep_the_model(tokenizer, tmp_path):
    path = tokenizer.save(str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == [
        "reversible_tokenizer.json",
        "reversible_tokenizer.model",
    ]
    assert open(path, "rb").read() == tokenizer.model_proto
    loaded = ReversibleTokenizer.load(str(tmp_path))
    assert loaded.vocabulary == tokenizer.vocabulary
    texts = PUNCTUATED + ["el perro \u263a"]
    assert loaded.tokenize(texts).to_list() == tokenizer.tokenize(texts).to_list()
    save_tokenizer(tokenizer, str(tmp_path / "noted"))
    assert load_tokenizer(str(tmp_path / "noted")).model_proto == tokenizer.model_proto
    assert load_tokenizer(str(tmp_path)).model_proto == tokenizer.model_proto  # its files alone


def test_load_names_a_missing_or_damaged_file(tokenizer, tmp_path):
    with pytest.raises(
        ValueError,
        match=r"`directory` must hold reversible_tokenizer.model .* Received: directory='.*missing'",
    ):
        ReversibleTokenizer.load(str(tmp_path / "missing"))
    tokenizer.save(str(tmp_path))
    model = tmp_path / "reversible_tokenizer.model"
    model.write_bytes(b"\x0a\x03abc broken")
    with pytest.raises(
        ValueError, match=r"`.*reversible_tokenizer.model` must be a SentencePiece model"
    ):
        ReversibleTokenizer.load(str(tmp_path))
    model.unlink()
    with pytest.raises(
        ValueError, match=r"Received: path='.*reversible_tokenizer.model', which does not exist"
    ):
        ReversibleTokenizer.load(str(tmp_path))
    # A SentencePiece model of another layout (SentencePiece's default ids).
    other = ReversibleTokenizer.train(["a b"], 300).model_proto
    from sentencepiece import sentencepiece_model_pb2

    proto = sentencepiece_model_pb2.ModelProto.FromString(other)
    proto.pieces[0].piece = "<pad>"
    model.write_bytes(proto.SerializeToString())
    with pytest.raises(
        ValueError,
        match=r"`.*reversible_tokenizer.model` must be a SentencePiece model laid out as",
    ):
        ReversibleTokenizer.load(str(tmp_path))
    model.write_bytes(tokenizer.model_proto)
    (tmp_path / "reversible_tokenizer.json").write_text(json.dumps({"vocabulary_size": 7}))
    with pytest.raises(ValueError, match=r"pieces, where reversible_tokenizer.json says 7"):
        ReversibleTokenizer.load(str(tmp_path))


def test_constructor_and_calls_reject_bad_arguments(tokenizer):
    with pytest.raises(ValueError, match=r"`model_proto` must be the bytes .* of type list"):
        ReversibleTokenizer(["[PAD]", "[UNK]", "[START]", "[END]", "a"])
    with pytest.raises(ValueError, match=r"`model_proto` must be a SentencePiece model .* 5 bytes"):
        ReversibleTokenizer(b"12345")
    with pytest.raises(ValueError, match=r"`whole_pieces` .* Received: whole_pieces='yes'"):
        ReversibleTokenizer(tokenizer.model_proto, whole_pieces="yes")
    with pytest.raises(
        ValueError, match=r"`sequence_length` must be .* Received: sequence_length=2"
    ):
        tokenizer.encode(["a"], 2, add_start=True, add_end=True)
    with pytest.raises(ValueError, match=r"`strings` must be .* shape=\(1, 1\)"):
        tokenizer.encode([["a"]], 4)
    with pytest.raises(ValueError, match=r"`ids` must be integer ids .* dtype=float32"):
        tokenizer.decode(np.zeros((1, 2), "float32"))


def test_keeps_working_after_tensorflow_resets_its_seed(tokenizer):
    # `tf.random.set_seed` clears TensorFlow's eager caches, ops included.
    before = tokenizer.tokenize(PUNCTUATED).to_list()
    keras.utils.set_random_seed(7)
    assert tokenizer.tokenize(PUNCTUATED).to_list() == before
    assert _round_trip(tokenizer, PUNCTUATED) == PUNCTUATED

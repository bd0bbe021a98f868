"""ReversibleTokenizer: exact round trips (hypothesis), pieces, fallbacks, graphs and SavedModels."""

import json
import os
import subprocess
import sys
import textwrap
import unicodedata

import hypothesis
import hypothesis.strategies as st
import numpy as np
import pytest
import tensorflow as tf

from keras_attention.tasks.captioning.builtin_scenes import generate_shape_scenes
from keras_attention.tasks.translation.builtin_corpus import builtin_translation_pairs
from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
from keras_attention.text.reversible_tokenizer import normalize_whitespace
from keras_attention.text.reversible_tokenizer import split_pieces

# Each example is a batch of strings: one eager call checks many of them.
PROPERTY_SETTINGS = hypothesis.settings(
    max_examples=80, deadline=None, derandomize=True, database=None
)


@pytest.fixture(scope="module")
def corpus():
    pairs = builtin_translation_pairs(num_pairs=600, seed=3)
    return [text for pair in pairs for text in pair]


@pytest.fixture(scope="module")
def tokenizer(corpus):
    training = corpus + ["It's 15.04.1957, isn't it? \"Yes\" - 3/4 (ok)!"] * 2
    return ReversibleTokenizer.train(training, vocabulary_size=600)


def _round_trip(tokenizer, texts):
    length = int(tokenizer.tokenize(texts).row_lengths().numpy().max(initial=0)) + 3
    ids = tokenizer.encode(texts, length, add_start=True, add_end=True)
    return [text.decode("utf-8") for text in tokenizer.decode(ids).numpy().tolist()]


def _reference_pieces(text):
    """The splitting rule written out in Python with unicodedata, as the docstring states it."""
    text = normalize_whitespace(text)
    pieces = []
    for index, character in enumerate(text):
        letter = unicodedata.category(character)[0] in "LM"
        previous = text[index - 1] if index else None
        follows_space = previous == " "
        continues_letters = (
            letter and previous is not None and unicodedata.category(previous)[0] in "LM"
        )
        if index == 0 or character == " " or not (follows_space or continues_letters):
            pieces.append(character)
        else:
            pieces[-1] += character
    return pieces


@hypothesis.given(st.lists(st.text(max_size=40), min_size=1, max_size=30))
@PROPERTY_SETTINGS
def test_decode_of_encode_is_the_text_for_any_unicode(tokenizer, texts):
    assert _round_trip(tokenizer, texts) == [normalize_whitespace(text) for text in texts]


@pytest.fixture(scope="module")
def tiny_tokenizer():
    return ReversibleTokenizer.train(["a"], vocabulary_size=261)  # one learned token


@hypothesis.given(
    st.lists(st.text(alphabet=st.characters(codec="utf-8"), max_size=60), min_size=1, max_size=30)
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
    ],
)
def test_round_trip_by_hand(tokenizer, text, expected):
    assert _round_trip(tokenizer, [text]) == [expected]


@hypothesis.given(
    st.text(
        alphabet=st.sampled_from(list("abcXYZéñ019 .,;'\"?!-()\t\n") + ["ß", "Ω", "文", "ä"]),
        max_size=40,
    )
)
@PROPERTY_SETTINGS
def test_pieces_follow_the_documented_rule(text):
    pieces = [piece.decode("utf-8") for piece in split_pieces([text]).to_list()[0]]
    assert pieces == _reference_pieces(text)


def test_pieces_by_hand():
    assert split_pieces(["Hi, it's 15.04!", ""]).to_list() == [
        [b"Hi", b",", b" it", b"'", b"s", b" 1", b"5", b".", b"0", b"4", b"!"],
        [],
    ]


def test_frequent_words_are_single_tokens_and_digits_are_split(tokenizer):
    assert "el" in tokenizer.vocabulary and " el" in tokenizer.vocabulary
    ids = tokenizer.tokenize(["el 1957"]).to_list()[0]
    tokens = [tokenizer.vocabulary[i] for i in ids]
    assert tokens[0] == "el" and "".join(tokens) == "el 1957"
    assert [sum(c.isdigit() for c in token) for token in tokens[-4:]] == [1, 1, 1, 1]


def test_unknown_characters_fall_back_to_their_utf8_bytes(tokenizer):
    ids = tokenizer.tokenize(["\u263a"]).to_list()[0]  # not in the training text
    assert ids == [4 + byte for byte in "\u263a".encode("utf-8")]
    assert tokenizer.unknown_id not in tokenizer.tokenize(["\u263a xyzzy"]).flat_values.numpy()


def test_vocabulary_layout_and_size_limit(corpus):
    small = ReversibleTokenizer.train(corpus, vocabulary_size=300)
    assert small.vocabulary_size == 300
    assert small.vocabulary[:4] == ["[PAD]", "[UNK]", "[START]", "[END]"]
    assert small.vocabulary[4] == "<0x00>" and small.vocabulary[259] == "<0xFF>"
    assert (small.pad_id, small.unknown_id, small.start_id, small.end_id) == (0, 1, 2, 3)


def test_encode_pads_cuts_and_marks(tokenizer):
    ids = tokenizer.encode(["el gato", ""], 5, add_start=True, add_end=True).numpy()
    assert ids[0, 0] == tokenizer.start_id and ids[0, 3] == tokenizer.end_id
    assert ids[1].tolist() == [tokenizer.start_id, tokenizer.end_id, 0, 0, 0]
    cut = tokenizer.encode(["el gato ve el perro"], 3, add_end=True).numpy()
    assert tokenizer.decode(cut).numpy().tolist() == [b"el gato"]
    assert cut[0, -1] == tokenizer.end_id  # the end token keeps its place
    assert tokenizer.encode("el", 4).shape == (4,)


def test_decode_stops_at_end_and_ignores_out_of_range_ids(tokenizer):
    el = tokenizer.vocabulary.index("el")
    assert tokenizer.decode([el, tokenizer.end_id, el]).numpy() == b"el"
    assert tokenizer.decode([[tokenizer.start_id, el, 10**6, -5, 0]]).numpy().tolist() == [b"el"]


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


def test_exported_graph_loads_with_tensorflow_alone(tokenizer, tmp_path):
    module = tf.Module()
    module.tokenizer_table = tokenizer._piece_ids  # tracked so the SavedModel keeps it
    module.round_trip = tf.function(
        lambda text: tokenizer.decode(tokenizer.encode(text, 32, add_end=True)),
        input_signature=[tf.TensorSpec([None], tf.string)],
    )
    tf.saved_model.save(module, str(tmp_path / "model"))
    script = textwrap.dedent(
        f"""
        import sys
        import tensorflow as tf
        loaded = tf.saved_model.load({str(tmp_path / "model")!r})
        out = loaded.round_trip(tf.constant(["It's 01.01.35, ok?"])).numpy().tolist()
        assert out == [b"It's 01.01.35, ok?"], out
        assert "tensorflow_text" not in sys.modules
        assert "keras_attention" not in sys.modules
        print("ok")
        """
    )
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300
    )
    assert result.returncode == 0 and result.stdout.strip().endswith("ok"), result.stderr[-2000:]


def test_save_and_load_keep_the_vocabulary(tokenizer, tmp_path):
    path = tokenizer.save(str(tmp_path))
    assert path.endswith("vocabulary.json")
    loaded = ReversibleTokenizer.load(str(tmp_path))
    assert loaded.vocabulary == tokenizer.vocabulary
    with pytest.raises(ValueError, match=r"`directory` must hold a vocabulary.json .* Received"):
        ReversibleTokenizer.load(str(tmp_path / "missing"))


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"texts": "abc", "vocabulary_size": 300}, r"`texts` must be .* Received: texts='abc'"),
        ({"texts": ["a"], "vocabulary_size": 260}, r"`vocabulary_size` must be .* larger than 260"),
        ({"texts": ["a"], "vocabulary_size": 300, "min_frequency": 0}, r"`min_frequency`"),
    ],
)
def test_train_rejects_bad_arguments(arguments, message):
    with pytest.raises(ValueError, match=message):
        ReversibleTokenizer.train(**arguments)


def test_constructor_and_calls_reject_bad_arguments(tokenizer):
    with pytest.raises(ValueError, match=r"`vocabulary` must start with the special tokens"):
        ReversibleTokenizer(["[PAD]", "[UNK]", "[START]", "[END]", "a"])
    with pytest.raises(ValueError, match=r"`vocabulary` must be a list of distinct"):
        ReversibleTokenizer(["a", "a"])
    with pytest.raises(
        ValueError, match=r"`sequence_length` must be .* Received: sequence_length=2"
    ):
        tokenizer.encode(["a"], 2, add_start=True, add_end=True)
    with pytest.raises(ValueError, match=r"`strings` must be .* shape=\(1, 1\)"):
        tokenizer.encode([["a"]], 4)
    with pytest.raises(ValueError, match=r"`ids` must be integer ids .* dtype=float32"):
        tokenizer.decode(np.zeros((1, 2), "float32"))


COMPOUND_PARTS = ["Sonnen", "blumen", "feld", "haus", "wasser", "berg", "bahn", "schiff"]


def _compounds(count, seed):
    rng = np.random.default_rng(seed)
    words = []
    for _ in range(count):
        chosen = rng.choice(len(COMPOUND_PARTS), size=rng.integers(2, 5), replace=False)
        word = "".join(COMPOUND_PARTS[index] for index in chosen)
        words.append(word[0].upper() + word[1:])
    return words


def test_rare_compounds_are_spelled_with_learned_subwords():
    training = [f"das {word} ist da" for word in _compounds(400, seed=0)]
    tokenizer = ReversibleTokenizer.train(training, vocabulary_size=400)
    assert tokenizer.unknown_pieces == "subwords"
    unseen = "das Schiffbergwasserfeld ist da"
    assert unseen not in training
    pieces = [tokenizer.vocabulary[i] for i in tokenizer.tokenize([unseen]).to_list()[0]]
    assert "".join(pieces) == unseen
    # Each part a token or two, not a token per character.
    assert len(pieces) <= 10, pieces
    assert {"wasser", "feld"} <= set(pieces), pieces
    texts = [f"das {word} ist da" for word in _compounds(50, seed=1)]
    assert _round_trip(tokenizer, texts) == texts


def test_vocabulary_files_written_before_subwords_are_read_as_characters(tmp_path):
    trained = ReversibleTokenizer.train(["ab ab ab", "abc abc"], 300)
    assert " ab" in trained.vocabulary
    # The file layout of earlier versions: the bare list of tokens.
    (tmp_path / "vocabulary.json").write_text(json.dumps(trained.vocabulary))
    loaded = ReversibleTokenizer.load(str(tmp_path))
    assert loaded.unknown_pieces == "characters"
    vocabulary = loaded.vocabulary
    # " abd" is unknown: spelled by characters, where subwords make it " ab" + "d".
    by_characters = [vocabulary.index(c) for c in " ab"] + [4 + ord("d")]
    assert loaded.tokenize(["x abd"]).to_list()[0][1:] == by_characters
    assert trained.tokenize(["x abd"]).to_list()[0][1:] == [vocabulary.index(" ab"), 4 + ord("d")]
    loaded.save(str(tmp_path / "again"))
    assert isinstance(json.loads((tmp_path / "again" / "vocabulary.json").read_text()), list)


def test_save_and_load_keep_how_unknown_pieces_are_spelled(tmp_path):
    tokenizer = ReversibleTokenizer.train(["ab ab ab", "abc abc"], 300)
    tokenizer.save(str(tmp_path))
    contents = json.loads((tmp_path / "vocabulary.json").read_text())
    assert contents["unknown_pieces"] == "subwords"
    loaded = ReversibleTokenizer.load(str(tmp_path))
    assert loaded.unknown_pieces == "subwords" and loaded.vocabulary == tokenizer.vocabulary
    (tmp_path / "vocabulary.json").write_text(json.dumps({"words": []}))
    with pytest.raises(ValueError, match=r"a list of tokens or an object with 'tokens'"):
        ReversibleTokenizer.load(str(tmp_path))
    with pytest.raises(
        ValueError, match=r"`unknown_pieces` must be one of .* Received: unknown_pieces='bytes'"
    ):
        ReversibleTokenizer(tokenizer.vocabulary, unknown_pieces="bytes")

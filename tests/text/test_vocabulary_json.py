"""`vocabulary.json` token lists load as SentencePiece models that give the same ids for every text.

The expected ids come from two independent sources:

- `vocabulary_json_ids.json`: the ids the tokenizer that wrote these files
  gave, on 400-odd varied texts (corpus lines, German compounds, dates,
  punctuation, CJK, emoji, unknown characters, whitespace runs), for one
  token list read both ways ("subwords" and "characters");
- `_reference_ids`: that tokenizer's algorithm, frozen here in plain
  Python, for any text hypothesis makes.
"""

import json
import os
import pathlib
import shutil
import tempfile
import unicodedata
import zipfile

import hypothesis
import hypothesis.strategies as st
import keras
import pytest

import keras_attention as ka
from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
from keras_attention.text.tokenizer_files import load_tokenizer
from keras_attention.text.whitespace import normalize_whitespace
from keras_attention.text.word_pieces import group_pieces

FIXTURE = json.loads(
    (pathlib.Path(__file__).parent / "vocabulary_json_ids.json").read_text(encoding="utf-8")
)
HEAD = ["[PAD]", "[UNK]", "[START]", "[END]"] + [f"<0x{value:02X}>" for value in range(256)]
PROPERTY_SETTINGS = hypothesis.settings(
    max_examples=60, deadline=None, derandomize=True, database=None
)
# Texts of the characters the rules tell apart: letters (one outside the
# tokens), marks, digits, spaces, punctuation, and characters no token holds.
ALPHABET = list("abcdenrstSBéñ019 .,'\"?!-\t") + ["e\u0301", "ß", "文", "☺", "\x00", "\u2028"]


def _reference_pieces(text):
    """The pieces of "characters" and "subwords" spelling: letter runs, other characters."""
    pieces = []
    for index, character in enumerate(text):
        letter = unicodedata.category(character)[0] in "LM"
        previous = text[index - 1] if index else None
        continues_letters = (
            letter and previous is not None and unicodedata.category(previous)[0] in "LM"
        )
        if index == 0 or character == " " or not (previous == " " or continues_letters):
            pieces.append(character)
        else:
            pieces[-1] += character
    return pieces


def _reference_ids(tokens, unknown_pieces, text):
    """The ids the token list gave: each piece whole, else its longest tokens (at most 24
    characters, "subwords") or its characters ("characters"), else the UTF-8 bytes."""
    ids = {token: index for index, token in enumerate(tokens) if index >= len(HEAD)}
    longest = 24 if unknown_pieces == "subwords" else 1
    result = []
    for piece in _reference_pieces(normalize_whitespace(text)):
        if piece in ids:
            result.append(ids[piece])
            continue
        start = 0
        while start < len(piece):
            for size in range(min(longest, len(piece) - start), 0, -1):
                if piece[start : start + size] in ids:
                    result.append(ids[piece[start : start + size]])
                    break
            else:
                size = 1
                result += [4 + byte for byte in piece[start].encode("utf-8")]
            start += size
    return result


def _write_vocabulary_json(folder, tokens, unknown_pieces):
    """A folder as the tokenizer that wrote `vocabulary.json` files left it."""
    os.makedirs(folder, exist_ok=True)
    contents = (
        tokens
        if unknown_pieces == "characters"
        else {"tokens": tokens, "unknown_pieces": unknown_pieces}
    )
    with open(os.path.join(folder, "vocabulary.json"), "w", encoding="utf-8") as file:
        json.dump(contents, file, ensure_ascii=False, indent=0)
    return folder


@pytest.fixture(scope="module", params=["subwords", "characters"])
def loaded(request):
    folder = tempfile.mkdtemp()
    try:
        _write_vocabulary_json(folder, FIXTURE["tokens"], request.param)
        yield request.param, ReversibleTokenizer.load(folder)
    finally:
        shutil.rmtree(folder)


def test_the_frozen_algorithm_gives_the_recorded_ids():
    for unknown_pieces in ("subwords", "characters"):
        expected = FIXTURE[f"{unknown_pieces}_ids"]
        computed = [_reference_ids(FIXTURE["tokens"], unknown_pieces, t) for t in FIXTURE["texts"]]
        assert computed == expected
    # The two spellings differ on these texts: the test tells them apart.
    assert FIXTURE["subwords_ids"] != FIXTURE["characters_ids"]


def test_loaded_files_give_the_recorded_ids(loaded):
    unknown_pieces, tokenizer = loaded
    assert tokenizer.vocabulary == FIXTURE["tokens"]
    ids = tokenizer.tokenize(FIXTURE["texts"]).to_list()
    assert ids == FIXTURE[f"{unknown_pieces}_ids"]
    # "characters" spelling needs whole pieces looked up first; "subwords" of these
    # tokens (none over 24 characters) is SentencePiece's greedy matching alone.
    assert tokenizer.whole_pieces == (unknown_pieces == "characters")


@hypothesis.given(
    st.lists(st.lists(st.sampled_from(ALPHABET), max_size=30).map("".join), min_size=1, max_size=20)
)
@PROPERTY_SETTINGS
def test_loaded_files_give_the_algorithms_ids_for_any_text(loaded, texts):
    unknown_pieces, tokenizer = loaded
    expected = [_reference_ids(FIXTURE["tokens"], unknown_pieces, text) for text in texts]
    assert tokenizer.tokenize(texts).to_list() == expected


@hypothesis.given(st.lists(st.text(max_size=30), min_size=1, max_size=20))
@PROPERTY_SETTINGS
def test_loaded_files_decode_back_to_the_text(loaded, texts):
    _, tokenizer = loaded
    texts = [text.replace("\u2581", "_") for text in texts]  # SentencePiece's space mark
    ids = tokenizer.encode(texts, 200, add_end=True)
    assert [t.decode("utf-8") for t in tokenizer.decode(ids).numpy().tolist()] == [
        normalize_whitespace(text) for text in texts
    ]


def test_tokens_longer_than_24_characters_are_only_found_whole(tmp_path):
    long_word = " Donaudampfschifffahrtsgesellschaft"  # 35 characters with its space
    tokens = HEAD + list(" Dacdefghilmnoprstu") + [long_word, " Donau"]
    _write_vocabulary_json(tmp_path, tokens, "subwords")
    tokenizer = ReversibleTokenizer.load(str(tmp_path))
    assert tokenizer.whole_pieces  # greedy matching alone would find it inside longer words
    texts = ["Donaudampfschifffahrtsgesellschaft", "x" + long_word, "x" + long_word + "skapitän"]
    expected = [_reference_ids(tokens, "subwords", text) for text in texts]
    assert tokenizer.tokenize(texts).to_list() == expected
    assert expected[1][-1] == tokens.index(long_word)  # whole
    assert expected[2][1] == tokens.index(
        " Donau"
    )  # inside a longer word: tokens of 24 characters at most


def test_saving_writes_the_sentencepiece_files_with_the_same_ids(loaded, tmp_path):
    unknown_pieces, tokenizer = loaded
    tokenizer.save(str(tmp_path))
    assert "vocabulary.json" not in os.listdir(tmp_path)
    again = ReversibleTokenizer.load(str(tmp_path))
    assert again.whole_pieces == tokenizer.whole_pieces
    assert again.tokenize(FIXTURE["texts"]).to_list() == FIXTURE[f"{unknown_pieces}_ids"]


def test_a_tokenizer_folder_with_its_note_loads(tmp_path):
    # As `save_tokenizer` wrote it into the example scripts' output and .keras assets.
    _write_vocabulary_json(tmp_path, FIXTURE["tokens"], "subwords")
    (tmp_path / "tokenizer.json").write_text(json.dumps({"class_name": "ReversibleTokenizer"}))
    tokenizer = load_tokenizer(str(tmp_path))
    assert tokenizer.tokenize(FIXTURE["texts"][:50]).to_list() == FIXTURE["subwords_ids"][:50]


def test_a_keras_file_whose_assets_hold_a_vocabulary_json_loads(tmp_path):
    size = len(FIXTURE["tokens"])
    model = ka.models.ShowAttendTellCaptioner(
        vocabulary_size=size,
        max_caption_length=4,
        image_size=16,
        embedding_dim=8,
        units=8,
        attention_units=8,
    )
    model.attach_tokenizers(ReversibleTokenizer.from_tokens(FIXTURE["tokens"]))
    model.save(tmp_path / "new.keras")
    # The same file with the assets the tokenizer of vocabulary.json files wrote.
    with (
        zipfile.ZipFile(tmp_path / "new.keras") as source,
        zipfile.ZipFile(tmp_path / "old.keras", "w") as target,
    ):
        folders = {
            name.rsplit("/", 1)[0] for name in source.namelist() if name.endswith("tokenizer.json")
        }
        assert len(folders) == 1, source.namelist()
        (folder,) = folders
        for item in source.infolist():
            if not item.filename.startswith(folder + "/"):
                target.writestr(item, source.read(item))
        target.writestr(
            folder + "/tokenizer.json", json.dumps({"class_name": "ReversibleTokenizer"})
        )
        target.writestr(folder + "/vocabulary.json", json.dumps(FIXTURE["tokens"]))  # characters
    tokenizer = keras.saving.load_model(tmp_path / "old.keras").tokenizers["caption"]
    assert tokenizer.tokenize(FIXTURE["texts"]).to_list() == FIXTURE["characters_ids"]


def test_pieces_of_token_lists_join_into_words(loaded):
    _, tokenizer = loaded
    text = "das Sonnenblumenfeld ist da, am 01.05.2024!"
    pieces = [tokenizer.vocabulary[i] for i in tokenizer.tokenize([text]).to_list()[0]]
    words, _ = group_pieces(pieces, tokenizer.word_continuation)
    assert words == text.split(" ")


def test_bad_vocabulary_files_name_the_file(tmp_path):
    path = tmp_path / "vocabulary.json"
    path.write_text(json.dumps({"words": []}))
    with pytest.raises(
        ValueError,
        match=r"a list of tokens or an object with 'tokens'. Received: path='.*vocabulary.json'",
    ):
        ReversibleTokenizer.load(str(tmp_path))
    path.write_text("[not json")
    with pytest.raises(
        ValueError, match=r"Received: path='.*vocabulary.json', which does not parse"
    ):
        ReversibleTokenizer.load(str(tmp_path))
    path.write_text(json.dumps({"tokens": HEAD + ["a"], "unknown_pieces": "bytes"}))
    with pytest.raises(ValueError, match=r"unknown_pieces is one of .* unknown_pieces='bytes'"):
        ReversibleTokenizer.load(str(tmp_path))
    path.write_text(json.dumps(["[PAD]", "[UNK]", "[START]", "[END]", "a"]))
    with pytest.raises(ValueError, match=r"`tokens` must start with the special tokens"):
        ReversibleTokenizer.load(str(tmp_path))
    with pytest.raises(ValueError, match=r"Received: unknown_pieces='bytes'"):
        ReversibleTokenizer.from_tokens(HEAD + ["a"], unknown_pieces="bytes")
    with pytest.raises(ValueError, match=r"`vocabulary` must be a list of distinct"):
        ReversibleTokenizer.from_tokens(HEAD + ["a", "a"])


def test_a_token_holding_the_space_mark_keeps_its_id(tmp_path):
    # Text with "▁" in it was read as any character; SentencePiece reads it as a space.
    tokens = HEAD + ["a", " ", "\u2581", " a"]
    tokenizer = ReversibleTokenizer.from_tokens(tokens, "characters")
    assert tokenizer.vocabulary_size == len(tokens)
    assert tokenizer.tokenize(["a a"]).to_list() == [[260, 263]]
    assert tokenizer.decode([262, 260]).numpy() == b"a"  # the unreachable token is no text

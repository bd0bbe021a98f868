"""`TransformerTranslator.from_preset(folder)` on Marian (opus-mt) checkpoints made in the test.

Two references: always, the published model in NumPy on the same checkpoint
files and SentencePiece with `vocab.json` in plain Python
(tests/marian_checkpoints.py); and transformers' PyTorch `MarianMTModel` and
`MarianTokenizer` where they are installed (the `references` extra).
"""

import json
import os
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest
import sentencepiece
from marian_checkpoints import numpy_greedy
from marian_checkpoints import numpy_marian_logits
from marian_checkpoints import phrase_pairs
from marian_checkpoints import write_marian_folder

from keras_attention import convert
from keras_attention.models.checkpoints.marian_checkpoints import marian_token_order
from keras_attention.models.translation.transformer_translator import TransformerTranslator

SENTENCES = ["green cat green small", "big tree big", "dog", "river red new cat old blue"]
ODD_SENTENCES = ["", "Hund cat", "cat, dog!", "éléphant 42", ">>de<< cat dog"]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("marian") / "opus-mt-tiny")
    config, weights = write_marian_folder(path)
    return path, config, weights


def _marian_source_ids(folder, config, texts):
    """Marian's source ids in plain Python: SentencePiece pieces, vocab.json, then </s>."""
    processor = sentencepiece.SentencePieceProcessor(model_file=os.path.join(folder, "source.spm"))
    with open(os.path.join(folder, "vocab.json"), encoding="utf-8") as file:
        vocabulary = json.load(file)
    rows = []
    for text in texts:
        code = []
        if text.startswith(">>") and "<<" in text:
            code, text = [text[: text.find("<<") + 2]], text[text.find("<<") + 2 :]
        pieces = code + processor.encode(text, out_type=str)
        rows.append([vocabulary.get(piece, vocabulary["<unk>"]) for piece in pieces] + [0])
    width = max(map(len, rows))
    return np.array([row + [config["pad_token_id"]] * (width - len(row)) for row in rows])


def _ours(ids, config):
    """Marian ids -> our ids (padding 0; the decoder start token is our last id)."""
    order = marian_token_order(config)
    ours = np.argsort(order[:-1])[ids]
    return ours


def _decode_marian(folder, ids, config):
    """Marian target ids -> text in plain Python, as transformers' decode(skip_special_tokens)."""
    processor = sentencepiece.SentencePieceProcessor(model_file=os.path.join(folder, "target.spm"))
    with open(os.path.join(folder, "vocab.json"), encoding="utf-8") as file:
        piece_of = {index: piece for piece, index in json.load(file).items()}
    special = {config["pad_token_id"], config["eos_token_id"], 1}
    texts = []
    for row in ids:
        row = list(row)
        if config["eos_token_id"] in row:
            row = row[: row.index(config["eos_token_id"])]
        pieces = [piece_of[index] for index in row if index not in special]
        texts.append(processor.decode_pieces(pieces).replace("\u2581", " ").strip())
    return texts


def test_logits_match_a_numpy_marian_on_the_same_checkpoint(folder):
    path, config, weights = folder
    model = TransformerTranslator.from_preset(path)
    source = _marian_source_ids(path, config, SENTENCES)
    target = np.array(
        [[config["decoder_start_token_id"], 5, 9, 3], [config["pad_token_id"], 7, 0, 4]] * 2
    )
    expected = numpy_marian_logits(weights, config, source, target)  # (B, T, V) Marian's ids
    our_target = np.where(target == config["pad_token_id"], len(marian_token_order(config)) - 1, 0)
    our_target = np.where(our_target == 0, _ours(target, config), our_target)
    logits = np.asarray(model({"source": _ours(source, config), "target": our_target}))
    order = marian_token_order(config)
    # Our ids 1 .. V - 1 are Marian's tokens; 0 (padding) and V (start) are never produced.
    np.testing.assert_allclose(logits[..., 1:-1], expected[..., order[1:-1]], atol=1e-4)
    assert (logits[..., 0] < -1e8).all() and (logits[..., -1] < -1e8).all()


def test_tokenizers_give_marians_ids_and_text(folder):
    path, config, _ = folder
    model = TransformerTranslator.from_preset(path)
    source = model.tokenizers["source"]
    texts = SENTENCES + ODD_SENTENCES
    expected = _marian_source_ids(path, config, texts)
    ours = source.encode(texts, expected.shape[1]).numpy()
    padding = expected == config["pad_token_id"]
    np.testing.assert_array_equal(
        np.where(padding, 0, ours), np.where(padding, 0, _ours(expected, config))
    )
    assert (ours[padding] == 0).all()
    target = model.tokenizers["target"]
    rng = np.random.default_rng(0)
    marian_ids = rng.integers(0, config["vocab_size"] - 1, (6, 9))
    marian_ids[:, -3] = 0  # the end token: what follows is not read
    decoded = [t.decode("utf-8") for t in target.decode(_ours(marian_ids, config)).numpy()]
    assert decoded == _decode_marian(path, marian_ids, config)


def test_greedy_translations_are_a_numpy_marians_greedy(folder):
    path, config, weights = folder
    model = TransformerTranslator.from_preset(path)
    source = _marian_source_ids(path, config, SENTENCES)
    expected = _decode_marian(path, numpy_greedy(weights, config, source, 12), config)
    assert model.generate(SENTENCES, max_length=12, max_source_length=16) == expected


def test_a_keras_file_keeps_the_tokenizers_and_translates_the_same(folder, tmp_path):
    path, _, _ = folder
    model = TransformerTranslator.from_preset(path)
    before = model.generate(SENTENCES, max_length=10, max_source_length=16)
    model.save(tmp_path / "marian.keras")
    restored = keras.saving.load_model(tmp_path / "marian.keras")
    assert restored.generate(SENTENCES, max_length=10, max_source_length=16) == before


def test_the_converted_savedmodel_translates_strings_after_importing_tensorflow_text(
    folder, tmp_path
):
    path, config, weights = folder
    export = convert.main([path, "--export", str(tmp_path / "served"), "--max-length", "12"])
    source = _marian_source_ids(path, config, SENTENCES)
    expected = _decode_marian(path, numpy_greedy(weights, config, source, 12), config)
    script = textwrap.dedent(
        f"""
        import tensorflow as tf
        try:
            tf.saved_model.load({export!r})
            raise SystemExit("loaded without tensorflow_text")
        except Exception as error:  # the SentencePiece op is not registered yet
            assert "Sentencepiece" in str(error), error
        import tensorflow_text
        serve = tf.saved_model.load({export!r}).signatures["serving_default"]
        out = serve(text=tf.constant({SENTENCES!r}))["translation"].numpy()
        print([t.decode("utf-8") for t in out])
        """
    )
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == repr(expected)


def test_what_our_translator_cannot_be_is_refused_with_its_reason(tmp_path):
    write_marian_folder(str(tmp_path / "deep"), decoder_layers=3)
    with pytest.raises(ValueError, match=r"encoder_layers=2 but decoder_layers=3"):
        TransformerTranslator.from_preset(str(tmp_path / "deep"))
    write_marian_folder(str(tmp_path / "apart"), share_encoder_decoder_embeddings=False)
    with pytest.raises(ValueError, match=r"separate source and target embeddings"):
        TransformerTranslator.from_preset(str(tmp_path / "apart"))
    write_marian_folder(str(tmp_path / "tanh"), activation_function="tanh")
    with pytest.raises(ValueError, match=r"activation_function='tanh'"):
        TransformerTranslator.from_preset(str(tmp_path / "tanh"))
    (tmp_path / "bart").mkdir()
    (tmp_path / "bart" / "config.json").write_text(json.dumps({"model_type": "bart"}))
    with pytest.raises(ValueError, match=r"model_type 'marian'. Received: .* 'bart'"):
        TransformerTranslator.from_preset(str(tmp_path / "bart"))


# --- transformers' PyTorch Marian, where installed ---


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tiny MarianMTModel trained briefly on the phrase task, saved with its tokenizer."""
    torch = pytest.importorskip("torch", reason="the PyTorch reference needs torch")
    transformers = pytest.importorskip("transformers", reason="the reference needs transformers")
    path = str(tmp_path_factory.mktemp("marian") / "trained")
    pairs = phrase_pairs(400, seed=0)
    config, _ = write_marian_folder(path, pairs)
    tokenizer = transformers.MarianTokenizer(
        *(os.path.join(path, name) for name in ("source.spm", "target.spm", "vocab.json"))
    )
    settings = {
        key: value for key, value in config.items() if key not in ("model_type", "architectures")
    }
    torch.manual_seed(0)
    model = transformers.MarianMTModel(transformers.MarianConfig(**settings))
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    rng = np.random.default_rng(0)
    for _ in range(400):
        batch = [pairs[index] for index in rng.integers(0, len(pairs), 32)]
        encoded = tokenizer(
            [s for s, _ in batch],
            text_target=[t for _, t in batch],
            return_tensors="pt",
            padding=True,
        )
        labels = encoded["labels"].masked_fill(encoded["labels"] == config["pad_token_id"], -100)
        loss = model(
            input_ids=encoded["input_ids"], attention_mask=encoded["attention_mask"], labels=labels
        ).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path, model, tokenizer, torch


def test_translations_equal_transformers_generate(trained):
    path, reference, tokenizer, torch = trained
    texts = [source for source, _ in phrase_pairs(60, seed=5)]
    ours = TransformerTranslator.from_preset(path)
    encoded = tokenizer(texts, return_tensors="pt", padding=True)
    pad = reference.config.pad_token_id
    for beams in (1, 4):
        with torch.no_grad():
            generated = reference.generate(
                **encoded,
                num_beams=beams,
                do_sample=False,
                max_new_tokens=16,
                bad_words_ids=[[pad]],
                length_penalty=0.0,
            )
        expected = tokenizer.batch_decode(generated, skip_special_tokens=True)
        translated = ours.generate(
            texts, max_length=16, max_source_length=16, beam_width=beams, length_penalty=0.0
        )
        same = sum(a == b for a, b in zip(translated, expected))
        # Greedy: every string. Beam search: both rank by the sum of log-probabilities
        # (no length penalty); a tie between hypotheses may be broken otherwise.
        assert same == len(texts) if beams == 1 else same >= 0.9 * len(texts), (beams, same)

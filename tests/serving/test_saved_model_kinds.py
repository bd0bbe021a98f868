"""`ka.serving.load_*` load their own kind of SavedModel and refuse the others by name."""

import re

import pytest
import tensorflow as tf
from tiny_models import TRANSLATOR_VOCABULARIES
from tiny_models import tiny_rnn_attention_translator
from tiny_models import tiny_transformer_captioner
from tiny_models import tiny_vision_transformer

from keras_attention import serving
from keras_attention.serving import saved_model_kinds
from keras_attention.text.reversible_tokenizer import ReversibleTokenizer

VOCABULARY = ["[PAD]", "[UNK]", "[START]", "[END]", "a", "red", "blue", "circle", "square", "x"]
LOADERS = {
    "classifier": serving.load_image_classifier,
    "captioner": serving.load_captioner,
    "translator": serving.load_translator,
}
# What a loader's message says it expects, and what a folder of each kind holds.
EXPECTED = {
    "classifier": "`path` must hold an image classifier, as export_image_classifier writes "
    "(inputs: images; outputs: labels, probabilities)",
    "captioner": "`path` must hold an image captioner, as export_captioner writes "
    "(inputs: images; outputs: attention, caption, caption_tokens)",
    "translator": "`path` must hold a translator, as export_translator writes "
    "(inputs: text; outputs: attention, source_tokens, translation, translation_tokens)",
}
HOLDS = {
    "classifier": "an image classifier (inputs: images; outputs: labels, probabilities); "
    "use load_image_classifier",
    "captioner": "an image captioner (inputs: images; outputs: attention, caption, "
    "caption_tokens); use load_captioner",
    "translator": "a translator (inputs: text; outputs: attention, source_tokens, "
    "source_truncated, translation, translation_tokens); use load_translator",
}


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    """{kind: path} of a tiny export of each kind."""
    folder = tmp_path_factory.mktemp("kinds")
    encoder = ReversibleTokenizer.train(["a b", "b a", "a a b"], 300)
    vocabularies = dict.fromkeys(TRANSLATOR_VOCABULARIES, encoder.vocabulary_size)
    translator = tiny_rnn_attention_translator(**vocabularies, embedding_dim=4, units=4)
    return {
        "classifier": serving.export_image_classifier(
            tiny_vision_transformer(), folder / "vit", ["a", "b", "c"]
        ),
        "captioner": serving.export_captioner(
            tiny_transformer_captioner(), folder / "captioner", VOCABULARY, 4, decode_batch_size=2
        ),
        "translator": serving.export_translator(translator, folder / "nmt", encoder, encoder, 6, 5),
    }


@pytest.mark.parametrize(
    "loader, held", [(loader, held) for loader in LOADERS for held in LOADERS if loader != held]
)
def test_each_loader_refuses_the_other_kinds_naming_what_it_found(exports, loader, held):
    path = exports[held]
    message = f"{EXPECTED[loader]}. Received: path={path!r}, which holds {HOLDS[held]}"
    with pytest.raises(ValueError, match=re.escape(message) + "$"):
        LOADERS[loader](path)


@pytest.mark.parametrize("loader", list(LOADERS))
def test_folders_that_are_not_saved_models_are_named(loader, tmp_path):
    exporter = {"classifier": "export_image_classifier"}.get(loader, f"export_{loader}")
    start = rf"`path` must be a SavedModel folder \(with saved_model.pb\), as {exporter} writes"
    (tmp_path / "empty").mkdir()
    (tmp_path / "model.keras").write_bytes(b"PK")
    cases = {
        "empty": "a folder without saved_model.pb",
        "missing": "which does not exist",
        "model.keras": "a file, not a folder",
    }
    for name, problem in cases.items():
        path = str(tmp_path / name)
        with pytest.raises(ValueError, match=start + rf"\. Received: path='{re.escape(path)}', "):
            LOADERS[loader](path)
        with pytest.raises(ValueError, match=re.escape(problem)):
            LOADERS[loader](path)


def test_a_saved_model_of_no_known_kind_is_described(tmp_path):
    module = tf.Module()
    module.f = tf.function(lambda x: {"y": 2 * x}, input_signature=[tf.TensorSpec(None, name="x")])
    tf.saved_model.save(module, str(tmp_path), signatures={"serving_default": module.f})
    with pytest.raises(
        ValueError,
        match=r"must hold an image captioner.*which holds a SavedModel of no kind this package "
        r"exports \(inputs: x; outputs: y\)$",
    ):
        serving.load_captioner(tmp_path)


def test_each_kind_is_told_by_its_signature_names(exports):
    for kind, path in exports.items():
        signature = tf.saved_model.load(path).signatures["serving_default"]
        found = saved_model_kinds.kind_of(*saved_model_kinds.signature_names(signature))
        assert HOLDS[kind].startswith(found.name) and HOLDS[kind].endswith(found.loader)

"""Checkpoint folders that disagree with themselves stop with one line naming the file.

Each folder is a good one written in the test (tests/hf_checkpoints.py,
tests/marian_checkpoints.py) with one thing damaged, as downloads and hand
edits damage them: a config that does not describe its weights, labels that
are not the head's rows, cut or garbage files, a missing tensor or shard,
broken tokenizer files. None may load as another model, and none may end in
a traceback that names no file. The pickle and safe-mode guarantees are kept.
"""

import json
import os
import re
import shutil

import keras
import numpy as np
import pytest
from hf_checkpoints import random_pixels
from hf_checkpoints import write_swin_checkpoint
from hf_checkpoints import write_vit_checkpoint
from marian_checkpoints import write_marian_folder
from safetensors.numpy import load_file
from safetensors.numpy import save_file

from keras_attention import convert
from keras_attention.models.image_classification.swin_transformer import SwinTransformer
from keras_attention.models.image_classification.vision_transformer import VisionTransformer
from keras_attention.models.translation.transformer_translator import TransformerTranslator


class NotATensor:
    """An object a PyTorch pickle may hold beside tensors, which the weights-only loader refuses."""


class RunsCode:
    """Unpickled by a loader that runs code, it would run `command`."""

    def __init__(self, command):
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command,))


def _at(path):
    """`path` as a regular expression matching it."""
    return re.escape(str(path))


@pytest.fixture(scope="module")
def good_vit(tmp_path_factory):
    folder = tmp_path_factory.mktemp("vit") / "good"
    write_vit_checkpoint(folder)
    return folder


@pytest.fixture
def vit(good_vit, tmp_path):
    """A copy of a good ViT classifier folder (2 layers, 3 classes, hidden size 16) to damage."""
    return shutil.copytree(good_vit, tmp_path / "vit")


@pytest.fixture(scope="module")
def good_marian(tmp_path_factory):
    folder = tmp_path_factory.mktemp("marian") / "good"
    write_marian_folder(str(folder))
    return folder


@pytest.fixture
def marian(good_marian, tmp_path):
    """A copy of a good Marian folder (2 layers each side, tokenizer files) to damage."""
    return shutil.copytree(good_marian, tmp_path / "marian")


def _edit_json(folder, name="config.json", **changes):
    data = json.loads((folder / name).read_text())
    (folder / name).write_text(json.dumps({**data, **changes}))


def _as_pytorch_file(folder, extra=None):
    """Replaces `model.safetensors` with the `pytorch_model.bin` of the same tensors."""
    torch = pytest.importorskip("torch", reason="writing a PyTorch checkpoint needs torch")
    state = {
        name: torch.tensor(value) for name, value in load_file(folder / "model.safetensors").items()
    }
    state.update(extra or {})
    (folder / "model.safetensors").unlink()
    torch.save(state, folder / "pytorch_model.bin")
    return folder / "pytorch_model.bin"


def _vit(folder, **kwargs):
    return VisionTransformer.from_preset(str(folder), **kwargs)


# --- A config that does not describe its weights: never a silently different model ---


def test_a_config_with_fewer_layers_than_its_weights_is_refused(vit):
    _edit_json(vit, num_hidden_layers=1)
    with pytest.raises(
        ValueError,
        match=rf"^{_at(vit)}/config\.json: num_hidden_layers is 1 but model\.safetensors holds tensors of 2 layers \(vit\.encoder\.layer\.0 \.\.\. vit\.encoder\.layer\.1\)$",
    ):
        _vit(vit)


def test_labels_that_are_not_the_heads_rows_are_refused(vit):
    _edit_json(vit, id2label={"0": "cat", "1": "dog", "2": "fox", "3": "owl"})
    with pytest.raises(
        ValueError,
        match=rf"^{_at(vit)}/config\.json: id2label names 4 classes but model\.safetensors holds classifier\.weight of shape \(3, 16\), not \(4, 16\)$",
    ):
        _vit(vit)


def test_a_config_with_more_layers_than_its_weights_is_named(vit):
    _edit_json(vit, num_hidden_layers=3)
    with pytest.raises(
        ValueError,
        match=r"config\.json: num_hidden_layers is 3 but model\.safetensors holds tensors of 2 layers",
    ):
        _vit(vit)


def test_a_hidden_size_the_weights_do_not_have_is_named(vit):
    _edit_json(vit, hidden_size=32)
    with pytest.raises(
        ValueError,
        match=r"config\.json: hidden_size is 32 but model\.safetensors holds vit\.embeddings\.patch_embeddings\.projection\.weight of shape \(16, 3, 8, 8\), not \(32, 3, 8, 8\)$",
    ):
        _vit(vit)


def test_a_missing_tensor_is_named(vit):
    weights = load_file(vit / "model.safetensors")
    del weights["vit.encoder.layer.1.output.dense.bias"]
    save_file(weights, str(vit / "model.safetensors"))
    with pytest.raises(
        ValueError,
        match=rf"^{_at(vit)}/model\.safetensors: no tensor vit\.encoder\.layer\.1\.output\.dense\.bias, which config\.json implies \(shape \(16,\)\)",
    ):
        _vit(vit)


def test_tensors_the_config_does_not_account_for_are_refused_unless_ignored(vit):
    weights = load_file(vit / "model.safetensors")
    weights["vit.embeddings.mask_token"] = np.zeros((1, 1, 16), "float32")
    save_file(weights, str(vit / "model.safetensors"))
    with pytest.raises(
        ValueError,
        match=r"model\.safetensors: 1 tensor\(s\) that config\.json does not account for, e\.g\. vit\.embeddings\.mask_token of shape \(1, 1, 16\); from_preset\(\.\.\., ignore_unexpected_weights=True\) \(python -m keras_attention\.convert --ignore-unexpected-weights\) loads without them",
    ):
        _vit(vit)
    model = _vit(vit, ignore_unexpected_weights=True)
    assert model.class_names == ["cat", "dog", "fox"]


def test_a_backbone_folder_with_its_pooler_loads(vit):
    # ViTModel: no prefix, no classifier, a pooler classification does not use.
    weights = load_file(vit / "model.safetensors")
    weights = {
        name.removeprefix("vit."): value
        for name, value in weights.items()
        if not name.startswith("classifier.")
    }
    weights["pooler.dense.weight"] = np.zeros((16, 16), "float32")
    weights["pooler.dense.bias"] = np.zeros(16, "float32")
    save_file(weights, str(vit / "model.safetensors"))
    assert _vit(vit, num_classes=5).output_shape == (None, 5)


# --- Damaged files: named, never a traceback ---


@pytest.mark.parametrize("damage", ["cut", "garbage"])
def test_a_cut_or_garbage_safetensors_file_is_named(vit, damage):
    path = vit / "model.safetensors"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2] if damage == "cut" else b"not safetensors" * 50)
    with pytest.raises(
        ValueError,
        match=rf"^{_at(path)}: not a readable safetensors file \(.+\); it may be cut short or damaged",
    ):
        _vit(vit)


def test_a_missing_shard_is_named(vit):
    weights = load_file(vit / "model.safetensors")
    (vit / "model.safetensors").unlink()
    names = sorted(weights)
    shards = {
        name: f"model-0000{1 + (index >= len(names) // 2)}-of-00002.safetensors"
        for index, name in enumerate(names)
    }
    first = [name for name in names if shards[name].startswith("model-00001")]
    save_file({name: weights[name] for name in first}, str(vit / shards[first[0]]))
    (vit / "model.safetensors.index.json").write_text(json.dumps({"weight_map": shards}))
    with pytest.raises(
        ValueError,
        match=r"model\.safetensors\.index\.json: weight_map puts 20 tensor\(s\) \(e\.g\. .+\) in model-00002-of-00002\.safetensors, which is not in the folder$",
    ):
        _vit(vit)


def test_sharded_weights_load_as_the_single_file_does(vit, good_vit):
    weights = load_file(vit / "model.safetensors")
    (vit / "model.safetensors").unlink()
    names = sorted(weights)
    halves = {
        "model-00001-of-00002.safetensors": names[:20],
        "model-00002-of-00002.safetensors": names[20:],
    }
    for shard, held in halves.items():
        save_file({name: weights[name] for name in held}, str(vit / shard))
    weight_map = {name: shard for shard, held in halves.items() for name in held}
    (vit / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    pixels = random_pixels()
    np.testing.assert_allclose(np.asarray(_vit(vit)(pixels)), np.asarray(_vit(good_vit)(pixels)))


def test_invalid_json_in_the_config_names_the_file(vit):
    (vit / "config.json").write_text('{"model_type": "vit",')
    with pytest.raises(ValueError, match=rf"^{_at(vit)}/config\.json: not valid JSON \(.+\)$"):
        _vit(vit)


def test_a_truncated_pytorch_file_is_named(vit):
    path = _as_pytorch_file(vit)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(
        ValueError,
        match=rf"^{_at(path)}: not a readable PyTorch checkpoint \(.+\); it may be cut short or damaged",
    ):
        _vit(vit)


def test_a_pytorch_file_the_weights_only_loader_refuses_is_named(vit):
    path = _as_pytorch_file(vit, extra={"optimizer": NotATensor()})
    with pytest.raises(
        ValueError,
        match=rf"^{_at(path)}: refused by torch's weights-only loader \(.*NotATensor.*\): it holds something other than tensors",
    ):
        _vit(vit)


def test_a_pytorch_file_of_the_same_tensors_loads_as_the_safetensors_file(vit, good_vit):
    _as_pytorch_file(vit)
    pixels = random_pixels()
    np.testing.assert_allclose(np.asarray(_vit(vit)(pixels)), np.asarray(_vit(good_vit)(pixels)))


def test_the_converter_says_a_damaged_checkpoint_in_one_line(vit, tmp_path):
    (vit / "model.safetensors").write_bytes(b"garbage")
    with pytest.raises(
        SystemExit, match=r"^error: .*model\.safetensors: not a readable safetensors file"
    ):
        convert.main([str(vit), "--export", str(tmp_path / "served")])


def test_the_converter_converts_unexpected_tensors_only_when_asked(vit, tmp_path):
    weights = load_file(vit / "model.safetensors")
    weights["vit.embeddings.mask_token"] = np.zeros((1, 1, 16), "float32")
    save_file(weights, str(vit / "model.safetensors"))
    with pytest.raises(
        SystemExit, match=r"^error: .*vit\.embeddings\.mask_token .*--ignore-unexpected"
    ):
        convert.main([str(vit), "--export", str(tmp_path / "refused")])
    assert not (tmp_path / "refused").exists()
    convert.main([str(vit), "--export", str(tmp_path / "served"), "--ignore-unexpected-weights"])
    assert (tmp_path / "served" / "saved_model.pb").exists()


# --- Swin: stages, blocks and the buffers transformers saves ---


def test_a_swin_config_with_other_depths_than_its_weights_is_refused(tmp_path):
    folder = tmp_path / "swin"
    _, config = write_swin_checkpoint(folder)
    _edit_json(folder, depths=[2, 1])
    with pytest.raises(
        ValueError,
        match=r"config\.json: depths\[1\] is 1 but model\.safetensors holds tensors of 2 blocks \(swin\.encoder\.layers\.1\.blocks\.0 \.\.\. swin\.encoder\.layers\.1\.blocks\.1\)$",
    ):
        SwinTransformer.from_preset(str(folder))
    _edit_json(folder, depths=config["depths"], embed_dim=16)
    with pytest.raises(ValueError, match=r"config\.json: embed_dim is 16 but model\.safetensors"):
        SwinTransformer.from_preset(str(folder))


def test_a_swin_folder_with_the_relative_position_indices_transformers_saves_loads(tmp_path):
    folder = tmp_path / "swin"
    source, _ = write_swin_checkpoint(folder)
    weights = load_file(folder / "model.safetensors")
    for name in list(weights):
        if name.endswith("relative_position_bias_table"):
            index = name.replace("relative_position_bias_table", "relative_position_index")
            weights[index] = np.zeros((16, 16), "int64")  # window 4: 16 tokens
    save_file(weights, str(folder / "model.safetensors"))
    pixels = np.random.default_rng(1).uniform(0, 255, (2, 32, 32, 3)).astype("float32")
    model = SwinTransformer.from_preset(str(folder))
    np.testing.assert_allclose(np.asarray(model(pixels)), np.asarray(source(pixels)), atol=1e-5)


# --- Marian: config, vocabulary and tokenizer files ---


def test_a_marian_config_with_fewer_layers_than_its_weights_is_refused(marian):
    _edit_json(marian, encoder_layers=1, decoder_layers=1)
    with pytest.raises(
        ValueError,
        match=r"config\.json: encoder_layers is 1 but model\.safetensors holds tensors of 2 encoder layers \(model\.encoder\.layers\.0 \.\.\. model\.encoder\.layers\.1\)$",
    ):
        TransformerTranslator.from_preset(str(marian))


@pytest.mark.parametrize(
    "vocabulary, message",
    [
        ([1, 2, 3], r"vocab\.json: a JSON object was expected, not an array$"),
        (
            {"</s>": "0", "<unk>": "1"},
            r"vocab\.json: '</s>' has the id '0', but ids are whole numbers below config\.json's vocab_size \d+$",
        ),
        (
            {"</s>": 0, "<pad>": 0, "<unk>": 1},
            r"vocab\.json: '<pad>' has the id 0 but config\.json's pad_token_id is \d+$",
        ),
    ],
    ids=["a-list", "string-ids", "another-padding-id"],
)
def test_a_broken_marian_vocabulary_is_named(marian, vocabulary, message):
    (marian / "vocab.json").write_text(json.dumps(vocabulary))
    with pytest.raises(ValueError, match=rf"^{_at(marian)}/{message}"):
        TransformerTranslator.from_preset(str(marian))


def test_a_broken_sentencepiece_model_is_named(marian):
    (marian / "source.spm").write_bytes(b"not a model")
    with pytest.raises(
        ValueError, match=rf"`{_at(marian)}/source\.spm` must be a SentencePiece model"
    ):
        TransformerTranslator.from_preset(str(marian))


def test_a_marian_folder_without_one_tokenizer_file_names_it(marian, tmp_path):
    (marian / "source.spm").unlink()
    with pytest.raises(
        ValueError, match=rf"^{_at(marian)}/source\.spm: missing; Marian's tokenizer is"
    ):
        TransformerTranslator.from_preset(str(marian))
    # Without any of them: the model alone, to which tokenizers can be attached.
    for name in ("target.spm", "vocab.json"):
        (marian / name).unlink()
    assert not TransformerTranslator.from_preset(str(marian)).tokenizers


def test_marian_tensors_the_config_does_not_account_for_are_refused_unless_ignored(marian):
    weights = load_file(marian / "model.safetensors")
    weights["model.encoder.layernorm_embedding.weight"] = np.ones(32, "float32")
    save_file(weights, str(marian / "model.safetensors"))
    with pytest.raises(
        ValueError, match=r"model\.encoder\.layernorm_embedding\.weight of shape \(32,\)"
    ):
        TransformerTranslator.from_preset(str(marian))
    TransformerTranslator.from_preset(str(marian), ignore_unexpected_weights=True)


# --- The guarantees kept: pickles never run, safetensors first, safe-mode .keras files ---


def test_code_in_a_pytorch_pickle_never_runs(vit, tmp_path):
    marker = tmp_path / "ran"
    _as_pytorch_file(vit, extra={"payload": RunsCode(f"touch {marker}")})
    with pytest.raises(
        ValueError, match=r"refused by torch's weights-only loader.*Nothing in it was run"
    ):
        _vit(vit)
    assert not marker.exists()


def test_a_safetensors_file_is_read_before_a_pickle_beside_it(vit, good_vit):
    (vit / "pytorch_model.bin").write_bytes(b"a pickle that is never opened")
    pixels = random_pixels()
    np.testing.assert_allclose(np.asarray(_vit(vit)(pixels)), np.asarray(_vit(good_vit)(pixels)))


def test_a_model_from_a_checkpoint_loads_back_in_keras_safe_mode(good_vit, tmp_path):
    model = _vit(good_vit)
    model.save(tmp_path / "vit.keras")
    restored = keras.saving.load_model(tmp_path / "vit.keras", safe_mode=True)
    pixels = random_pixels()
    np.testing.assert_allclose(np.asarray(restored(pixels)), np.asarray(model(pixels)), atol=1e-6)

"""`import keras_attention` alone makes the library's `.keras` files loadable, in a fresh process."""

import json
import os
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest
from tiny_models import tiny_rnn_attention_translator
from tiny_models import tiny_show_attend_tell_captioner
from tiny_models import tiny_swin_transformer
from tiny_models import tiny_transformer_captioner
from tiny_models import tiny_transformer_translator
from tiny_models import tiny_vision_transformer
from tiny_models import tiny_vit_captioner

from keras_attention.callbacks.atomic_checkpoint import AtomicModelCheckpoint
from keras_attention.layers.attention.multi_head_attention import MultiHeadAttention
from keras_attention.layers.position.position_embedding import PositionEmbedding
from keras_attention.layers.transformer.transformer_encoder_block import TransformerEncoderBlock
from keras_attention.tasks.translation import model_from_flags as translation_model_arguments
from keras_attention.tasks.translation.flags import parse_translation_arguments

RNG = np.random.default_rng(0)
TOKENS = RNG.integers(1, 12, size=(2, 6)).astype("int32")
IMAGES_16 = RNG.uniform(0, 255, size=(2, 16, 16, 3)).astype("float32")
IMAGES_8 = RNG.uniform(0, 255, size=(2, 8, 8, 3)).astype("float32")
IMAGES_SWIN = RNG.uniform(0, 255, size=(2, 40, 24, 3)).astype("float32")


def _user_model():
    """A user's functional model holding the library's layers."""
    tokens = keras.Input((None,), dtype="int32")
    x = keras.layers.Embedding(12, 8)(tokens)
    x = PositionEmbedding(16, merge="add")(x)
    x = MultiHeadAttention(num_heads=2, key_dim=4)(x, x)
    x = TransformerEncoderBlock(num_heads=2, intermediate_dim=16)(x)
    return keras.Model(tokens, keras.layers.Dense(3)(x))


def _example_checkpoint(folder):
    """A checkpoint as the translation example writes it: compiled, trained a step, saved."""
    args = parse_translation_arguments(
        ["--hidden-dim", "8", "--num-layers", "1", "--epochs", "1", "--max-length", "8"]
    )
    model = translation_model_arguments.translator_from_arguments(args, 12, 12)
    translation_model_arguments.compile_translator(model, args, steps_per_epoch=1)
    pattern = os.path.join(folder, "epoch_{epoch:03d}.keras")
    inputs = {"source": TOKENS, "target": TOKENS}
    model.fit(inputs, TOKENS, epochs=1, verbose=0, callbacks=[AtomicModelCheckpoint(pattern)])
    return model, inputs, pattern.format(epoch=1)


def _cases(folder):
    """name -> (model, inputs, path of its `.keras` file)."""
    translator_inputs = {"source": TOKENS, "target": TOKENS}
    captioner_inputs = {"caption": TOKENS % 10, "image": IMAGES_16}
    models = {
        "user_model": (_user_model(), TOKENS),
        "transformer_translator": (tiny_transformer_translator(), translator_inputs),
        "rnn_attention_translator": (tiny_rnn_attention_translator(), translator_inputs),
        "show_attend_tell_captioner": (tiny_show_attend_tell_captioner(), captioner_inputs),
        "transformer_captioner": (tiny_transformer_captioner(), captioner_inputs),
        "vit_captioner": (tiny_vit_captioner(), captioner_inputs),
        "vision_transformer": (tiny_vision_transformer(), IMAGES_8),
        "swin_transformer": (
            tiny_swin_transformer(),
            IMAGES_SWIN,
        ),
    }
    cases = {}
    for name, (model, inputs) in models.items():
        path = os.path.join(folder, f"{name}.keras")
        model.save(path)
        cases[name] = (model, inputs, path)
    cases["example_checkpoint"] = _example_checkpoint(folder)
    return cases


# What the fresh process runs: only `import keras_attention`, then Keras' own loading.
LOADER = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import keras_attention
    import keras

    results = {}
    for name, path, inputs_path in json.loads(sys.argv[1]):
        inputs = dict(np.load(inputs_path))
        inputs = inputs["x"] if list(inputs) == ["x"] else inputs
        model = keras.models.load_model(path)
        np.save(path + ".loaded.npy", np.asarray(model(inputs, training=False)))
        results[name] = type(model).__name__
    print("LOADED " + json.dumps(results))
    """
)


def test_keras_files_load_in_a_fresh_process_after_only_importing_the_package(tmp_path):
    cases = _cases(str(tmp_path))
    jobs = []
    for name, (model, inputs, path) in cases.items():
        inputs_path = str(tmp_path / f"{name}.inputs.npz")
        np.savez(inputs_path, **(inputs if isinstance(inputs, dict) else {"x": inputs}))
        np.save(path + ".expected.npy", np.asarray(model(inputs, training=False)))
        jobs.append((name, path, inputs_path))
    environment = {**os.environ, "KERAS_BACKEND": "tensorflow", "TF_CPP_MIN_LOG_LEVEL": "2"}
    result = subprocess.run(
        [sys.executable, "-c", LOADER, json.dumps(jobs)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    loaded = json.loads(result.stdout.split("LOADED ", 1)[1])
    expected_classes = {name: type(model).__name__ for name, (model, _, _) in cases.items()}
    assert loaded == expected_classes
    for name, (_, _, path) in cases.items():
        np.testing.assert_allclose(
            np.load(path + ".loaded.npy"), np.load(path + ".expected.npy"), atol=1e-5, err_msg=name
        )


# `import keras_attention; import keras` is the fresh process above; `import keras;
# import keras_attention` is every test process (and the docstring of `registration`).
IMPORT_ORDERS = {
    "the package, then tensorflow (which imports keras)": "import keras_attention; import tensorflow",
    "the package, then keras_hub": "import keras_attention; import keras_hub",
    "one layer module only": "from keras_attention.layers.position.alibi_bias import AlibiBias",
}


@pytest.mark.parametrize("imports", IMPORT_ORDERS.values(), ids=IMPORT_ORDERS.keys())
def test_every_serializable_class_is_registered_whatever_the_import_order(imports):
    names = [
        "keras_attention>TransformerDecoderBlock",
        "keras_attention>VisionTransformer",
        "keras_attention>ShowAttendTellCaptioner",
        "keras_attention>MaskedSparseCategoricalAccuracy",
        "keras_attention>masked_sparse_categorical_crossentropy",
    ]
    check = (
        f"{imports}\n"
        "from keras.saving import get_registered_object\n"
        f"print('FOUND', [get_registered_object(name) is not None for name in {names!r}])"
    )
    result = subprocess.run(
        [sys.executable, "-c", check],
        capture_output=True,
        text=True,
        env={**os.environ, "KERAS_BACKEND": "tensorflow", "TF_CPP_MIN_LOG_LEVEL": "2"},
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    assert f"FOUND {[True] * len(names)}" in result.stdout


def test_importing_the_command_line_loads_neither_keras_nor_tensorflow():
    check = (
        "import sys\n"
        "import keras_attention.training.command_line\n"
        "print('LOADED', sorted({'keras', 'tensorflow'} & set(sys.modules)))"
    )
    result = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "LOADED []" in result.stdout

"""keras_attention checked on one Keras backend, in a process of its own.

Keras fixes its backend when it is first imported, so `test_backends.py`
runs this file once per backend:

    KERAS_BACKEND=jax python tests/backends/backend_checks.py REPORT.json [SAVED_DIR]

Every check runs even when another fails. REPORT.json maps each check's name
to {"status": "ok" | "failed" | "skipped", "message": ..., "seconds": ...};
the test module asserts on each entry. SAVED_DIR, written on TensorFlow by
`saved_model_files.py`, holds `.keras` files to load and their inputs and
outputs.
"""

import importlib
import inspect
import json
import os
import pathlib
import runpy
import sys
import tempfile
import time
import traceback

import keras
import numpy as np
from keras import ops

TESTS = pathlib.Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
# The layers' harness specs and the NumPy references live beside their tests.
for folder in (TESTS, TESTS / "layers", TESTS / "ops", ROOT):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from numpy_reference import attention_scores_gradient  # noqa: E402
from numpy_reference import scaled_dot_product_attention  # noqa: E402
from numpy_reference import sliding_window_band  # noqa: E402

import keras_attention as ka  # noqa: E402

RNG = np.random.default_rng(0)
# Base classes to subclass, not layers to use as they are.
ABSTRACT_LAYERS = {"BaseAttention"}
# The entry points that need TensorFlow itself.
TENSORFLOW_ONLY = (
    ("keras_attention.serving", "export_translator"),
    ("keras_attention.serving", "make_translation_function"),
    ("keras_attention.serving", "export_captioner"),
    ("keras_attention.serving", "make_caption_function"),
    ("keras_attention.serving", "export_image_classifier"),
    ("keras_attention.serving", "translate_texts"),
    ("keras_attention.generation", "greedy_search"),
    ("keras_attention.generation", "beam_search"),
)
EXAMPLE_SCRIPTS = ("quickstart", "train_nmt", "train_vit", "train_captioning")


def normal(*shape):
    return RNG.normal(size=shape).astype("float32")


def to_numpy(tensors):
    """A flat list of NumPy arrays from a tensor or a nested structure of them."""
    return [keras.ops.convert_to_numpy(t) for t in to_flat(tensors)]


def gradients(loss, arrays):
    """d loss(arrays) / d arrays with the backend's own autodiff, as NumPy arrays."""
    backend = keras.backend.backend()
    if backend == "jax":
        import jax

        grads = jax.jit(jax.grad(loss))([jax.numpy.asarray(a) for a in arrays])
        return [np.asarray(g) for g in grads]
    if backend == "torch":
        import torch

        tensors = [torch.tensor(to_numpy(a)[0], requires_grad=True) for a in arrays]
        loss(tensors).backward()
        return [t.grad.detach().cpu().numpy() for t in tensors]
    import tensorflow as tf

    variables = [tf.Variable(to_numpy(a)[0]) for a in arrays]
    with tf.GradientTape() as tape:
        value = loss(variables)
    return [g.numpy() for g in tape.gradient(value, variables)]


def assert_close(got, expected, atol=1e-5, what="output"):
    for index, (a, b) in enumerate(zip(to_numpy(got), to_numpy(expected))):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=atol, err_msg=f"{what} {index}")


# ---------------------------------------------------------------------------
# Every public layer: built, called eagerly and in a functional model, and
# differentiated, on the harness specs of tests/layers.


def layer_specs():
    specs = []
    for path in sorted((TESTS / "layers").rglob("test_*.py")):  # one folder per layer kind
        specs.extend(runpy.run_path(str(path)).get("SPECS", []))
    return specs


def public_layer_names():
    names = set(ka.layers.__all__) - ABSTRACT_LAYERS
    # An alias (another name for the same class, such as GroupedQueryAttention)
    # is covered by its class's own name.
    return sorted(
        n
        for n in names
        if issubclass(getattr(ka.layers, n), keras.layers.Layer)
        and getattr(ka.layers, n).__name__ == n
    )


def check_layer(spec):
    layer = spec.make_layer()
    arrays = spec.all_inputs()
    first = to_numpy(spec.call(layer, arrays, training=False))
    second = to_numpy(spec.call(layer, arrays, training=False))
    for a, b in zip(first, second):
        assert np.all(np.isfinite(a)), "non-finite output"
        np.testing.assert_array_equal(a, b)
        assert a.shape[0] == arrays[0].shape[0], a.shape
    symbolic = [keras.Input(shape=a.shape[1:], dtype=input_dtype(a)) for a in arrays]
    model = keras.Model(symbolic, spec.call(layer, symbolic))
    assert_close(model(arrays, training=False), first, what="functional model output")


def input_dtype(array):
    if array.dtype == bool:
        return "bool"
    return "int32" if np.issubdtype(array.dtype, np.integer) else "float32"


def check_layer_gradients(spec):
    """Gradients of sum((output + 1)^2) for every trainable weight: finite, not all zero.

    (+ 1: a weight that starts at 0, a class token, still gets a gradient.)
    """
    layer, arrays = spec.make_layer(), spec.all_inputs()
    spec.call(layer, arrays)  # builds the weights
    non_trainable = [v.value for v in layer.non_trainable_variables]

    def loss(trainable):
        class Stateless:
            def __call__(self, *args, **kwargs):
                return layer.stateless_call(trainable, non_trainable, *args, **kwargs)[0]

        # stateless_call hands its arguments to `call` as they are: tensors, no `training`.
        outputs = spec.call(Stateless(), [ops.convert_to_tensor(a) for a in arrays])
        flat = outputs if isinstance(outputs, (list, tuple)) else [outputs]
        first_float = next(o for o in flat if "float" in str(o.dtype))
        return ops.sum(ops.square(first_float + 1.0))

    grads = gradients(loss, [v.value for v in layer.trainable_variables])
    assert all(np.all(np.isfinite(g)) for g in grads), "non-finite gradient"
    assert any(np.any(g != 0) for g in grads), "every gradient is 0"


# ---------------------------------------------------------------------------
# Parity with keras' own layers, on copied weights.


def check_multi_head_attention_parity():
    query, value, key = normal(2, 4, 6), normal(2, 5, 6), normal(2, 5, 3)
    mask = RNG.random((2, 4, 5)) > 0.3
    mask[:, :, 0] = True  # every query sees a key, even under the causal mask
    for kwargs in ({"num_heads": 2, "key_dim": 4}, {"num_heads": 3, "key_dim": 2, "value_dim": 5}):
        theirs = keras.layers.MultiHeadAttention(**kwargs)
        ours = ka.layers.MultiHeadAttention(**kwargs)
        for causal in (False, True):
            call = dict(attention_mask=mask, return_attention_scores=True, use_causal_mask=causal)
            expected = theirs(query, value, key, **call)
            ours(query, value, key)
            ours.set_weights(theirs.get_weights())
            assert_close(
                ours(query, value, key, **call), expected, what=f"{kwargs} causal={causal}"
            )


def check_dot_product_attention_parity():
    query, value, key = normal(2, 3, 4), normal(2, 5, 4), normal(2, 5, 4)
    value_mask = np.array([[True] * 5, [True] * 2 + [False] * 3])
    for score_mode in ("dot", "concat"):
        theirs = keras.layers.Attention(use_scale=True, score_mode=score_mode)
        ours = ka.layers.DotProductAttention(use_scale=True, score_mode=score_mode)
        call = dict(mask=[None, value_mask], return_attention_scores=True)
        theirs([query, value, key])
        theirs.set_weights([np.full(w.shape, 0.7, "float32") for w in theirs.get_weights()])
        ours([query, value, key])
        ours.set_weights(theirs.get_weights())
        assert_close(ours([query, value, key], **call), theirs([query, value, key], **call))


def keras_hub_layers():
    try:
        import keras_hub
    except Exception as error:  # keras_hub may not import on every backend
        raise SkipCheck(f"keras_hub does not import: {type(error).__name__}: {error}") from None
    return keras_hub.layers


def check_transformer_encoder_block_parity():
    hub = keras_hub_layers()
    x = normal(2, 6, 8)
    padding = np.array([[True] * 6, [True] * 4 + [False] * 2])
    for norm_first in (False, True):
        theirs = hub.TransformerEncoder(
            intermediate_dim=16, num_heads=2, normalize_first=norm_first
        )
        expected = theirs(x, padding_mask=padding)
        ours = ka.layers.TransformerEncoderBlock(
            num_heads=2, intermediate_dim=16, norm_first=norm_first
        )
        ours(x)
        ours.set_weights(theirs.get_weights())
        assert_close(ours(x, padding_mask=padding), expected, what=f"norm_first={norm_first}")


def check_transformer_decoder_block_parity():
    hub = keras_hub_layers()
    x, context = normal(2, 6, 8), normal(2, 5, 8)
    padding = np.array([[True] * 6, [True] * 4 + [False] * 2])
    context_padding = np.array([[True] * 5, [True] * 3 + [False] * 2])
    for norm_first in (False, True):
        theirs = hub.TransformerDecoder(
            intermediate_dim=16, num_heads=2, normalize_first=norm_first
        )
        expected = theirs(
            x, context, decoder_padding_mask=padding, encoder_padding_mask=context_padding
        )
        ours = ka.layers.TransformerDecoderBlock(
            num_heads=2, intermediate_dim=16, norm_first=norm_first
        )
        ours(x, context)
        ours.set_weights(theirs.get_weights())
        got = ours(x, context, padding_mask=padding, context_padding_mask=context_padding)
        assert_close(got, expected, what=f"norm_first={norm_first}")


# ---------------------------------------------------------------------------
# keras_attention.ops.dot_product_attention against NumPy, on every kernel.


def attention_cases():
    """(name, mask, is_causal): no mask, key padding, a (B, Tq, Tk) mask with
    a row that sees no key, causal, and causal with padding."""
    padding = np.ones((2, 1, 1, 7), bool)
    padding[1, ..., 4:] = False
    query_key = RNG.random((2, 5, 7)) > 0.4
    query_key[0, 1] = False  # a query that sees no key: output 0
    return [
        ("no mask", None, False),
        ("key padding", padding, False),
        ("query-key mask", query_key, False),
        ("causal", None, True),
        ("causal and padding", padding, True),
    ]


def check_attention_kernel(implementation, value_dim=4):
    query, key, value = normal(2, 5, 3, 4), normal(2, 7, 3, 4), normal(2, 7, 3, value_dim)
    for name, mask, causal in attention_cases():
        expected, _ = scaled_dot_product_attention(query, key, value, mask, causal)
        got = ka.ops.dot_product_attention(
            query, key, value, mask=mask, is_causal=causal, implementation=implementation
        )
        assert_close(got, expected, what=name)


def check_attention_bias_and_window(implementation):
    """A (1, H, 1, Tk) bias and a (B, Tq, Tk) one, with and without a causal window."""
    query, key, value = normal(2, 5, 3, 4), normal(2, 7, 3, 4), normal(2, 7, 3, 4)
    padding = np.ones((2, 1, 1, 7), bool)
    padding[1, ..., 4:] = False
    for bias in (normal(1, 3, 1, 7), normal(2, 5, 7)):
        for window, causal in ((None, False), (None, True), (2, False), (3, True)):
            mask = padding
            if window is not None:
                mask = padding & sliding_window_band(5, 7, window, causal)
            expected, _ = scaled_dot_product_attention(query, key, value, mask, causal, bias=bias)
            got = ka.ops.dot_product_attention(
                query,
                key,
                value,
                mask=padding,
                is_causal=causal,
                bias=bias,
                sliding_window=window,
                implementation=implementation,
            )
            assert_close(got, expected, what=f"bias {bias.shape} window={window} causal={causal}")


def check_attention_bias_gradients(implementation):
    """d sum(output * G) / d bias against NumPy, summed over the axes the bias broadcasts."""
    query, key, value = normal(2, 5, 3, 4), normal(2, 7, 3, 4), normal(2, 7, 3, 4)
    upstream, bias = normal(2, 5, 3, 4), normal(1, 3, 1, 7)
    for window, causal in ((None, True), (2, False)):
        mask = None if window is None else sliding_window_band(5, 7, window, causal)

        def loss(tensors, window=window, causal=causal):
            output = ka.ops.dot_product_attention(
                *tensors[:3],
                is_causal=causal,
                bias=tensors[3],
                sliding_window=window,
                implementation=implementation,
            )
            return ops.sum(ops.multiply(output, upstream))

        d_bias = gradients(loss, [query, key, value, bias])[3]
        d_scores = attention_scores_gradient(query, key, value, upstream, mask, causal, bias=bias)
        np.testing.assert_allclose(
            d_bias, d_scores.sum(axis=(0, 2), keepdims=True), atol=1e-5, err_msg=f"{window}"
        )


def check_chunked_attention_blocks():
    """Blocks of 4 of 9 keys (and queries when causal), not one block of all."""
    query, key, value = normal(2, 9, 2, 4), normal(2, 9, 2, 4), normal(2, 9, 2, 3)
    tensors = [ops.convert_to_tensor(t) for t in (query, key, value)]
    padding = np.ones((2, 1, 1, 9), bool)
    padding[1, ..., 6:] = False
    for mask, causal in ((None, False), (padding, False), (None, True), (padding, True)):
        given = None if mask is None else ops.convert_to_tensor(mask)
        got = ka.ops.chunked_attention(*tensors, given, causal, 0.5, block_size=4)
        expected, _ = scaled_dot_product_attention(query, key, value, mask, causal, scale=0.5)
        assert_close(got, expected, what=f"mask={mask is not None} causal={causal}")


def check_attention_weights():
    query, key, value = normal(2, 5, 3, 4), normal(2, 7, 3, 4), normal(2, 7, 3, 6)
    for name, mask, causal in attention_cases():
        expected = scaled_dot_product_attention(query, key, value, mask, causal)
        got = ka.ops.dot_product_attention(
            query, key, value, mask=mask, is_causal=causal, return_weights=True
        )
        assert_close(got, expected, what=name)


def check_attention_gradients(implementation):
    """d sum(output * G) / d value is W^T G (NumPy); query and key gradients finite."""
    query, key, value = normal(2, 5, 3, 4), normal(2, 7, 3, 4), normal(2, 7, 3, 4)
    upstream = normal(2, 5, 3, 4)
    for name, mask, causal in attention_cases():

        def loss(tensors, mask=mask, causal=causal):
            output = ka.ops.dot_product_attention(
                *tensors, mask=mask, is_causal=causal, implementation=implementation
            )
            return ops.sum(ops.multiply(output, upstream))

        d_query, d_key, d_value = gradients(loss, [query, key, value])
        _, weights = scaled_dot_product_attention(query, key, value, mask, causal)
        expected = np.einsum("bhqk,bqhd->bkhd", weights, upstream)
        np.testing.assert_allclose(d_value, expected, atol=1e-5, err_msg=name)
        for grad in (d_query, d_key):
            assert np.all(np.isfinite(grad)), f"non-finite gradient ({name})"


# ---------------------------------------------------------------------------
# Losses and metrics against NumPy; the models' forward pass.


def check_losses_and_metrics():
    from keras_attention.losses import doubly_stochastic_penalty
    from keras_attention.losses import masked_sparse_categorical_crossentropy
    from keras_attention.metrics import MaskedSparseCategoricalAccuracy

    labels = np.array([[3, 1, 0], [2, 0, 0]])  # 0 is padding
    logits = normal(2, 3, 4)
    log_probabilities = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    real = labels != 0
    picked = np.take_along_axis(log_probabilities, labels[..., None], -1)[..., 0]
    loss = masked_sparse_categorical_crossentropy(labels, logits)
    np.testing.assert_allclose(to_numpy(loss)[0], -picked[real].mean(), rtol=1e-5)
    metric = MaskedSparseCategoricalAccuracy()
    metric.update_state(labels, logits)
    expected = (logits.argmax(-1) == labels)[real].mean()
    np.testing.assert_allclose(to_numpy(metric.result())[0], expected, rtol=1e-6)
    alignments = RNG.random((2, 3, 5)).astype("float32")
    step_mask = np.array([[True, True, False], [True, True, True]])
    penalty = doubly_stochastic_penalty(alignments, step_mask)
    coverage = (alignments * step_mask[..., None]).sum(1)  # (B, S)
    np.testing.assert_allclose(to_numpy(penalty)[0], ((1 - coverage) ** 2).sum(-1), rtol=1e-5)


def small_models():
    """Name -> (the model, its inputs): one of each model family, tiny."""
    from keras_attention import models

    source, target = RNG.integers(1, 12, (2, 6)), RNG.integers(1, 12, (2, 5))
    images, captions = normal(2, 16, 16, 3), RNG.integers(1, 12, (2, 4))
    translator = dict(source_vocabulary_size=12, target_vocabulary_size=12)
    captioner = dict(vocabulary_size=12, max_caption_length=8, image_size=16)
    transformer = dict(hidden_dim=8, num_layers=1, num_heads=2)
    return {
        "transformer_translator": lambda: models.transformer_translator(
            **translator,
            **transformer,
            max_source_length=6,
            max_target_length=5,
            intermediate_dim=16,
        ),
        "rnn_attention_translator": lambda: models.rnn_attention_translator(
            **translator, embedding_dim=8, units=8
        ),
        "vision_transformer": lambda: models.vision_transformer(
            **transformer, image_size=16, patch_size=4, num_classes=3, mlp_dim=16
        ),
        "show_attend_tell_captioner": lambda: models.show_attend_tell_captioner(
            **captioner, embedding_dim=8, units=8, attention_units=8
        ),
        "transformer_captioner": lambda: models.transformer_captioner(
            **captioner, **transformer, intermediate_dim=16
        ),
    }, {
        "transformer_translator": {"source": source, "target": target},
        "rnn_attention_translator": {"source": source, "target": target},
        "vision_transformer": images,
        "show_attend_tell_captioner": {"image": images, "caption": captions},
        "transformer_captioner": {"image": images, "caption": captions},
    }


def check_model_forward(name):
    makers, inputs = small_models()
    outputs = to_numpy(makers[name]()(inputs[name], training=False))
    assert all(np.all(np.isfinite(o)) for o in outputs), "non-finite output"
    assert outputs[0].shape[0] == 2, outputs[0].shape


def check_model_fit(name):
    """Two steps of `fit` on two examples: a finite loss and moved weights.

    Two, because the ViT's head starts at zero (as the paper's does): the first
    step moves only the head, the second everything behind it.
    """
    makers, inputs = small_models()
    model = makers[name]()
    if name == "vision_transformer":
        labels = RNG.integers(0, 3, (2,))
        loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    else:
        target = inputs[name].get("target", inputs[name].get("caption"))
        labels = RNG.integers(1, 12, target.shape)
        loss = ka.losses.masked_sparse_categorical_crossentropy
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss=loss)
    before = to_numpy(model.trainable_weights)
    history = model.fit(inputs[name], labels, batch_size=2, epochs=2, verbose=0)
    assert np.isfinite(history.history["loss"][-1]), history.history
    after = to_numpy(model.trainable_weights)
    moved = sum(not np.array_equal(b, a) for b, a in zip(before, after))
    assert moved > len(before) // 2, f"only {moved} of {len(before)} weights changed"


# ---------------------------------------------------------------------------
# `.keras` files saved on TensorFlow, loaded on this backend.


def every_layer_model():
    """One functional model holding a layer of every harness spec, and its inputs."""
    inputs, outputs, arrays = [], [], []
    for spec in layer_specs():
        symbolic = [keras.Input(shape=a.shape[1:], dtype=input_dtype(a)) for a in spec.all_inputs()]
        inputs += symbolic
        outputs += [o for o in to_flat(spec.call(spec.make_layer(), symbolic))]
        arrays += spec.all_inputs()
    return keras.Model(inputs, outputs), arrays


def to_flat(outputs):
    if isinstance(outputs, dict):
        return [o for key in sorted(outputs) for o in to_flat(outputs[key])]
    if isinstance(outputs, (list, tuple)):
        return [o for item in outputs for o in to_flat(item)]
    return [outputs]


def save_every_layer_model(folder):
    """Writes every_layers.keras, its inputs and its outputs (run on TensorFlow)."""
    model, arrays = every_layer_model()
    folder = pathlib.Path(folder)
    model.save(folder / "every_layer.keras")
    np.savez(folder / "every_layer_inputs.npz", *arrays)
    np.savez(folder / "every_layer_outputs.npz", *to_numpy(model(arrays, training=False)))


def check_saved_file(saved_dir):
    folder = pathlib.Path(saved_dir)
    inputs = np.load(folder / "every_layer_inputs.npz")
    expected = np.load(folder / "every_layer_outputs.npz")
    model = keras.saving.load_model(folder / "every_layer.keras")
    got = to_numpy(model([inputs[f"arr_{i}"] for i in range(len(inputs.files))], training=False))
    assert len(got) == len(expected.files), (len(got), len(expected.files))
    for index, output in enumerate(got):
        np.testing.assert_allclose(
            output,
            expected[f"arr_{index}"],
            rtol=1e-5,
            atol=1e-5,
            err_msg=model.outputs[index].name,
        )


# ---------------------------------------------------------------------------
# What needs TensorFlow stops at once, naming the feature and the backend.


def check_tensorflow_only(module_name, function_name):
    """The backend check comes first: placeholders for the arguments are never read."""
    function = getattr(importlib.import_module(module_name), function_name)
    required = [
        p
        for p in inspect.signature(function).parameters.values()
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    expect_backend_error(function_name, lambda: function(*[None] * len(required)))


def check_example_script(name):
    script = runpy.run_path(str(ROOT / "examples" / f"{name}.py"), run_name="example")
    with tempfile.TemporaryDirectory() as folder:
        output_dir = os.path.join(folder, "run")
        expect_backend_error("example", lambda: script["main"](["--output-dir", output_dir]))
        assert not os.path.exists(output_dir), "the script wrote its output folder before stopping"


def expect_backend_error(feature, call):
    from keras_attention.backend_support import UnsupportedBackendError

    start = time.perf_counter()
    try:
        call()
    except UnsupportedBackendError as error:
        message = str(error)
    else:
        raise AssertionError("no UnsupportedBackendError")
    backend = keras.backend.backend()
    assert feature in message.lower() and repr(backend) in message, message
    assert "KERAS_BACKEND=tensorflow" in message, message
    assert time.perf_counter() - start < 1.0, "the error came only after work"


# ---------------------------------------------------------------------------


class SkipCheck(Exception):
    """The check cannot run here (the message says why)."""


def checks(saved_dir=None):
    """Name -> zero-argument callable, for every check of this file."""
    found = {}
    for spec in layer_specs():
        found[f"layer {spec.cls.__name__} {spec.name}"] = lambda spec=spec: check_layer(spec)
        if spec.trainable:
            found[f"gradients {spec.cls.__name__} {spec.name}"] = lambda spec=spec: (
                check_layer_gradients(spec)
            )
    found["parity MultiHeadAttention keras.layers.MultiHeadAttention"] = (
        check_multi_head_attention_parity
    )
    found["parity DotProductAttention keras.layers.Attention"] = check_dot_product_attention_parity
    found["parity TransformerEncoderBlock keras_hub TransformerEncoder"] = (
        check_transformer_encoder_block_parity
    )
    found["parity TransformerDecoderBlock keras_hub TransformerDecoder"] = (
        check_transformer_decoder_block_parity
    )
    for implementation in ka.ops.IMPLEMENTATIONS:
        found[f"ops dot_product_attention {implementation}"] = lambda i=implementation: (
            check_attention_kernel(i)
        )
        found[f"ops dot_product_attention {implementation} value_dim 6"] = lambda i=implementation: (
            check_attention_kernel(i, value_dim=6)
        )
        found[f"gradients dot_product_attention {implementation}"] = lambda i=implementation: (
            check_attention_gradients(i)
        )
        found[f"ops dot_product_attention {implementation} bias and sliding_window"] = (
            lambda i=implementation: check_attention_bias_and_window(i)
        )
        found[f"gradients dot_product_attention {implementation} bias"] = lambda i=implementation: (
            check_attention_bias_gradients(i)
        )
    found["ops chunked_attention blocks"] = check_chunked_attention_blocks
    found["losses and metrics"] = check_losses_and_metrics
    for name in small_models()[1]:
        found[f"model {name} forward"] = lambda name=name: check_model_forward(name)
        found[f"model {name} fit"] = lambda name=name: check_model_fit(name)
    found["ops dot_product_attention weights"] = check_attention_weights
    found["keras file saved on tensorflow"] = lambda: check_saved_file(saved_dir)
    for module_name, function_name in TENSORFLOW_ONLY:
        found[f"needs tensorflow {function_name}"] = lambda m=module_name, n=function_name: (
            check_tensorflow_only(m, n)
        )
    for script in EXAMPLE_SCRIPTS:
        found[f"needs tensorflow examples/{script}.py"] = lambda s=script: check_example_script(s)
    return found


def run(report_path, saved_dir=None):
    report = {}
    for name, check in checks(saved_dir).items():
        start = time.perf_counter()
        try:
            check()
            status, message = "ok", ""
        except SkipCheck as reason:
            status, message = "skipped", str(reason)
        except Exception:  # noqa: BLE001 - every failure is reported, not raised
            status, message = "failed", traceback.format_exc()
        seconds = round(time.perf_counter() - start, 2)
        report[name] = {"status": status, "message": message, "seconds": seconds}
        print(f"{status:7} {seconds:6.1f} s  {name}", flush=True)
    pathlib.Path(report_path).write_text(json.dumps(report, indent=1), encoding="utf-8")


if __name__ == "__main__":
    run(*sys.argv[1:])
    # A leftover non-daemon thread of a backend must not keep the process alive.
    sys.stdout.flush()
    os._exit(0)

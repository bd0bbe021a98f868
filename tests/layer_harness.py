"""The shared checks every public layer passes.

A layer's test module lists `LayerSpec`s and runs every check on each:

    SPECS = [LayerSpec("basic", MyLayer, {"units": 4}, inputs=[np.ones((2, 3, 5))])]

    test_harness = harness_test(SPECS)

The checks: configuration round trip (get_config mirrors __init__), symbolic
call with None dimensions, eager call, one `fit` step with jit_compile=True,
mixed_float16 and mixed_bfloat16 (float32 variables, compute-dtype outputs
close to float32), `.keras` save and load with identical outputs, and
SavedModel export reloaded with `tf.saved_model.load` and called with a
different batch size.
"""

import dataclasses
import doctest
import inspect
import os

import keras
import numpy as np
import pytest
import tensorflow as tf

HARNESS_CHECKS = (
    "config",
    "symbolic",
    "eager",
    "fit_xla",
    "mixed_float16",
    "mixed_bfloat16",
    "keras_file",
    "saved_model",
)


@dataclasses.dataclass
class LayerSpec:
    """How to build and call one layer for the harness.

    Attributes:
        name: test id.
        cls: the layer class.
        init_kwargs: constructor arguments.
        inputs: positional call inputs (NumPy arrays, batch first).
        tensor_kwargs: keyword call inputs that are tensors (e.g. masks).
        call_kwargs: keyword call arguments that are Python values.
        dynamic_axes: per positional input, the axes made None in the
            symbolic check; default: every axis but batch and the last (all
            but batch for integer inputs).
        private_args: constructor arguments not kept as public attributes.
        mixed_tolerance: relative tolerance of mixed precision vs float32.
        trainable: whether `fit` must change the weights.
    """

    name: str
    cls: type
    init_kwargs: dict
    inputs: list
    tensor_kwargs: dict = dataclasses.field(default_factory=dict)
    call_kwargs: dict = dataclasses.field(default_factory=dict)
    dynamic_axes: list = None
    private_args: tuple = ()
    mixed_tolerance: float = 0.05
    trainable: bool = True

    def make_layer(self, **overrides):
        return self.cls(**{**self.init_kwargs, **overrides})

    def all_inputs(self):
        """Positional then keyword tensor inputs, as one list."""
        return list(self.inputs) + list(self.tensor_kwargs.values())

    def call(self, layer, tensors, training=None):
        positional = tensors[: len(self.inputs)]
        keyword = dict(zip(self.tensor_kwargs, tensors[len(self.inputs) :]))
        extra = {} if training is None else {"training": training}
        return layer(*positional, **keyword, **self.call_kwargs, **extra)


def harness_test(specs):
    """A test function, parametrized over every check and every spec, for a module to collect."""

    @pytest.mark.parametrize("check", HARNESS_CHECKS)
    @pytest.mark.parametrize("spec", specs, ids=lambda s: s.name)
    def test(spec, check, tmp_path):
        run_check(spec, check, tmp_path)

    return test


def assert_docstring_examples_pass(module):
    """The `>>>` examples of `module`'s docstrings run and print what they show."""
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def run_check(spec, check, tmp_path):
    """Run one of HARNESS_CHECKS on `spec`."""
    if check not in HARNESS_CHECKS:
        raise ValueError(f"Unknown harness check {check!r}")
    globals()[f"_check_{check}"](spec, str(tmp_path))


def _flatten(outputs):
    if isinstance(outputs, dict):
        return [outputs[key] for key in sorted(outputs)]
    if isinstance(outputs, (list, tuple)):
        flat = []
        for item in outputs:
            flat.extend(_flatten(item))
        return flat
    return [outputs]


def _numpy(outputs):
    return [keras.ops.convert_to_numpy(o) for o in _flatten(outputs)]


def _build_model(spec, layer, batch_size=None):
    symbolic = [
        keras.Input(shape=array.shape[1:], batch_size=batch_size, dtype=_keras_dtype(array))
        for array in spec.all_inputs()
    ]
    outputs = spec.call(layer, symbolic)
    return keras.Model(symbolic, outputs)


def _keras_dtype(array):
    if array.dtype == bool:
        return "bool"
    if np.issubdtype(array.dtype, np.integer):
        return "int32"
    return "float32"


def _check_config(spec, tmp_path):
    layer = spec.make_layer()
    config = layer.get_config()
    for name in _constructor_arguments(spec.cls):
        assert name in config, f"get_config() lacks constructor argument {name!r}"
        if name not in spec.private_args:
            assert hasattr(layer, name), f"constructor argument {name!r} is not an attribute"
    for name, value in spec.init_kwargs.items():
        if isinstance(value, (int, float, str, bool, type(None), tuple, list)):
            got = config[name]
            expected = list(value) if isinstance(value, tuple) else value
            got = list(got) if isinstance(got, tuple) else got
            assert got == expected, f"get_config()[{name!r}]={got!r}, built with {value!r}"
    clone = spec.cls.from_config(config)
    assert clone.get_config() == config
    # Serialization through the registry, as a saved model would do it.
    revived = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(layer))
    assert type(revived) is spec.cls
    assert revived.get_config() == config


def _constructor_arguments(cls):
    """The names a constructor takes: its own and those its `**kwargs` hand on.

    A constructor that ends in `**kwargs` may hand keyword-only settings on to
    a keras_attention base class (MultiHeadAttention's to HeadAttentionSteps);
    those count as its arguments too. Required keyword-only arguments of a base
    (computed by the subclass, as `head_size`) do not.
    """
    names = []
    for owner in cls.__mro__:
        if "__init__" not in vars(owner):
            continue
        if owner is not cls and not owner.__module__.startswith("keras_attention."):
            break
        parameters = inspect.signature(owner.__init__).parameters.values()
        for parameter in parameters:
            if parameter.name == "self" or parameter.kind in (
                parameter.VAR_KEYWORD,
                parameter.VAR_POSITIONAL,
            ):
                continue
            inherited = owner is not cls
            if inherited and parameter.kind is not parameter.KEYWORD_ONLY:
                continue
            if inherited and parameter.default is parameter.empty:
                continue
            names.append(parameter.name)
        if not any(p.kind is p.VAR_KEYWORD for p in parameters):
            break
    return list(dict.fromkeys(names))


def _check_symbolic(spec, tmp_path):
    layer = spec.make_layer()
    symbolic = []
    arrays = spec.all_inputs()
    for index, array in enumerate(arrays):
        shape = list(array.shape[1:])
        if index < len(spec.inputs):
            if spec.dynamic_axes is not None:
                dynamic = spec.dynamic_axes[index]
            elif _keras_dtype(array) == "float32":
                dynamic = range(1, array.ndim - 1)
            else:
                dynamic = range(1, array.ndim)
            for axis in dynamic:
                shape[axis - 1] = None
        symbolic.append(keras.Input(shape=tuple(shape), dtype=_keras_dtype(array)))
    symbolic_outputs = _flatten(spec.call(layer, symbolic))
    eager_outputs = _numpy(spec.call(layer, arrays))
    assert len(symbolic_outputs) == len(eager_outputs)
    for sym, eager in zip(symbolic_outputs, eager_outputs):
        assert len(sym.shape) == eager.ndim, (sym.shape, eager.shape)
        for sym_dim, eager_dim in zip(sym.shape[1:], eager.shape[1:]):
            assert sym_dim is None or sym_dim == eager_dim, (sym.shape, eager.shape)
    model = keras.Model(symbolic, spec.call(layer, symbolic))
    model_outputs = _numpy(model(arrays))
    for got, expected in zip(model_outputs, eager_outputs):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def _check_eager(spec, tmp_path):
    layer = spec.make_layer()
    first = _numpy(spec.call(layer, spec.all_inputs(), training=False))
    second = _numpy(spec.call(layer, spec.all_inputs(), training=False))
    for a, b in zip(first, second):
        assert np.all(np.isfinite(a)), "non-finite output"
        np.testing.assert_array_equal(a, b)
        assert a.shape[0] == spec.inputs[0].shape[0]
    if not isinstance(spec.call(layer, spec.all_inputs()), (tuple, list, dict)):
        shapes = [array.shape for array in spec.inputs]
        expected = layer.compute_output_shape(*shapes)
        _assert_shape_matches(expected, first[0].shape)


def _assert_shape_matches(expected, actual):
    expected = tuple(expected)
    assert len(expected) == len(actual), (expected, actual)
    for e, a in zip(expected, actual):
        assert e is None or e == a, (expected, actual)


def _train_one_epoch(spec, layer, jit_compile=True):
    model = _build_model(spec, layer)
    float_output = _first_float_output(model)
    trainer = keras.Model(model.inputs, float_output)
    trainer.compile(optimizer=keras.optimizers.Adam(1e-2), loss="mse", jit_compile=jit_compile)
    target = np.random.default_rng(0).normal(
        size=(spec.inputs[0].shape[0],) + tuple(float_output.shape[1:])
    )
    before = [np.array(w) for w in layer.get_weights()]
    history = trainer.fit(
        spec.all_inputs(), target.astype("float32"), epochs=2, batch_size=len(target), verbose=0
    )
    return before, history


def _first_float_output(model):
    for output in _flatten(model.outputs):
        if "float" in str(output.dtype):
            return output
    raise AssertionError("the layer has no float output to train on")


def _check_fit_xla(spec, tmp_path):
    layer = spec.make_layer()
    before, history = _train_one_epoch(spec, layer, jit_compile=True)
    assert all(np.isfinite(history.history["loss"]))
    after = layer.get_weights()
    if spec.trainable:
        assert any(not np.allclose(b, a) for b, a in zip(before, after)), "fit changed no weight"


def _check_mixed(spec, policy):
    reference = spec.make_layer()
    reference_outputs = _numpy(spec.call(reference, spec.all_inputs(), training=False))
    layer = spec.make_layer(dtype=policy)
    outputs = spec.call(layer, spec.all_inputs(), training=False)
    layer.set_weights(reference.get_weights())
    outputs = spec.call(layer, spec.all_inputs(), training=False)
    for variable in layer.weights:
        assert variable.dtype == "float32", f"{variable.path} is {variable.dtype}"
    compute_dtype = keras.DTypePolicy(policy).compute_dtype
    for output, expected in zip(_flatten(outputs), reference_outputs):
        value = keras.ops.convert_to_numpy(keras.ops.cast(output, "float32"))
        dtype = keras.backend.standardize_dtype(output.dtype)
        if "float" in dtype:
            assert dtype == compute_dtype, f"output dtype {dtype}, expected {compute_dtype}"
        assert np.all(np.isfinite(value)), "non-finite output"
        scale = max(1.0, float(np.max(np.abs(expected))))
        np.testing.assert_allclose(value, expected, atol=spec.mixed_tolerance * scale)


def _check_mixed_float16(spec, tmp_path):
    _check_mixed(spec, "mixed_float16")


def _check_mixed_bfloat16(spec, tmp_path):
    _check_mixed(spec, "mixed_bfloat16")


def _check_keras_file(spec, tmp_path):
    model = _build_model(spec, spec.make_layer())
    expected = _numpy(model(spec.all_inputs(), training=False))
    path = os.path.join(tmp_path, "model.keras")
    model.save(path)
    restored = keras.saving.load_model(path)
    got = _numpy(restored(spec.all_inputs(), training=False))
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def _check_saved_model(spec, tmp_path):
    model = _build_model(spec, spec.make_layer())
    path = os.path.join(tmp_path, "exported")
    model.export(path, format="tf_saved_model", verbose=False)
    reloaded = tf.saved_model.load(path)
    # One more example than the spec's batch: the signature must not fix it.
    bigger = [np.concatenate([array, array[:1]], axis=0) for array in spec.all_inputs()]
    expected = _numpy(model(bigger, training=False))
    served = reloaded.serve(bigger)
    got = [np.asarray(t) for t in _flatten(served)]
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert a.shape[0] == bigger[0].shape[0]
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)

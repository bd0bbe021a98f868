"""require_tensorflow_backend: silent on TensorFlow, a message naming what to do elsewhere."""

import sys

import keras
import pytest

from keras_attention.backend_support import UnsupportedBackendError
from keras_attention.backend_support import current_backend
from keras_attention.backend_support import require_tensorflow_backend


def test_this_session_runs_on_tensorflow_and_passes():
    assert current_backend() == keras.backend.backend() == "tensorflow"
    assert require_tensorflow_backend("SavedModel export") is None


def test_another_backend_is_refused_naming_the_feature_the_backend_and_the_switch(monkeypatch):
    monkeypatch.setattr(keras.backend, "backend", lambda: "jax")
    with pytest.raises(UnsupportedBackendError) as raised:
        require_tensorflow_backend("SavedModel export (export_translator)")
    message = str(raised.value)
    assert message.startswith("SavedModel export (export_translator) needs the TensorFlow backend")
    assert "runs on 'jax'" in message
    assert "KERAS_BACKEND=tensorflow" in message
    assert isinstance(raised.value, RuntimeError)


def test_before_keras_is_imported_the_variable_is_read_without_importing_it(monkeypatch):
    monkeypatch.delitem(sys.modules, "keras")
    monkeypatch.setenv("KERAS_BACKEND", "torch")
    assert current_backend() == "torch"
    assert "keras" not in sys.modules
    with pytest.raises(UnsupportedBackendError, match="runs on 'torch'"):
        require_tensorflow_backend("This example training script")

"""Test session set-up: TensorFlow backend, two logical CPUs, quiet logs."""

import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402

from keras_attention.progress import set_quiet  # noqa: E402

# MirroredStrategy tests need two devices; this must happen before TF starts.
_cpus = tf.config.list_physical_devices("CPU")
tf.config.set_logical_device_configuration(_cpus[0], [tf.config.LogicalDeviceConfiguration()] * 2)


@pytest.fixture(autouse=True)
def _reset_run_state():
    """Each test starts with float32 policy, a fixed seed and progress not set quiet.

    A script run in the test process sets the policy and, with `--quiet`,
    the progress lines for the whole process, as it does for its own.
    """
    keras.config.set_dtype_policy("float32")
    keras.utils.set_random_seed(0)
    set_quiet(False)
    yield
    keras.config.set_dtype_policy("float32")
    set_quiet(False)

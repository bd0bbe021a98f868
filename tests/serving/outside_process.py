"""Exports used from outside this test process: a Python without the package, saved_model_cli.

served = run_without_the_package(SERVE_IMAGES, saved_model_path, images_npy_path)
answers = run_without_the_package(SERVE_REQUESTS, saved_model_path, requests_npz_path)
"""

import json
import os
import subprocess
import sys

# Prepended to every script: from here on, any import of keras_attention fails.
_BLOCK_THE_PACKAGE = 'import sys\nsys.modules["keras_attention"] = None\n'

# Calls a SavedModel's serving signature on the images of a .npy file and prints
# every output as JSON, byte strings decoded.
SERVE_IMAGES = """
import json, sys
import numpy as np
import tensorflow as tf
serve = tf.saved_model.load(sys.argv[1]).signatures["serving_default"]
outputs = serve(images=tf.constant(np.load(sys.argv[2])))
as_text = np.vectorize(lambda item: item.decode("utf-8"), otypes=[object])
served = {
    name: (as_text(value) if value.dtype == object else value).tolist()
    for name, value in ((name, tensor.numpy()) for name, tensor in outputs.items())
}
served["package_imported"] = sys.modules.get("keras_attention") is not None
print(json.dumps(served))
"""


# Calls a SavedModel's serving signature on each request of a .npz file and prints, as
# JSON, {request name: the error message, or the shape of every output}.
SERVE_REQUESTS = """
import json, sys
import numpy as np
import tensorflow as tf
serve = tf.saved_model.load(sys.argv[1]).signatures["serving_default"]
answers = {}
for name, images in np.load(sys.argv[2]).items():
    try:
        outputs = serve(images=tf.constant(images))
        answers[name] = {key: value.shape.as_list() for key, value in outputs.items()}
    except tf.errors.InvalidArgumentError as error:
        answers[name] = error.message
answers["package_imported"] = sys.modules.get("keras_attention") is not None
print(json.dumps(answers))
"""

# TensorFlow's XLA auto-clustering of a graph's ops, as a server may turn it on.
XLA_AUTO_CLUSTERING = {"TF_XLA_FLAGS": "--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit"}


def run_without_the_package(script, *arguments, environment=None):
    """Runs the Python `script` with `arguments` where keras_attention cannot be imported.

    `environment` adds variables to the process's. Returns the JSON value of
    the last line it prints; the process must succeed.
    """
    environment = {
        **os.environ,
        "TF_CPP_MIN_LOG_LEVEL": "3",
        "CUDA_VISIBLE_DEVICES": "",
        **(environment or {}),
    }
    completed = subprocess.run(
        [sys.executable, "-c", _BLOCK_THE_PACKAGE + script, *map(str, arguments)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads(completed.stdout.strip().splitlines()[-1])


def saved_model_cli_show(path):
    """What `saved_model_cli show --all` prints for the SavedModel at `path`."""
    cli = os.path.join(os.path.dirname(sys.executable), "saved_model_cli")
    completed = subprocess.run(
        [cli, "show", "--all", "--dir", str(path)], capture_output=True, text=True, timeout=300
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return completed.stdout

"""`import keras_attention` makes every `.keras` file of the library loadable.

Keras finds a custom class of a `.keras` file (`"keras_attention>MultiHeadAttention"`)
only once the module that defines it has run its `register_keras_serializable`
decorator. The subpackages holding such classes import Keras, and with it
TensorFlow (seconds), so `import keras_attention` cannot import them right
away: the training scripts' `--help` must answer without TensorFlow.

Instead the classes are registered as soon as Keras itself is loaded:

- when `keras` is already imported, `register_when_keras_loads()` imports the
  subpackages of `SERIALIZABLE_SUBPACKAGES` at once, and the modules behind
  their public names (`layers` and `models` load those on first use);
- otherwise it puts a watcher on `sys.meta_path` that notices the first
  `import keras` of the process, lets it finish, and then imports them.
  Keras is often first imported from inside another import (`import
  tensorflow` imports it, and so do `keras_hub` and the library's own
  modules); the subpackages import those packages too, so the registration
  waits until every import of `WAITED_FOR` in progress is complete, and
  no module is asked for a name it has not defined yet. The watcher
  removes itself afterwards.

So `import keras_attention; import keras; keras.models.load_model(path)`
works in either order of the imports, while `python train_vit.py --help`
imports neither Keras nor TensorFlow.

Example (in a process that has imported Keras, as any process loading a
`.keras` file has):

>>> import keras
>>> import keras_attention
>>> keras.saving.get_registered_object("keras_attention>TransformerEncoderBlock").__name__
'TransformerEncoderBlock'
"""

import importlib
import sys
import threading
import warnings

# The subpackages whose modules register classes with Keras: layers,
# models, losses, metrics, and the callbacks beside them.
SERIALIZABLE_SUBPACKAGES = ("layers", "models", "losses", "metrics", "callbacks")

_PACKAGE = __name__.rpartition(".")[0]  # "keras_attention"
# Packages that import Keras while they load and that the subpackages import
# themselves: the registration waits until none of them is still loading.
WAITED_FOR = ("keras", "tensorflow", "keras_hub", "tensorflow_text", "tensorflow_datasets")


def register_serializable_classes():
    """Imports every subpackage that registers classes with Keras, and its modules.

    A subpackage whose names load on first use (an `__all__` beside a PEP 562
    `__getattr__`, as `layers` and `models` have) is asked for each of its
    names, which imports every module that defines one and what those modules
    import: the modules an eager `__init__` would have imported.

    This imports Keras (and its backend). Calling it again costs nothing.

    Returns:
        the names of the subpackages imported.

    Example:

    >>> from keras_attention.registration import register_serializable_classes
    >>> register_serializable_classes()
    ('layers', 'models', 'losses', 'metrics', 'callbacks')
    """
    for name in SERIALIZABLE_SUBPACKAGES:
        subpackage = importlib.import_module(f"{_PACKAGE}.{name}")
        for public_name in getattr(subpackage, "__all__", ()):
            getattr(subpackage, public_name)
    return SERIALIZABLE_SUBPACKAGES


def register_when_keras_loads():
    """Registers the library's classes now if Keras is loaded, else when it loads.

    Called by `keras_attention/__init__.py`; see the module docstring.

    Returns:
        True when the classes were registered now, False when a watcher
        will register them at the first `import keras`.
    """
    if _keras_is_loaded():
        register_serializable_classes()
        return True
    if not any(isinstance(finder, _KerasImportWatcher) for finder in sys.meta_path):
        sys.meta_path.insert(0, _KerasImportWatcher())
    return False


def _keras_is_loaded():
    module = sys.modules.get("keras")
    spec = getattr(module, "__spec__", None)
    return module is not None and not getattr(spec, "_initializing", False)


class _KerasImportWatcher:
    """Wraps the loading of `WAITED_FOR` and `keras_attention` modules (see the module docstring).

    It finds nothing itself: it asks the finders after it for the real
    module spec and wraps that spec's loader, so each module loads as usual.
    (A finder and a loader are protocols; the `importlib.abc` base classes
    would cost `import keras_attention` ten times its own import time.)
    """

    def __init__(self):
        self._lock = threading.RLock()
        self._loading = 0  # modules of WAITED_FOR or keras_attention being executed now
        self._pending = False  # Keras has loaded; the classes wait for registration
        self._done = False

    def find_spec(self, fullname, path=None, target=None):
        watched = fullname in WAITED_FOR or fullname.startswith(_PACKAGE + ".")
        if self._done or not watched:
            return None
        spec = _spec_from_other_finders(self, fullname, path, target)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _WatchedLoader(spec.loader, self, is_keras=fullname == "keras")
        return spec

    def module_executed(self, is_keras, started, succeeded=True):
        """Called when a watched module starts executing, and when it stops."""
        with self._lock:
            if started:
                self._loading += 1
                return
            self._loading -= 1
            self._pending = self._pending or (is_keras and succeeded)
            if not self._pending or self._loading > 0 or self._done:
                return
            self._done = True  # before importing: the imports below come back here
        _remove_from_meta_path(self)
        try:
            register_serializable_classes()
        except Exception as error:  # never turn the user's `import tensorflow` into a failure
            warnings.warn(
                f"keras_attention could not register its classes with Keras "
                f"({type(error).__name__}: {error}); `.keras` files holding them will load "
                "after `keras_attention.registration.register_serializable_classes()`.",
                stacklevel=2,
            )


class _WatchedLoader:
    """A loader that tells the watcher when its module starts and finishes executing."""

    def __init__(self, loader, watcher, is_keras):
        self._loader = loader
        self._watcher = watcher
        self._is_keras = is_keras

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._watcher.module_executed(self._is_keras, started=True)
        succeeded = False
        try:
            self._loader.exec_module(module)
            succeeded = True
        finally:
            self._watcher.module_executed(self._is_keras, started=False, succeeded=succeeded)

    def __getattr__(self, name):
        # get_resource_reader, is_package, get_source ...: the wrapped loader's.
        return getattr(self._loader, name)


def _spec_from_other_finders(watcher, fullname, path, target):
    for finder in sys.meta_path:
        if finder is watcher or not hasattr(finder, "find_spec"):
            continue
        spec = finder.find_spec(fullname, path, target)
        if spec is not None:
            return spec
    return None


def _remove_from_meta_path(watcher):
    try:
        sys.meta_path.remove(watcher)
    except ValueError:
        pass

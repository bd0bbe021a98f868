"""Everything a training script needs for one model family, one package per family.

- `keras_attention.tasks.translation`: `examples/train_nmt.py` (and the quickstart);
- `keras_attention.tasks.captioning`: `examples/train_captioning.py`;
- `keras_attention.tasks.image_classification`: `examples/train_vit.py` (ViT and Swin).

Each holds its family's command line (`flags`, importable without TensorFlow
so that `--help` answers at once), the model its flags describe
(`model_from_flags`), the training recipe derived from the data (`recipe`,
written back into the flags by `recipe_from_flags`), its data sources and
layouts as users download them, its batches, evaluation and figures. The
run plumbing every family shares (run folders, strategies, resuming,
export) is `keras_attention.training`.

The families' public functions load on first use, as the package's
subpackages do:

>>> from keras_attention.tasks import translation
>>> pairs = translation.builtin_translation_pairs(2, seed=0)
>>> len(pairs)
2
"""

import importlib


def lazy_exports(package, exports):
    """A module `__getattr__` that imports `package.<module>` for each exported name.

    Args:
        package: the package's `__name__`.
        exports: dict name -> the package's module that defines it.

    Returns:
        `(__getattr__, __dir__)` functions for the package module (PEP 562).

    Example:

    >>> from keras_attention.tasks import lazy_exports
    >>> getattr_, dir_ = lazy_exports("keras_attention.tasks.translation",
    ...                              {"builtin_translation_pairs": "builtin_corpus"})
    >>> getattr_("builtin_translation_pairs").__name__
    'builtin_translation_pairs'
    """

    def __getattr__(name):
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{exports[name]}"), name)

    def __dir__():
        return sorted(exports)

    return __getattr__, __dir__

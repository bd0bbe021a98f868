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

# A module `__getattr__` per family package, as `keras_attention.layers` has (PEP 562).
from keras_attention.layers import lazy_exports as lazy_exports

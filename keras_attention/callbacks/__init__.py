"""Callbacks for `model.fit`, as `keras.callbacks` has them.

- `DecayOnPlateau`: warm-up, the peak learning rate held while the
  validation loss improves, then a cosine decay to 0 and a stop.
- `LearningMonitor`: one clear warning when training is not learning (the
  validation loss stays at a trivial baseline) or diverges.
- `prior_cross_entropy`: the loss of that trivial baseline, from the labels.
- `SafeBackupAndRestore`: resumable backups written atomically; a corrupt
  one is skipped with a warning and the previous good one used.
- `AtomicModelCheckpoint`: per-epoch `.keras` files, complete or absent.

>>> from keras_attention import callbacks
>>> round(callbacks.prior_cross_entropy([0, 0, 1, 1]), 4)  # ln 2
0.6931
"""

from keras_attention.callbacks.atomic_checkpoint import AtomicModelCheckpoint
from keras_attention.callbacks.decay_on_plateau import DecayOnPlateau
from keras_attention.callbacks.learning_monitor import LearningMonitor
from keras_attention.callbacks.prior_cross_entropy import prior_cross_entropy
from keras_attention.callbacks.safe_backup import SafeBackupAndRestore

"""Callbacks for `model.fit`, as `keras.callbacks` has them.

- `DecayOnPlateau`: warm-up, the peak learning rate held while the
  validation loss improves, then a cosine decay to 0 and a stop.
- `LearningMonitor`: one clear warning when training is not learning (the
  validation loss stays at a trivial baseline) or diverges.
  Its baseline is `keras_attention.losses.prior_cross_entropy`.
- `SafeBackupAndRestore`: resumable backups written atomically; a corrupt
  one is skipped with a warning and the previous good one used.
- `AtomicModelCheckpoint`: per-epoch `.keras` files, complete or absent.

>>> from keras_attention import callbacks
>>> callbacks.LearningMonitor(baseline=0.69).baseline
0.69
"""

from keras_attention.callbacks.atomic_checkpoint import AtomicModelCheckpoint
from keras_attention.callbacks.decay_on_plateau import DecayOnPlateau
from keras_attention.callbacks.learning_monitor import LearningMonitor
from keras_attention.callbacks.safe_backup import SafeBackupAndRestore

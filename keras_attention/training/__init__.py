"""What keeps a training run's work safe: its folder, checked and claimed before training.

- `prepare_run_folder`: resume a folder of the same run, refuse one of another run
  (unless told to overwrite it), record the run's arguments.
- `check_writable`, `check_export_path`: fail before training, not after it; an export
  never replaces the run folder nor a folder that is not an export of this library.
- `claim_output_folder`: a script's folder of fixed-name files, never one of other files.
- `replace_folder`: write a folder (an export) beside its target, then swap it in.
- `hold_run_lock`: one run at a time in a run folder.

The backup and checkpoint callbacks are in `keras_attention.callbacks`.
"""

from keras_attention.training.export_replacement import replace_folder
from keras_attention.training.run_folder import RunFolderError
from keras_attention.training.run_folder import check_export_path
from keras_attention.training.run_folder import check_writable
from keras_attention.training.run_folder import claim_output_folder
from keras_attention.training.run_folder import prepare_run_folder
from keras_attention.training.run_lock import hold_run_lock

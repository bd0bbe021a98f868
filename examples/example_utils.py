"""The training scripts' shared command line and run set-up, from the package.

`keras_attention.training.command_line` (flags, number types) imports no
TensorFlow, so `--help` stays instant; `keras_attention.training.run_setup`
imports it only when its functions run.
"""

from keras_attention.training.command_line import STRATEGIES  # noqa: F401
from keras_attention.training.command_line import add_common_arguments  # noqa: F401
from keras_attention.training.command_line import expand_path  # noqa: F401
from keras_attention.training.command_line import non_negative_float  # noqa: F401
from keras_attention.training.command_line import non_negative_int  # noqa: F401
from keras_attention.training.command_line import positive_float  # noqa: F401
from keras_attention.training.command_line import positive_int  # noqa: F401
from keras_attention.training.command_line import rate  # noqa: F401
from keras_attention.training.run_setup import configure_precision  # noqa: F401
from keras_attention.training.run_setup import export_folder  # noqa: F401
from keras_attention.training.run_setup import jit_compile_for  # noqa: F401
from keras_attention.training.run_setup import make_strategy  # noqa: F401
from keras_attention.training.run_setup import prepare_output  # noqa: F401
from keras_attention.training.run_setup import progress_verbosity  # noqa: F401
from keras_attention.training.run_setup import tensorboard_available  # noqa: F401
from keras_attention.training.run_setup import training_callbacks  # noqa: F401
from keras_attention.training.run_setup import write_metrics  # noqa: F401

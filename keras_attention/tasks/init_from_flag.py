"""`--init-from` of every training script: a checkpoint folder or a hub handle, made a folder.

A handle (`hf://ORG/NAME[@REVISION]`, `kaggle://...`, a keras-hub preset
name) is fetched into its hub's cache, or found there, by
`models.checkpoints.checkpoint_handles`; the scripts then read the folder as
they read one given by path. `check_init_from` runs before TensorFlow loads
(an `hf://` handle needs only huggingface_hub), so a handle missing from the
cache in offline mode, or a misspelt path, costs no start-up; the parse after
it sets `args.init_from` to the folder with `init_from_folder`.

Example:

>>> import argparse, tempfile
>>> from keras_attention.tasks.init_from_flag import init_from_folder
>>> folder = tempfile.mkdtemp()
>>> _ = open(f"{folder}/config.json", "w").write('{"model_type": "marian"}')
>>> args = argparse.Namespace(init_from=folder)
>>> init_from_folder(argparse.ArgumentParser(), args) == folder == args.init_from
True
"""

import os

from keras_attention.models.checkpoints.checkpoint_folders import CONFIG_FILE
from keras_attention.models.checkpoints.checkpoint_folders import KERAS_HUB_METADATA_FILE
from keras_attention.models.checkpoints.checkpoint_handles import checkpoint_folder
from keras_attention.models.checkpoints.checkpoint_handles import is_checkpoint_handle
from keras_attention.training.command_line import expand_path
from keras_attention.training.command_line import usage_error

# A checkpoint folder holds one of these: a Hugging Face model's, or a keras-hub preset's.
CHECKPOINT_FILES = (CONFIG_FILE, KERAS_HUB_METADATA_FILE)
HANDLES = (
    "hf://ORG/NAME[@REVISION], kaggle://OWNER/MODEL/keras/VARIANT[/VERSION] or a keras-hub "
    "preset name"
)


def init_from_checkpoint_folder(given):
    """The folder `--init-from given` names: a handle's in its hub's cache, else the path expanded.

    Raises:
        ValueError: one line, for a handle that cannot be had (`checkpoint_folder`).
    """
    return checkpoint_folder(
        given if is_checkpoint_handle(given) else expand_path(given), "--init-from"
    )


def _folder(parser, given):
    """The folder of `--init-from given`, or a one-line usage error."""
    try:
        folder = init_from_checkpoint_folder(given)
    except ValueError as error:
        usage_error(parser, str(error))
    if not os.path.isdir(folder):
        usage_error(
            parser,
            f"--init-from must be a checkpoint folder or a handle ({HANDLES}); {folder} is "
            f"neither. Received: --init-from {given}",
        )
    if not any(os.path.isfile(os.path.join(folder, name)) for name in CHECKPOINT_FILES):
        files = sorted(os.listdir(folder))
        held = f"its files: {', '.join(files[:5])}{', ...' if len(files) > 5 else ''}"
        usage_error(
            parser,
            f"--init-from must be a checkpoint folder, holding a Hugging Face model's "
            f"{CONFIG_FILE} or a keras-hub preset's {KERAS_HUB_METADATA_FILE}; {folder} holds "
            f"neither ({held if files else 'it is empty'}). Received: --init-from {given}",
        )
    return folder


def check_init_from(parser, args):
    """Stops with one `error:` line where `--init-from` names no folder and no reachable handle."""
    if getattr(args, "init_from", None):
        _folder(parser, args.init_from)


def init_from_folder(parser, args):
    """Sets `args.init_from` to its checkpoint's folder (a handle's in the hub's cache); returns it.

    The scripts print the folder as they start from it ("starting from ...").
    """
    args.init_from = _folder(parser, args.init_from)
    return args.init_from

"""The SavedModel of a training run that is over, from its last checkpoint: no retraining.

A run of the example scripts leaves `checkpoints/epoch_NNN.keras` after
every epoch, with the model's tokenizers inside (older runs: under
`vocabulary/`). `export_run` loads the newest checkpoint that reads (or the
one named) and writes the serving model the script's `--export` writes:
strings in, translations out for a translator; pixels or image bytes in,
captions out for a captioner; pixels in, class names out for a classifier.
The export folder is checked as `--export` is (absent, empty, or an export
of this library, never the run's own folders) and replaced whole.

    python -m keras_attention.export runs/nmt --export runs/nmt/served
    python -m keras_attention.export runs/captioning --export served --beam-width 3
"""

import json
import os
import time
import zipfile

from keras_attention.durable_files import numbered_entries
from keras_attention.training.run_folder import ARGUMENTS_FILE
from keras_attention.training.run_folder import RunFolderError
from keras_attention.training.run_folder import check_export_path
from keras_attention.training.run_folder import recorded_arguments

# Where the example scripts save each role's vocabulary inside a run folder.
VOCABULARY_FOLDERS = {
    "source": os.path.join("vocabulary", "source"),
    "target": os.path.join("vocabulary", "target"),
    "caption": "vocabulary",
}


def export_run(run_dir, export_path, *, checkpoint=None, beam_width=1, max_length=None, say=print):
    """Writes the SavedModel of the run in `run_dir` to `export_path`.

    Args:
        run_dir: the run's `--output-dir`.
        export_path: the folder to write (see `check_export_path`).
        checkpoint: a `.keras` file to export; default: the newest of
            `run_dir/checkpoints` that loads.
        beam_width: 1 for greedy search, more for beam search (text models).
        max_length: the longest translation or caption, in tokens; default
            the model's own, or the `max_length` the run recorded.
        say: where the one line per stage goes.

    Returns:
        `(export_path, checkpoint)`: the folder written and the checkpoint it came from.

    Raises:
        RunFolderError: `run_dir` is not a run, has no checkpoint, or
            `export_path` cannot be used.
        ValueError: the checkpoint's model is of no kind this exports.
    """
    import keras

    from keras_attention.backend_support import require_tensorflow_backend
    from keras_attention.training.run_setup import export_folder

    require_tensorflow_backend("Exporting a run")
    recorded = _recorded_arguments(run_dir)
    export_path = os.path.abspath(os.path.expanduser(export_path))
    check_export_path(export_path, run_dir)
    candidates = [checkpoint] if checkpoint else _checkpoints(run_dir)
    model, checkpoint = _load_newest(candidates, keras, say)
    write = _serving_writer(model, run_dir, recorded, beam_width, max_length)
    say(f"writing the SavedModel of {type(model).__name__} to {export_path} ...")
    start = time.time()
    export_folder(export_path, write)
    say(f"SavedModel written to {export_path} in {time.time() - start:.0f} s")
    return export_path, checkpoint


def _recorded_arguments(run_dir):
    recorded = recorded_arguments(run_dir)
    if recorded is None:
        state = "" if os.path.isdir(run_dir) else ", and it does not exist"
        raise RunFolderError(
            f"`run_dir` must be the --output-dir of a training run (with a readable "
            f"{ARGUMENTS_FILE}){state}. Received: run_dir={run_dir!r}"
        )
    # The lengths a finished run derived from its data are in its metrics.
    try:
        with open(os.path.join(run_dir, "metrics.json")) as file:
            metrics = json.load(file)
        if recorded.get("max_length") is None and isinstance(metrics, dict):
            recorded["max_length"] = metrics.get("max_length")
    except (OSError, ValueError):
        pass
    return recorded


def _checkpoints(run_dir):
    checkpoints = [
        path
        for _, path in numbered_entries(os.path.join(run_dir, "checkpoints"), "epoch_", ".keras")
    ]
    if not checkpoints:
        raise RunFolderError(
            f"`run_dir` holds no checkpoint (checkpoints/epoch_NNN.keras): the run trained no "
            f"epoch yet. Received: run_dir={run_dir!r}"
        )
    return checkpoints


def _load_newest(candidates, keras, say):
    """The first of `candidates` that loads, as `(model, path)`; a broken one is named."""
    errors = []
    for path in candidates:
        say(f"loading {path} ...")
        if not zipfile.is_zipfile(path):  # keras would call it "File not found"
            errors.append(
                f"{path}: not a .keras (zip) file, {os.path.getsize(path)} bytes: cut short "
                "or damaged"
            )
            say("  cannot be read (not a zip file)" + _next_try(path, candidates))
            continue
        try:
            return keras.saving.load_model(path, compile=False), path
        except Exception as error:  # a truncated zip, a file of another library version
            errors.append(f"{path}: {type(error).__name__}: {error}")
            say(f"  cannot be read ({type(error).__name__})" + _next_try(path, candidates))
    raise RunFolderError("no checkpoint of the run can be loaded: " + "; ".join(errors))


def _next_try(path, candidates):
    """What happens after `path` failed: an older checkpoint is tried, if there is one."""
    return "; trying an older checkpoint" if path != candidates[-1] else ""


def _serving_writer(model, run_dir, recorded, beam_width, max_length):
    """`write(folder)` for the model's kind: translator, captioner or image classifier."""
    roles = getattr(model, "tokenizer_roles", ())
    if roles:
        tokenizers = _tokenizers(model, run_dir, roles)
    if "source" in roles:
        length = max_length or recorded.get("max_length")
        lengths = {
            "max_source_length": getattr(model, "max_source_length", None) or length,
            "max_target_length": max_length or getattr(model, "max_target_length", None) or length,
        }
        if None in lengths.values():
            raise RunFolderError(
                f"--max-length must be given for this {type(model).__name__}: it has no length "
                "of its own, and the run recorded none (derived from the data, it is in "
                f"metrics.json once the run ends). Received: run_dir={run_dir!r}"
            )
        return lambda folder: model.export(folder, *tokenizers, beam_width=beam_width, **lengths)
    if "caption" in roles:
        return lambda folder: model.export(
            folder, *tokenizers, max_length=max_length, beam_width=beam_width
        )
    if hasattr(model, "class_names") and hasattr(model, "classify"):
        from keras_attention.serving.image_classification_export import export_image_classifier

        return lambda folder: export_image_classifier(model, folder, model.class_names)
    raise ValueError(
        f"The checkpoint holds a {type(model).__name__}, which keras_attention.export does not "
        "export: a translator, a captioner or an image classifier of this library is expected"
    )


def _tokenizers(model, run_dir, roles):
    """The tokenizers the checkpoint holds, or the ones the run saved under `vocabulary/`."""
    held = model.tokenizers
    if len(held) == len(roles):
        return [held[role] for role in roles]
    from keras_attention.text.tokenizer_files import load_tokenizer

    folders = [os.path.join(run_dir, VOCABULARY_FOLDERS[role]) for role in roles]
    try:
        return [load_tokenizer(folder) for folder in folders]
    except ValueError:
        raise RunFolderError(
            f"The checkpoint holds no tokenizer, and `run_dir` has none under "
            f"{', '.join(folders)}. Received: run_dir={run_dir!r}"
        ) from None

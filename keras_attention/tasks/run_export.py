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


def export_run(
    run_dir, export_path, *, checkpoint=None, beam_width=None, max_length=None, say=print
):
    """Writes the SavedModel of the run in `run_dir` to `export_path`.

    Args:
        run_dir: the run's `--output-dir`.
        export_path: the folder to write (see `check_export_path`).
        checkpoint: a `.keras` file to export; default: the newest of
            `run_dir/checkpoints` that loads. One from elsewhere must hold
            the model the run's own checkpoints hold (same class and
            constructor arguments): the run's vocabularies and lengths go
            with it.
        beam_width: 1 (default) for greedy search, more for beam search;
            translators and captioners only.
        max_length: the longest translation or caption, in tokens; default
            the model's own, or the `max_length` the run recorded;
            translators and captioners only.
        say: where the one line per stage goes.

    Returns:
        `(export_path, checkpoint)`: the folder written and the checkpoint it came from.

    Raises:
        RunFolderError: `run_dir` is not a run, has no checkpoint, or
            `export_path` cannot be used; `checkpoint` holds another model
            than the run's; search settings for an image classifier.
        ValueError: the checkpoint's model is of no kind this exports.
    """
    import keras

    from keras_attention.backend_support import require_tensorflow_backend
    from keras_attention.training.run_setup import export_folder

    require_tensorflow_backend("Exporting a run")
    recorded = _recorded_arguments(run_dir)
    export_path = os.path.abspath(os.path.expanduser(export_path))
    check_export_path(export_path, run_dir)
    if checkpoint:
        checkpoint = os.path.expanduser(checkpoint)
        if not os.path.isfile(checkpoint):
            state = "is a folder" if os.path.isdir(checkpoint) else "does not exist"
            raise RunFolderError(
                f"`--checkpoint` must be a .keras file. Received: --checkpoint {checkpoint}, "
                f"which {state}"
            )
        _check_checkpoint_of_run(checkpoint, run_dir)
    candidates = [checkpoint] if checkpoint else _checkpoints(run_dir)
    model, checkpoint = _load_newest(candidates, keras, say)
    write = _serving_writer(model, run_dir, recorded, beam_width, max_length)
    say(f"writing the SavedModel of {type(model).__name__} to {export_path} ...")
    start = time.time()
    export_folder(export_path, write, source=run_dir)
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


def _check_checkpoint_of_run(checkpoint, run_dir):
    """A checkpoint from outside the run's `checkpoints/` must hold the model the run trains.

    Compared with the newest of the run's own checkpoints whose config
    reads (a `.keras` file is a zip with `config.json`): the class and every
    plain constructor argument (numbers, strings, flags and lists of them).
    A run with no readable checkpoint is not compared.
    """
    inside = os.path.realpath(os.path.join(run_dir, "checkpoints"))
    if os.path.dirname(os.path.realpath(checkpoint)) == inside:
        return
    given = _model_config(checkpoint)
    if given is None:
        return  # loading it says what is wrong
    for own in _checkpoints_or_none(run_dir):
        theirs = _model_config(own)
        if theirs is None:
            continue
        differences = [
            f"{key}={given[key]!r} against {theirs[key]!r}"
            for key in sorted(set(given) & set(theirs) - {"name"})
            if given[key] != theirs[key]
        ]
        if differences:
            raise RunFolderError(
                f"`--checkpoint` holds another model than the run in {run_dir}: "
                f"{', '.join(differences[:3])} in {own}. Export a checkpoint with its own run "
                f"folder. Received: --checkpoint {checkpoint}"
            )
        return


def _model_config(path):
    """`{"class_name": ..., plain constructor arguments...}` of a `.keras` file, or None."""
    try:
        with zipfile.ZipFile(path) as archive:
            saved = json.loads(archive.read("config.json"))
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        return None
    config = saved.get("config") if isinstance(saved, dict) else None
    if not isinstance(config, dict):
        return None
    scalar = (int, float, str, bool, type(None))

    def plain(value):  # a number, a string, or a list of them (class names, depths)
        items = value if isinstance(value, list) else [value]
        return all(isinstance(item, scalar) for item in items)

    return {
        "class_name": saved.get("class_name"),
        **{key: value for key, value in config.items() if plain(value)},
    }


def _checkpoints_or_none(run_dir):
    try:
        return _checkpoints(run_dir)
    except RunFolderError:
        return []


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
        return lambda folder: model.export(
            folder, *tokenizers, beam_width=beam_width or 1, **lengths
        )
    if "caption" in roles:
        return lambda folder: model.export(
            folder, *tokenizers, max_length=max_length, beam_width=beam_width or 1
        )
    if hasattr(model, "class_names") and hasattr(model, "classify"):
        from keras_attention.serving.image_classification_export import export_image_classifier

        for flag, value in (("--beam-width", beam_width), ("--max-length", max_length)):
            if value is not None:
                raise RunFolderError(
                    f"`{flag}` sets a translator's or captioner's search; the checkpoint holds "
                    f"a {type(model).__name__}, an image classifier. Received: {flag} {value}"
                )

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

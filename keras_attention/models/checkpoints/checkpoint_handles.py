"""Pretrained checkpoints by name: a hub handle turned into the local folder it is cached in.

Users start from names, not folders. `checkpoint_folder` turns each kind of
name into a folder the readers of `checkpoint_readers` read:

- a folder path: itself (`~` expanded);
- `hf://ORG/NAME`, or `hf://ORG/NAME@REVISION` (a branch, tag or commit):
  the snapshot `huggingface_hub` keeps in its cache, downloaded first where
  it is missing. Its settings are honoured: `HF_HOME` / `HF_HUB_CACHE` say
  where the cache is, `HF_HUB_OFFLINE=1` forbids the network, `HF_TOKEN`
  opens gated models. Only the files a reader uses are fetched (JSON,
  safetensors, SentencePiece models, keras-hub's `*.weights.h5`), never
  the TensorFlow or Flax copies of the weights a repository also holds;
  `pytorch_model.bin` only where it holds no safetensors. A keras-hub preset
  published on Hugging Face is an `hf://` handle too;
- a keras-hub handle, `kaggle://OWNER/MODEL/keras/VARIANT[/VERSION]` or a
  keras-hub preset name (`vit_base_patch16_224_imagenet`): fetched through
  keras-hub's own preset loader into kagglehub's cache (`KAGGLEHUB_CACHE`).

A name that cannot be had stops with one line saying what to do. This
module imports neither Keras nor TensorFlow for a folder or an `hf://`
handle, so the training scripts check `--init-from` before TensorFlow loads.

Example:

>>> from keras_attention.models.checkpoints.checkpoint_handles import parse_hf_handle
>>> parse_hf_handle("hf://google/vit-base-patch16-224")
('google/vit-base-patch16-224', None)
>>> parse_hf_handle("hf://Helsinki-NLP/opus-mt-en-de@refs/pr/4")
('Helsinki-NLP/opus-mt-en-de', 'refs/pr/4')
"""

import os
import re

HF_PREFIX = "hf://"
# The schemes keras-hub's preset loader fetches besides hf:// (kagglehub, TensorFlow's
# file systems, ModelScope).
KERAS_HUB_PREFIXES = ("kaggle://", "gs://", "s3://", "modelscope://")
# What a reader reads from a Hugging Face repository: configs, tokenizer files and weights;
# a repository's tf_model.h5, flax_model.msgpack and ONNX copies are left on the hub.
HF_PATTERNS = ("*.json", "*.safetensors", "*.spm", "*.model", "*.txt", "*.weights.h5", "assets/*")
HF_PICKLED_WEIGHTS = "pytorch_model.bin"
# The files of a keras-hub preset folder (save_to_preset); the first must be there.
KERAS_HUB_FILES = ("config.json", "metadata.json", "model.weights.h5")
KERAS_HUB_OPTIONAL_FILES = ("task.json", "task.weights.h5", "preprocessor.json")
_REPOSITORY_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*(/[A-Za-z0-9][A-Za-z0-9_.-]*)?")
_PRESET_NAME = re.compile(r"[a-z0-9][a-z0-9_]*")
_COMMIT = re.compile(r"[0-9a-f]{40}")


def is_checkpoint_handle(preset):
    """Whether `preset` is a hub handle (`hf://...`, `kaggle://...`) rather than a path.

    A keras-hub preset name (no scheme) is not told from a path here: it is
    one where no folder of that name exists (`checkpoint_folder`).
    """
    return isinstance(preset, str) and preset.startswith((HF_PREFIX, *KERAS_HUB_PREFIXES))


def parse_hf_handle(handle, argument="preset"):
    """`(repository id, revision or None)` of `hf://ORG/NAME[@REVISION]`.

    Raises:
        ValueError: naming `argument`, for a handle of another form.
    """
    name, _, revision = handle[len(HF_PREFIX) :].partition("@")
    if not _REPOSITORY_ID.fullmatch(name) or (revision == "" and "@" in handle):
        raise ValueError(
            f"`{argument}` must be a Hugging Face handle hf://ORG/NAME or hf://ORG/NAME@REVISION "
            f"(a branch, tag or commit). Received: {argument}={handle!r}"
        )
    return name, revision or None


def checkpoint_folder(preset, argument="preset"):
    """The local folder that holds the checkpoint `preset` names.

    Args:
        preset: a folder path, an `hf://` handle, a keras-hub handle or a
            keras-hub preset name.
        argument: the name to give `preset` in errors (e.g. "--init-from").

    Returns:
        the folder's path: `preset` itself for a folder, else the snapshot in
        the hub's cache. A path that is no folder is returned as it is, for
        the readers to refuse in their own words.

    Raises:
        ValueError: one line, for a handle that is malformed or cannot be had
            (not cached in offline mode, not on the hub, no connection).
    """
    if isinstance(preset, os.PathLike):
        return preset  # a folder path: no handle to resolve
    if not isinstance(preset, str):
        raise ValueError(
            f"`{argument}` must be a checkpoint folder's path, an hf:// or kaggle:// handle, or "
            f"a preset name. Received: {argument}={preset!r}"
        )
    if preset.startswith(HF_PREFIX):
        return huggingface_snapshot(preset, argument)
    if preset.startswith(KERAS_HUB_PREFIXES):
        return keras_hub_preset_folder(preset, argument)
    folder = os.path.expanduser(preset)
    if not os.path.exists(folder) and _PRESET_NAME.fullmatch(preset):
        if preset in _keras_hub_builtin_presets():
            return keras_hub_preset_folder(preset, argument)
    return folder


def huggingface_snapshot(handle, argument="preset"):
    """The folder of `hf://ORG/NAME[@REVISION]` in huggingface_hub's cache, fetched if missing.

    Raises:
        ValueError: one line naming the handle and what to do.
    """
    import huggingface_hub
    from huggingface_hub import constants
    from huggingface_hub import errors

    repository, revision = parse_hf_handle(handle, argument)
    offline = bool(constants.HF_HUB_OFFLINE)
    fetch = f"hf download {repository}" + (f" --revision {revision}" if revision else "")
    try:
        folder = _cached_commit(repository, revision) or huggingface_hub.snapshot_download(
            repository,
            revision=revision,
            allow_patterns=list(HF_PATTERNS),
            local_files_only=offline,
        )
        if not offline and not _holds_weights(folder):
            folder = huggingface_hub.snapshot_download(
                repository, revision=revision, allow_patterns=[HF_PICKLED_WEIGHTS]
            )
    except errors.RevisionNotFoundError:
        raise ValueError(
            f"`{argument}`: {repository} has no revision {revision!r} on the Hugging Face Hub. "
            f"Received: {argument}={handle!r}"
        ) from None
    except errors.GatedRepoError:
        raise ValueError(
            f"`{argument}`: {repository} is gated: accept its terms on huggingface.co and set "
            f"HF_TOKEN. Received: {argument}={handle!r}"
        ) from None
    except errors.RepositoryNotFoundError:
        raise ValueError(
            f"`{argument}`: {repository} is not on the Hugging Face Hub (or is private: set "
            f"HF_TOKEN). Received: {argument}={handle!r}"
        ) from None
    except errors.LocalEntryNotFoundError:
        why = "offline mode is on (HF_HUB_OFFLINE=1)" if offline else "the hub could not be reached"
        raise ValueError(
            f"`{argument}`: {handle} is not in the Hugging Face cache {constants.HF_HUB_CACHE} "
            f"and {why}. Fetch it once where there is a network, with the same HF_HOME: "
            f"`{fetch}`; or give a folder. Received: {argument}={handle!r}"
        ) from None
    return folder


def _cached_commit(repository, revision):
    """The cached snapshot of `revision` where it is a commit (which never changes), else None."""
    if revision is None or not _COMMIT.fullmatch(revision):
        return None
    import huggingface_hub
    from huggingface_hub import errors

    try:
        return huggingface_hub.snapshot_download(
            repository, revision=revision, local_files_only=True
        )
    except errors.LocalEntryNotFoundError:
        return None


def _holds_weights(folder):
    return any(name.endswith((".safetensors", ".weights.h5")) for name in os.listdir(folder))


def _keras_hub_builtin_presets():
    """keras-hub's preset names, `{name: ...}` (imports keras-hub, and with it TensorFlow)."""
    # keras-hub has no public function that fetches a preset's files to a folder: its
    # loader's get_file is the one that knows every scheme and builtin name.
    from keras_hub.src.utils import preset_utils

    return preset_utils.BUILTIN_PRESETS


def keras_hub_preset_folder(preset, argument="preset"):
    """The cached folder of a keras-hub handle or preset name, fetched by keras-hub's loader.

    Raises:
        ValueError: one line, where keras-hub cannot fetch the preset's config.
    """
    from keras_hub.src.utils import preset_utils

    try:
        config = preset_utils.get_file(preset, KERAS_HUB_FILES[0])
        for name in KERAS_HUB_FILES[1:]:
            preset_utils.get_file(preset, name)
    except Exception as error:  # kagglehub and the file systems raise their own kinds
        reason = " ".join(str(error).split()) or type(error).__name__
        raise ValueError(
            f"`{argument}`: keras-hub could not fetch {preset} ({reason}). With no network, "
            "name a version (kaggle://OWNER/MODEL/keras/VARIANT/VERSION) that is in "
            f"kagglehub's cache, or give a folder. Received: {argument}={preset!r}"
        ) from None
    for name in KERAS_HUB_OPTIONAL_FILES:
        try:
            preset_utils.get_file(preset, name)
        except Exception:  # noqa: BLE001  a backbone preset has no task or preprocessor files,
            pass  # and with no network kagglehub cannot say so: the reader then asks for them
    return os.path.dirname(config)

"""Hub caches laid out by tests as huggingface_hub and kagglehub lay them out after a download.

No network is needed: `put_in_hf_cache` copies a checkpoint folder into a
Hugging Face cache (`$HF_HOME/hub/models--ORG--NAME/`: the files as blobs,
named by their SHA-256 as LFS files are, `refs/<branch>` holding the commit,
and `snapshots/<commit>/` of relative links to the blobs), and
`put_in_kaggle_cache` into kagglehub's (`$KAGGLEHUB_CACHE/models/...`, with
its completion markers written by kagglehub's own cache class).
"""

import hashlib
import os
import pathlib
import shutil


def put_in_hf_cache(
    folder, hf_home, repository, commit="0123456789abcdef0123456789abcdef01234567", branch="main"
):
    """Lays `folder`'s files out in the Hugging Face cache under `hf_home`; returns the snapshot.

    Args:
        folder: the checkpoint folder to cache.
        hf_home: the `HF_HOME` of the processes that read it.
        repository: "ORG/NAME".
        commit: the 40-hex commit the snapshot is kept under.
        branch: the ref that points at `commit` (None: none does).
    """
    repo = pathlib.Path(hf_home) / "hub" / ("models--" + repository.replace("/", "--"))
    blobs, snapshot = repo / "blobs", repo / "snapshots" / commit
    blobs.mkdir(parents=True, exist_ok=True)
    for source in sorted(pathlib.Path(folder).rglob("*")):
        if not source.is_file():
            continue
        data = source.read_bytes()
        blob = blobs / hashlib.sha256(data).hexdigest()
        blob.write_bytes(data)
        link = snapshot / source.relative_to(folder)
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(blob, link.parent))
    if branch is not None:
        (repo / "refs").mkdir(exist_ok=True)
        (repo / "refs" / branch).write_text(commit)
    return snapshot


def put_in_kaggle_cache(folder, cache, handle):
    """Copies `folder`'s files into kagglehub's cache `cache` as downloads of `handle`.

    `handle`: "OWNER/MODEL/FRAMEWORK/VARIANT/VERSION" (a version is what lets
    kagglehub answer from its cache with no network). Returns the cached folder.
    """
    os.environ["KAGGLEHUB_CACHE"] = str(cache)  # kagglehub reads it on each call
    from kagglehub.cache import Cache
    from kagglehub.handle import parse_model_handle

    parsed = parse_model_handle(handle)
    kaggle_cache = Cache()
    for source in sorted(pathlib.Path(folder).iterdir()):
        if source.is_file():
            target = pathlib.Path(kaggle_cache.get_path(parsed, source.name))
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            kaggle_cache.mark_as_complete(parsed, source.name)
    return pathlib.Path(kaggle_cache.get_path(parsed))

"""Finding the image files TensorFlow cannot decode, before they stop training."""

import warnings

import tensorflow as tf


def undecodable_images(paths, progress=None):
    """The entries of `paths` that `tf.io.decode_image` cannot read, in order.

    Every file is read and decoded once, in parallel; a truncated, empty,
    unreadable or non-image file is reported instead of failing the
    pipeline mid-epoch with an error that does not name it.

    Args:
        paths: list of file paths (str).
        progress: None, or an object whose `add(count)` is called as files
            are checked (a `keras_attention.progress.ProgressBar`).

    Returns:
        list of str.

    Example:

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> broken = os.path.join(folder, "broken.png")
    >>> _ = open(broken, "wb").write(b"not a png")
    >>> undecodable_images([broken]) == [broken]
    True
    """
    if not paths:
        return []
    dataset = tf.data.Dataset.from_tensor_slices(list(paths))
    # Decoding errors drop the element; what survives names the readable files.
    dataset = dataset.map(
        lambda path: (
            path,
            tf.size(tf.io.decode_image(tf.io.read_file(path), channels=3, expand_animations=False)),
        ),
        num_parallel_calls=tf.data.AUTOTUNE,
    ).ignore_errors()
    readable = set()
    for path, _ in dataset:
        readable.add(path.numpy().decode("utf-8"))
        if progress is not None:
            progress.add(1)
    if progress is not None:
        progress.add(len(paths) - len(readable))  # the files that failed count as checked
    return [path for path in paths if path not in readable]


def report_undecodable_images(bad, source, strict=False, max_names=10):
    """Warns about (or with `strict`, raises a ValueError naming) the files in `bad`.

    Args:
        bad: list of file paths that cannot be decoded.
        source: what they belong to, e.g. the `--dataset` value.
        strict: raise instead of warning.
        max_names: files named in the message before "... (N more)".

    Example:

    >>> report_undecodable_images([], "folder:x")  # nothing to say
    """
    if not bad:
        return
    shown = ", ".join(bad[:max_names])
    more = len(bad) - max_names
    names = shown + (f", ... ({more} more)" if more > 0 else "")
    if strict:
        raise ValueError(
            f"{len(bad)} image file(s) of {source} cannot be decoded: {names}. "
            "Remove or repair them, or run without --strict to skip them."
        )
    warnings.warn(
        f"Skipping {len(bad)} image file(s) of {source} that cannot be decoded: {names}",
        stacklevel=2,
    )

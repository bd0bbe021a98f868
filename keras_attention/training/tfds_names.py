"""Whether a tensorflow-datasets name can be loaded, answered without TensorFlow or a network.

A misspelt `--dataset` ('buitin', 'ted_hrlr_translate/pt_to_xx') would
otherwise reach `tfds.builder` after TensorFlow has loaded and the run has
claimed its folder, and end in a traceback listing every data set tfds
knows. `tfds_name_problem` reads tfds' registry of builders (their code is
imported, not their data, and TensorFlow is not) and the data directory, so
the scripts can stop at once with one line that says what is wrong and what
the name is close to.

A name is `builder`, `builder/config` or either with `:version`. It is
accepted when tfds has the builder (and, with a config, the builder has it),
or when the data directory holds a folder prepared under that name, as tfds
reads a prepared copy whose builder code it lacks.

Example:

>>> from keras_attention.training.tfds_names import tfds_name_problem
>>> tfds_name_problem("ted_hrlr_translate/pt_to_en") is None
True
>>> print(tfds_name_problem("ted_hrlr_translate/pt_to_xx"))
'ted_hrlr_translate' has no config 'pt_to_xx' (did you mean 'pt_to_en'?)
"""

import difflib
import os

# How alike a name must be to another to be offered as "did you mean" (difflib's ratio).
_CLOSE_ENOUGH = 0.75


def tfds_data_dir(data_dir=None):
    """The folder tfds reads prepared data sets from: `data_dir`, else its default.

    tfds' default is `$TFDS_DATA_DIR`, else `~/tensorflow_datasets`.

    Example:

    >>> from keras_attention.training.tfds_names import tfds_data_dir
    >>> tfds_data_dir("/data/tfds")
    '/data/tfds'
    """
    default = os.environ.get("TFDS_DATA_DIR") or os.path.join("~", "tensorflow_datasets")
    return os.path.expanduser(data_dir or default)


def tfds_name_problem(name, data_dir=None, other_names=("builtin",)):
    """None when tfds can load `name`; else what is wrong, in words, with the closest names.

    Args:
        name: a tensorflow-datasets name, `builder[/config][:version]`.
        data_dir: the data directory given (`--data-dir`), or None for tfds' default.
        other_names: names the caller takes besides tfds' ones, offered when close
            (a typo of 'builtin' is more likely than a tfds set).

    Returns:
        None, or a string such as "'buitin' is neither a tensorflow-datasets set nor
        prepared in ~/tensorflow_datasets (did you mean 'builtin'?)".

    Example:

    >>> from keras_attention.training.tfds_names import tfds_name_problem
    >>> print(tfds_name_problem("buitin", data_dir="/nowhere"))
    'buitin' is neither a tensorflow-datasets set nor prepared in /nowhere (did you mean 'builtin'?)
    """
    import tensorflow_datasets as tfds  # Imported here: only named sets need it.

    builder, _, config = name.split(":")[0].partition("/")
    folder = tfds_data_dir(data_dir)
    registered = tfds.list_builders(with_community_datasets=False)
    if builder not in registered:
        if os.path.isdir(os.path.join(folder, builder)):
            return None  # a prepared copy; tfds reads its configs from the folder
        candidates = dict.fromkeys([*other_names, *registered])  # tfds lists some twice
        close = difflib.get_close_matches(builder, list(candidates), n=3, cutoff=_CLOSE_ENOUGH)
        return (
            f"{builder!r} is neither a tensorflow-datasets set nor prepared in "
            f"{folder}{_did_you_mean(close)}"
        )
    try:
        configs = [c.name for c in tfds.builder_cls(builder).BUILDER_CONFIGS or ()]
    except Exception:  # a builder whose code needs more to import: tfds will say so itself
        return None
    if not config or not configs or config in configs:
        return None
    close = difflib.get_close_matches(config, configs, n=3, cutoff=_CLOSE_ENOUGH)
    return f"{builder!r} has no config {config!r}" + (
        _did_you_mean(close) if close else f"; its configs: {', '.join(configs)}"
    )


def _did_you_mean(names):
    """' (did you mean 'a' or 'b'?)', or '' for no names."""
    if not names:
        return ""
    return f" (did you mean {' or '.join(repr(name) for name in names)}?)"

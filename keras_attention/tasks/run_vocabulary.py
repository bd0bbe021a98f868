"""What a run learns from its data before training, kept for as long as the run trains on.

A model's embeddings and output layer are laid out by the vocabulary (or
the class names) its run learned from the data on its first start. A run
started again in the same `--output-dir` (to resume it, or to train it for
more epochs) goes on with the weights it saved: learning the vocabulary
again, from data that may have changed since (lines appended, captions
edited), would give the token ids other meanings under those weights, or
other sizes that no saved weight fits. So once a run has trained:

- `kept_tokenizers` reads back the tokenizers it saved under
  `OUTPUT_DIR/vocabulary` instead of learning them again;
- `keep_class_names` writes the class names of its first start to
  `OUTPUT_DIR/vocabulary/classes.json`, and refuses, in one line naming
  both lists, data whose classes are no longer those.

Example:

>>> import os, tempfile
>>> from keras_attention.tasks.run_vocabulary import keep_class_names
>>> run = tempfile.mkdtemp()
>>> keep_class_names(run, ["cat", "dog"], "folder:pets")
>>> os.makedirs(os.path.join(run, "checkpoints"))
>>> open(os.path.join(run, "checkpoints", "epoch_001.keras"), "w").close()  # it trained
>>> keep_class_names(run, ["bird", "cat", "dog"], "folder:pets")
Traceback (most recent call last):
...
ValueError: folder:pets now has 3 classes (bird, cat, dog), but the run in ... trained on 2 \
(cat, dog): ...
"""

import json
import os

from keras_attention.durable_files import write_file_atomically
from keras_attention.text.tokenizer_files import load_tokenizer
from keras_attention.training.run_folder import trained_epochs
from keras_attention.training.run_setup import BACKUP_FOLDER
from keras_attention.training.worker_folders import shared_output_dir

VOCABULARY_FOLDER = "vocabulary"
CLASSES_FILE = "classes.json"
# Class names a message shows of each list.
_NAMED_CLASSES = 12


def has_trained(output_dir):
    """Whether the run in `output_dir` has saved trained weights: a checkpoint or a backup.

    Example:

    >>> import tempfile
    >>> from keras_attention.tasks.run_vocabulary import has_trained
    >>> has_trained(tempfile.mkdtemp())
    False
    """
    if trained_epochs(output_dir):
        return True
    backup = os.path.join(output_dir, BACKUP_FOLDER)
    # Hidden names are writes a kill left unfinished, not a backup.
    return os.path.isdir(backup) and any(not name.startswith(".") for name in os.listdir(backup))


def kept_tokenizers(output_dir, names):
    """The tokenizers a run that has trained saved as `OUTPUT_DIR/vocabulary/<name>`, or None.

    None for a run that has not trained yet, or whose folder lacks one of
    them (a run of an older version): the caller learns them then, as on a
    first start. A non-chief worker of a multi-worker run reads the chief's,
    in the shared `--output-dir`, so that every worker reads token ids alike.

    Args:
        output_dir: the run's folder.
        names: the tokenizers' folder names under `vocabulary`, e.g.
            `("source", "target")`; `("",)` for `vocabulary` itself.

    Returns:
        a tuple of tokenizers in the order of `names`, or None.
    """
    output_dir = shared_output_dir(output_dir) or output_dir  # a worker reads the chief's
    if not has_trained(output_dir):
        return None
    folders = [os.path.join(output_dir, VOCABULARY_FOLDER, name) for name in names]
    if not all(os.path.isdir(folder) for folder in folders):
        return None
    tokenizers = tuple(load_tokenizer(folder) for folder in folders)
    sizes = " and ".join(f"{tokenizer.vocabulary_size}" for tokenizer in tokenizers)
    print(
        f"kept the vocabular{'ies' if len(names) > 1 else 'y'} this run trained with "
        f"({sizes} tokens, in {os.path.join(output_dir, VOCABULARY_FOLDER)}): a run that goes "
        "on reads its token ids as it trained them"
    )
    return tokenizers


def keep_class_names(output_dir, class_names, dataset):
    """Records the run's class names, or refuses data whose classes changed after it trained.

    Args:
        output_dir: the run's folder.
        class_names: the classes of the data now, in label order.
        dataset: the `--dataset` value, for the message.

    A non-chief worker of a multi-worker run checks against the chief's
    record, in the shared `--output-dir`, and writes none of its own.

    Raises:
        ValueError: the run has trained on other classes (names both lists).
    """
    shared = shared_output_dir(output_dir)
    output_dir = shared or output_dir
    path = os.path.join(output_dir, VOCABULARY_FOLDER, CLASSES_FILE)
    class_names = [str(name) for name in class_names]
    recorded = _read_class_names(path)
    if recorded is not None and recorded != class_names and has_trained(output_dir):
        raise ValueError(
            f"{dataset} now has {len(class_names)} classes ({_named(class_names)}), but the run "
            f"in {output_dir} trained on {len(recorded)} ({_named(recorded)}): its data changed "
            "since, and its weights fit those classes alone. Train on these in another "
            "--output-dir, or pass --overwrite to replace this run."
        )
    if recorded != class_names and shared is None:  # the chief alone writes the shared folder
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write_file_atomically(path, json.dumps(class_names, indent=1, ensure_ascii=False) + "\n")


def _read_class_names(path):
    """The class list of a `classes.json`, or None where there is none to read."""
    try:
        with open(path, encoding="utf-8") as file:
            names = json.load(file)
    except (OSError, ValueError):
        return None
    return names if isinstance(names, list) else None


def _named(names):
    """The first `_NAMED_CLASSES` names, and how many more."""
    more = len(names) - _NAMED_CLASSES
    return ", ".join(names[:_NAMED_CLASSES]) + (f" and {more} more" if more > 0 else "")

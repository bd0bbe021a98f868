"""How much of a captioner's attention fell on the objects it named: a line and metrics.

The measure itself, with an example on one scene, is
`attention_on_objects.attention_on_objects_summary`; `train_captioning.py`
prints this line after its evaluation and keeps the metrics in its report.
"""

import sys

from keras_attention.tasks.captioning.attention_on_objects import attention_on_objects_summary


def attention_on_objects_report(captions_words, attentions, scenes_objects, stream=None):
    """Prints `attention_on_objects_summary` in one line and returns it as JSON-ready metrics.

    Args:
        captions_words, attentions, scenes_objects: as
            `attention_on_objects.attention_on_objects_summary` takes them.
        stream: where the line is printed (default None: standard output;
            `False`: print nothing).

    Returns:
        dict "attention_on_object",
        "attention_on_object_chance" (None when no object was measured: the
        means are then NaN, which JSON lacks) and "objects_measured".

    Example:

    >>> import numpy as np
    >>> from keras_attention.tasks.captioning.attention_on_objects_report import (
    ...     attention_on_objects_report)
    >>> unnamed = [{"shape": "circle", "mask": np.ones((4, 4), bool)}]
    >>> metrics = attention_on_objects_report([["a"]], np.ones((1, 1, 2, 2)), [unnamed])
    attention on the named object: nan of the mass (chance nan) over 0 of 1 objects
    >>> metrics["attention_on_object"] is None, metrics["objects_measured"]
    (True, 0)
    """
    summary = attention_on_objects_summary(captions_words, attentions, scenes_objects)
    line = (
        f"attention on the named object: {summary['fraction']:.3f} of the mass "
        f"(chance {summary['chance']:.3f}) over {summary['measured']} of "
        f"{summary['objects']} objects"
    )
    if stream is not False:
        print(line, file=stream or sys.stdout)
    measured = summary["measured"] > 0  # else the means are NaN, which JSON lacks
    return {
        "attention_on_object": summary["fraction"] if measured else None,
        "attention_on_object_chance": summary["chance"] if measured else None,
        "objects_measured": summary["measured"],
    }

"""A line printed at an epoch's end that starts a line of its own under `fit`'s progress bar.

At an epoch's end `fit(verbose=1)` has drawn its progress bar without ending
the line: keras finishes it after the callbacks run. A callback that prints
there starts with a newline of its own, as keras' own callbacks do; under
`verbose=2` or 0, or outside `fit`, nothing is mid-line.

Example:

>>> from keras_attention.callbacks.epoch_end_line import epoch_end_line
>>> epoch_end_line({"verbose": 1}, "WARNING: stalled"), epoch_end_line(None, "note")
('\\nWARNING: stalled', 'note')
"""


def epoch_end_line(params, text):
    """`text`, after a newline where `params` (a callback's) say a progress bar is drawn."""
    bar_drawn = (params or {}).get("verbose") == 1
    return ("\n" if bar_drawn else "") + text

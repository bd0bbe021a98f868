"""Progress of the long steps of a run: a bar on a terminal, one line per stage in a log.

Library functions that can take long (learning a vocabulary, checking that
images decode, decoding a test set) take an optional `progress` and call
its `add(count)` as they go; they say nothing without one. The training
scripts hand them a `ProgressBar`: keras' own `Progbar` when standard
output is a terminal, and a single line when the stage ends otherwise, or
after `set_quiet(True)` (the scripts' `--quiet`), so that a log file gets
one line per stage instead of a redrawn bar.

Example:

>>> from keras_attention.progress import ProgressBar, set_quiet
>>> set_quiet(True)
>>> with ProgressBar("translating the test split", total=3, unit="sentences") as bar:
...     for batch in (["a", "b"], ["c"]):
...         bar.add(len(batch))  # doctest: +ELLIPSIS
translating the test split: 3 sentences in ...
>>> set_quiet(False)
"""

import sys
import time

_settings = {"quiet": False}


def set_quiet(quiet):
    """With True, every `ProgressBar` prints one line when its stage ends, never a bar."""
    _settings["quiet"] = bool(quiet)


def shows_bars():
    """Whether progress bars are drawn: standard output is a terminal and not `--quiet`."""
    return not _settings["quiet"] and sys.stdout.isatty()


class ProgressBar:
    """The progress of one stage: `add(count)` as it goes, `close()` (or `with`) at its end.

    Args:
        description: what the stage does, e.g. "learning the source vocabulary".
        total: the count at the end, if known (the bar then shows a fraction).
        unit: what is counted, e.g. "sentences", "images".
    """

    def __init__(self, description, total=None, unit="items"):
        self.description = description
        self.total = total
        self.unit = unit
        self.count = 0
        self._start = time.time()
        self._bar = None
        if shows_bars():
            import keras

            print(f"{description}:")
            self._bar = keras.utils.Progbar(total, unit_name=unit.rstrip("s") or unit)

    def add(self, count=1):
        """Counts `count` more items done."""
        self.count += int(count)
        if self._bar is not None:
            self._bar.update(self.count)

    def close(self):
        """Ends the stage: the bar is completed, or its one line printed."""
        seconds = time.time() - self._start
        if self._bar is not None:
            self._bar.update(self.count, finalize=True)
        else:
            unit = self.unit[:-1] if self.count == 1 and self.unit.endswith("s") else self.unit
            rate = f", {self.count / seconds:,.0f} a second" if seconds >= 0.1 else ""
            print(f"{self.description}: {self.count} {unit} in {seconds:.1f} s{rate}")

    def __enter__(self):
        return self

    def __exit__(self, kind, error, trace):
        if kind is None:
            self.close()
        return False

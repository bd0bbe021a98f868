"""The line that says when training took its first step, and how long after the start."""

import sys
import time

import keras


class FirstStepLine(keras.callbacks.Callback):
    """Prints "first training step done 12.3 s after the run started" after the first step.

    Loading data, building and compiling a model, tracing and compiling its
    step can take minutes before anything trains: the line says how long,
    once per instance (give the same one to every `fit` of a run), on a
    line of its own. Put it before the progress bar's logger (Keras adds
    that one last), so that the line is printed before the bar draws.

    Args:
        started_at: when the run started, as `clock` gives it.
        clock: the function of no argument that gives the time in seconds
            (default `time.monotonic`).
        stream: where the line is printed (default: standard output).

    Attributes:
        seconds: the seconds from `started_at` to the end of the first
            step, or None before it.

    Example:

    >>> import io, time, numpy as np, keras
    >>> from keras_attention.callbacks.first_step_line import FirstStepLine
    >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    >>> model.compile("sgd", "mse")
    >>> stream = io.StringIO()
    >>> line = FirstStepLine(time.monotonic(), stream=stream)
    >>> _ = model.fit(np.ones((4, 2)), np.ones(4), batch_size=2, epochs=2, verbose=0,
    ...               callbacks=[line])
    >>> stream.getvalue()  # doctest: +ELLIPSIS
    'first training step done ... s after the run started\\n'
    """

    def __init__(self, started_at, clock=time.monotonic, stream=None):
        super().__init__()
        self.started_at = started_at
        self.clock = clock
        self.stream = stream
        self.seconds = None

    def on_train_batch_end(self, batch, logs=None):
        if self.seconds is not None:
            return
        self.seconds = self.clock() - self.started_at
        print(
            f"first training step done {self.seconds:.1f} s after the run started",
            file=self.stream or sys.stdout,
            flush=True,
        )

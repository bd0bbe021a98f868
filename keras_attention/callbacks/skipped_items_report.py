"""One line per epoch for each kind of item the input pipelines skipped, and where to find them."""

import keras


class SkippedItemsReport(keras.callbacks.Callback):
    """Says, once an epoch, how many items of each kind the input pipelines skipped.

    The pipelines count what they skip in `SkippedItems` (undecodable
    images, malformed lines, pairs too long to train on); after each epoch
    this prints one line per kind that had any, on its own line after the
    epoch's progress bar, with the file that names them. Nothing is printed
    for an epoch without skipped items. Items named in a file are counted
    once an epoch (the pipeline, reading ahead, may meet one twice: at the
    end of one pass and the start of the next); the others as often as met.

    Args:
        skipped: the `keras_attention.data.skipped_items.SkippedItems` to report.

    Example:

    >>> import numpy as np, keras, tensorflow as tf
    >>> from keras_attention.callbacks.skipped_items_report import SkippedItemsReport
    >>> from keras_attention.data.skipped_items import SkippedItems
    >>> odd = SkippedItems("odd numbers")
    >>> data = tf.data.Dataset.range(8).filter(lambda n: odd.keep(n % 2 == 0, "n"))
    >>> data = data.map(lambda n: (tf.cast([n], "float32"), tf.cast(n, "float32"))).batch(2)
    >>> model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    >>> model.compile("sgd", "mse")
    >>> _ = model.fit(data, epochs=2, verbose=0, callbacks=[SkippedItemsReport([odd])])
    skipped 4 odd numbers in epoch 1
    skipped 4 odd numbers in epoch 2
    """

    def __init__(self, skipped):
        super().__init__()
        self.skipped = tuple(skipped)
        self.totals = {items.what: 0 for items in self.skipped}
        self._epoch = None

    def on_epoch_begin(self, epoch, logs=None):
        # The previous epoch's line, now that its progress bar has ended.
        self._report()
        self._epoch = epoch

    def on_train_end(self, logs=None):
        self._report()

    def _report(self):
        if self._epoch is None:
            for items in self.skipped:  # what was met before training (measuring, warming up)
                items.take_count()
                items.take_names()
            return
        for items in self.skipped:
            count = items.take_count()
            names = items.take_names()
            if names is not None:
                count = len(set(names))
            self.totals[items.what] += count
            if count:
                print(items.message(count, f"in epoch {self._epoch + 1}"), flush=True)
        self._epoch = None

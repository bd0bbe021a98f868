"""Items an input pipeline meets and cannot use: skipped and counted, named in a file, or fatal.

A data set of a million files is never read whole before training: a
truncated JPEG or a blank line is found where the `tf.data` pipeline meets
it. `SkippedItems` is what the pipeline tells: inside a map, `keep(ok, name)`
passes good items on and, for a bad one, adds one to a count and appends
its name to a file of the run (or, with `strict`, stops the pipeline with
an error naming it). `take_count()` reads the count and starts it again,
once an epoch (`keras_attention.callbacks.SkippedItemsReport`), and
`strict_errors_as_exit()` turns the strict error into one line.

Example:

>>> import os, tempfile
>>> import tensorflow as tf
>>> from keras_attention.data.skipped_items import SkippedItems
>>> log = os.path.join(tempfile.mkdtemp(), "skipped_lines.txt")
>>> blank = SkippedItems("blank lines", log)
>>> lines = tf.data.Dataset.from_tensor_slices(["a", "", "b", ""])
>>> kept = lines.enumerate(1).filter(
...     lambda number, line: blank.keep(line != "", tf.strings.format("line {}", number)))
>>> [line.decode() for _, line in kept.as_numpy_iterator()]
['a', 'b']
>>> blank.take_count(), open(log).read().split()
(2, ['line', '2', 'line', '4'])
"""

import base64
import contextlib
import os
import re

import tensorflow as tf

# Starts the message of a strict stop, so that it can be told from other errors.
_STRICT_MARK = "keras_attention strict data stop:"
# The assertion's data are base64 text, which TensorFlow prints as it is,
# whatever characters a name holds (graph and eager messages differ in quoting).
_BETWEEN = r"(?:\] \[|'\s*b')"  # "[a] [b]" in a tf.data function, "b'a'\nb'b'" eagerly
_STRICT_MESSAGE = re.compile(
    re.escape(_STRICT_MARK) + _BETWEEN + r"([A-Za-z0-9_=-]+)" + _BETWEEN + r"([A-Za-z0-9_=-]+)"
)


class SkippedItems:
    """The items of one kind that an input pipeline skips: counted, named, or a stop.

    Args:
        what: what is skipped, in the plural, e.g. "image files that
            cannot be decoded"; messages say it.
        log_path: file to append the name of each skipped item to, one a
            line (each time the pipeline meets it: once an epoch), or None
            to keep only the count.
        strict: stop the pipeline at the first skipped item, with an
            error naming it (see `strict_errors_as_exit`).

    Example:

    >>> import tensorflow as tf
    >>> from keras_attention.data.skipped_items import SkippedItems
    >>> odd = SkippedItems("odd numbers")
    >>> numbers = tf.data.Dataset.range(5).filter(
    ...     lambda n: odd.keep(n % 2 == 0, tf.strings.as_string(n)))
    >>> [int(n) for n in numbers], odd.take_count(), odd.take_count()
    ([0, 2, 4], 2, 0)
    """

    def __init__(self, what, log_path=None, strict=False):
        if not isinstance(what, str) or not what:
            raise ValueError(f"`what` must name the items skipped. Received: what={what!r}")
        self.what = what
        self.log_path = None if log_path is None else str(log_path)
        self.strict = bool(strict)
        # Counted by every pipeline thread, read between epochs.
        self._count = tf.Variable(0, dtype=tf.int64, trainable=False, name="skipped_items")
        self._names_read = 0  # bytes of the log already read by `take_names`

    def keep(self, ok, name):
        """`ok`, having counted and named the item when it is False (graph code, for maps).

        Args:
            ok: scalar bool tensor: whether the item is usable.
            name: scalar string tensor naming the item, e.g. its path, or
                "train.de line 12".

        Returns:
            scalar bool tensor, `ok`.

        Raises:
            tf.errors.InvalidArgumentError: with `strict`, for the first
                unusable item met (`strict_errors_as_exit` makes it one line).
        """
        ok = tf.convert_to_tensor(ok, tf.bool)
        return tf.cond(ok, lambda: tf.constant(True), lambda: self._skip(name))

    def keep_all(self, ok, names):
        """`ok`, having counted and named the items where it is False: `keep` for a batch.

        Args:
            ok: bool tensor `(N,)`: whether each item is usable.
            names: string tensor `(N,)` naming the items.

        Returns:
            bool tensor `(N,)`, `ok`.

        Example:

        >>> import tensorflow as tf
        >>> from keras_attention.data.skipped_items import SkippedItems
        >>> blank = SkippedItems("blank lines")
        >>> blank.keep_all(tf.constant([True, False, False]), tf.constant(["1", "2", "3"])).numpy()
        array([ True, False, False])
        >>> blank.take_count()
        2
        """
        ok = tf.convert_to_tensor(ok, tf.bool)
        bad = tf.boolean_mask(names, ~ok)  # (K,)
        first = tf.concat([bad, [""]], axis=0)[0]  # the first name, for a strict stop
        both = tf.cond(
            tf.size(bad) > 0,
            lambda: self._skip(tf.strings.reduce_join(bad, separator="\n"), tf.size(bad), first),
            lambda: tf.constant(False),
        )
        with tf.control_dependencies([both]):
            return tf.identity(ok)

    def _skip(self, name, count=1, first=None):
        if self.strict:
            shown = name if first is None else first
            data = [_STRICT_MARK, tf.io.encode_base64(self.what), tf.io.encode_base64(shown)]
            tf.debugging.Assert(False, data, name="strict_data_stop")
        records = [self._count.assign_add(tf.cast(count, tf.int64))]
        if self.log_path is not None:
            records.append(tf.print(name, output_stream=f"file://{self.log_path}"))
        with tf.control_dependencies(records):
            return tf.constant(False)

    def take_count(self):
        """The items skipped since the last call (or since the start), the count set to 0."""
        count = int(self._count.numpy())
        self._count.assign_sub(count)
        return count

    def take_names(self):
        """The names logged since the last call (one per skip, in the order met), or None.

        None without a `log_path`. A pipeline that prefetches may meet an
        item twice between two calls (the end of one pass over the data,
        the start of the next): count distinct names to count items.

        Example:

        >>> import os, tempfile
        >>> import tensorflow as tf
        >>> from keras_attention.data.skipped_items import SkippedItems
        >>> blank = SkippedItems("blank lines", os.path.join(tempfile.mkdtemp(), "log.txt"))
        >>> _ = [blank.keep(tf.constant(False), tf.constant(name)) for name in ("a", "b", "a")]
        >>> blank.take_names(), blank.take_names()
        (['a', 'b', 'a'], [])
        """
        if self.log_path is None:
            return None
        if not os.path.exists(self.log_path):
            return []
        with open(self.log_path, "rb") as file:
            file.seek(self._names_read)
            text = file.read()
        complete = text[: text.rfind(b"\n") + 1]  # a line being written waits for the next call
        self._names_read += len(complete)
        return complete.decode("utf-8", "replace").splitlines()

    def message(self, count, where=""):
        """One line saying that `count` items were skipped `where`, and where their names are.

        Example:

        >>> from keras_attention.data.skipped_items import SkippedItems
        >>> SkippedItems("blank lines", "run/skipped_lines.txt").message(3, "in epoch 2")
        'skipped 3 blank lines in epoch 2 (named in run/skipped_lines.txt)'
        """
        named = f" (named in {self.log_path})" if self.log_path else ""
        return f"skipped {count} {self.what}" + (f" {where}" if where else "") + named


def strict_stop_message(error):
    """The one line of a `strict` stop raised by `SkippedItems.keep`, or None for other errors.

    Example:

    >>> import tensorflow as tf
    >>> from keras_attention.data.skipped_items import SkippedItems, strict_stop_message
    >>> bad = SkippedItems("image files that cannot be decoded", strict=True)
    >>> try:
    ...     bad.keep(tf.constant(False), tf.constant("cat/1.jpg"))
    ... except tf.errors.InvalidArgumentError as error:
    ...     print(strict_stop_message(error))
    image files that cannot be decoded: cat/1.jpg (--strict: without it, skipped and named)
    """
    found = _STRICT_MESSAGE.search(str(getattr(error, "message", error)))
    if found is None:
        return None
    what, name = (_from_base64(text) for text in found.groups())
    return f"{what}: {name} (--strict: without it, skipped and named)"


def _from_base64(text):
    """Text that `tf.io.encode_base64` wrote (web-safe base64, padding optional)."""
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode("utf-8", "replace")


@contextlib.contextmanager
def strict_errors_as_exit():
    """Turns the error of a `strict` stop into `SystemExit("error: ...")`, one line.

    Example:

    >>> import tensorflow as tf
    >>> from keras_attention.data.skipped_items import SkippedItems, strict_errors_as_exit
    >>> blank = SkippedItems("blank lines", strict=True)
    >>> try:
    ...     with strict_errors_as_exit():
    ...         blank.keep(tf.constant(False), tf.constant("train.en line 3"))
    ... except SystemExit as stop:
    ...     print(stop)
    error: blank lines: train.en line 3 (--strict: without it, skipped and named)
    """
    try:
        yield
    except tf.errors.InvalidArgumentError as error:
        message = strict_stop_message(error)
        if message is None:
            raise
        raise SystemExit(f"error: {message}") from None

"""Native libraries' start-up lines that tell a user nothing, dropped from stderr.

TensorFlow's C++ start-up writes to the process's stderr before its logging
is set up, so `TF_CPP_MIN_LOG_LEVEL` does not hold it back: on a machine
without CUDA, `import tensorflow` prints "All log messages before
absl::InitializeLog() ..." and "Could not find cuda drivers" twice, and the
first operation "failed call to cuInit". tensorflow-text's SentencePiece op
says "precompiled_charsmap is empty" the first time it reads each model
(this library's models do not normalise text, on purpose). TensorFlow also
says "oneDNN custom operations are on" once for each of its two native
libraries: a native log line that repeats an earlier one word for word (but
for its time and process) is written back once. Within
`native_start_up_lines_dropped()` the stderr file descriptor goes to a
temporary file; when the block ends, every line but those is written back,
in order, so that nothing else is lost (an error, a traceback, a real
warning).

It imports nothing heavy: scripts call `import_tensorflow_quietly()` before
anything imports TensorFlow.

Example:

>>> import os
>>> from keras_attention.native_start_up_lines import native_start_up_lines_dropped
>>> with native_start_up_lines_dropped():
...     _ = os.write(2, b"W0000 cudart_stub.cc:31] Could not find cuda drivers on your machine\\n")
"""

import contextlib
import os
import re
import sys
import tempfile

STDERR_FD = 2
# Each pattern names one known line; anything else is written back.
_START_UP_LINES = re.compile(
    r"All log messages before absl::InitializeLog\(\) is called are written to STDERR"
    r"|cudart_stub\.cc:\d+\] Could not find cuda drivers"
    r"|failed call to cuInit"
    r"|precompiled_charsmap is empty\. use identity normalization"
)
# The head of a native (absl) log line: "I0000 00:00:1795951059.600841   15181 port.cc:153] ".
_NATIVE_LOG_HEAD = re.compile(r"^[IWEF]\d{4} [\d:.]+\s+\d+ [^\s\]]+\] ")


def is_start_up_line(line):
    """Whether `line` is one of the native start-up lines this module drops.

    Example:

    >>> from keras_attention.native_start_up_lines import is_start_up_line
    >>> is_start_up_line("E0000 cuda_platform.cc:52] failed call to cuInit: INTERNAL")
    True
    >>> is_start_up_line("ValueError: `--epochs` must be positive")
    False
    """
    return bool(_START_UP_LINES.search(line))


@contextlib.contextmanager
def native_start_up_lines_dropped():
    """Within the block, stderr (the file descriptor) keeps every line but the start-up ones.

    Where the process has no file descriptor 2 (an embedding application),
    the block runs unchanged.
    """
    # Native libraries write to file descriptor 2, whatever `sys.stderr` is.
    try:
        os.fstat(STDERR_FD)
    except OSError:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(STDERR_FD)
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), STDERR_FD)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, STDERR_FD)
            os.close(saved)
            captured.seek(0)
            lines = captured.read().decode("utf-8", "replace").splitlines(keepends=True)
            kept = "".join(
                _first_of_each_native_line(line for line in lines if not is_start_up_line(line))
            )
            if kept:
                os.write(STDERR_FD, kept.encode("utf-8"))


def _first_of_each_native_line(lines):
    """`lines` without native log lines that say what an earlier one said; others all kept.

    Only native log lines are compared (a traceback may repeat a line on purpose).

    Example:

    >>> from keras_attention.native_start_up_lines import _first_of_each_native_line
    >>> list(_first_of_each_native_line([
    ...     "I0000 00:00:17.6  151 port.cc:153] oneDNN custom operations are on.\\n",
    ...     "I0000 00:00:19.7  151 port.cc:153] oneDNN custom operations are on.\\n",
    ...     "  x\\n", "  x\\n"]))
    ['I0000 00:00:17.6  151 port.cc:153] oneDNN custom operations are on.\\n', '  x\\n', '  x\\n']
    """
    said = set()
    for line in lines:
        head = _NATIVE_LOG_HEAD.match(line)
        if head:
            message = line[head.end() :]
            if message in said:
                continue
            said.add(message)
        yield line


def import_tensorflow_quietly():
    """Imports TensorFlow and finds its devices without the start-up lines; returns `tf`.

    `TF_CPP_MIN_LOG_LEVEL` is set to 2 (warnings and errors only) unless
    already set. Once TensorFlow is imported, this only returns it.
    """
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    with native_start_up_lines_dropped():
        import tensorflow as tf

        # Device discovery (cuInit) happens here, not at the first operation. Physical,
        # not logical, devices: the runtime stays unstarted, so that logical devices and
        # a multi-worker strategy's collective ops can still be set up.
        tf.config.list_physical_devices()
    return tf

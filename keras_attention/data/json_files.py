"""JSON annotation files read with errors that name the file and the line.

Example:

>>> import os, tempfile
>>> from keras_attention.data.json_files import read_json
>>> folder = tempfile.mkdtemp()
>>> _ = open(os.path.join(folder, "val.json"), "wb").write(b'\\xef\\xbb\\xbf{"images": []}')
>>> read_json(os.path.join(folder, "val.json"))
{'images': []}
>>> _ = open(os.path.join(folder, "cut.json"), "w").write('{"images": [\\n  1,\\n]}')
>>> read_json(os.path.join(folder, "cut.json"))
Traceback (most recent call last):
...
ValueError: .../cut.json must be JSON; reading stopped at line 3, column 1: Expecting value.
"""

import json

from keras_attention.file_encoding import check_text_file


def read_json(path):
    """The JSON value in the file at `path` (UTF-8, a byte-order mark at its start ignored).

    Raises:
        ValueError: the file is not UTF-8 or not JSON; the message names the
            file and the line (and column) where reading stopped.
    """
    check_text_file(path)  # UTF-16 JSON: named with the command that converts it
    with open(path, "rb") as file:
        data = file.read()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise ValueError(
            f"{path} must be UTF-8 JSON; line {line} holds a byte that is not UTF-8 "
            f"({data[error.start : error.start + 1]!r})."
        ) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(
            f"{path} must be JSON; reading stopped at line {error.lineno}, column "
            f"{error.colno}: {error.msg}."
        ) from None

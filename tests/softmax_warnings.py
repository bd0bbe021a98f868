"""Catching keras' "softmax over an axis of size 1" warning, however it is emitted."""

import logging
import warnings


def softmax_of_size_one_warnings(call, caplog):
    """The "softmax over an axis of size 1" messages `call()` emits, by `warnings` or logging.

    `caplog` is pytest's fixture; absl logs through Python's `logging` too.
    """
    with warnings.catch_warnings(record=True) as caught, caplog.at_level(logging.DEBUG):
        warnings.simplefilter("always")
        call()
    messages = [str(warning.message) for warning in caught]
    messages += [record.getMessage() for record in caplog.records]
    return [message for message in messages if "softmax" in message and "size 1" in message]

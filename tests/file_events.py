"""Recording the order of flushes and renames, to check that writes reach the disk first."""

import os

import pytest

from keras_attention import durable_files
from keras_attention.training import export_replacement

# The path behind a file descriptor is read from /proc (Linux).
needs_proc = pytest.mark.skipif(
    not os.path.isdir("/proc/self/fd"), reason="reads file descriptors' paths from /proc"
)


def record_fsyncs_and_renames(monkeypatch):
    """Records ("fsync", path), ("rename", source) and ("exchange", source) in call order."""
    events = []
    fsync, rename, replace = os.fsync, os.rename, os.replace
    exchange = durable_files.exchange_paths

    def recording_fsync(descriptor):
        events.append(("fsync", os.readlink(f"/proc/self/fd/{descriptor}")))
        return fsync(descriptor)

    def recording(kind, function):
        def call(source, *args, **kwargs):
            events.append((kind, os.fspath(source)))
            return function(source, *args, **kwargs)

        return call

    monkeypatch.setattr(os, "fsync", recording_fsync)
    monkeypatch.setattr(os, "rename", recording("rename", rename))
    monkeypatch.setattr(os, "replace", recording("rename", replace))
    monkeypatch.setattr(export_replacement, "exchange_paths", recording("exchange", exchange))
    return events


def flushed_before(events, renamed):
    """The paths flushed before `renamed` was first renamed (or exchanged), and the rest."""
    publish = next(
        i for i, (kind, path) in enumerate(events) if kind != "fsync" and path == renamed
    )
    before = {path for kind, path in events[:publish] if kind == "fsync"}
    after = {path for kind, path in events[publish + 1 :] if kind == "fsync"}
    return before, after

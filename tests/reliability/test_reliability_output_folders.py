"""A run never deletes what it did not write: its folder, its export, its lock and leftovers.

Each test is named for the case it covers; nothing here trains a model.
"""

import argparse
import json
import os
import socket
import stat
import subprocess
import sys

import pytest
from example_scripts import load_example
from file_events import flushed_before
from file_events import needs_proc
from file_events import record_fsyncs_and_renames

from keras_attention import durable_files
from keras_attention.training import export_replacement
from keras_attention.training import run_setup
from keras_attention.training.command_line import backup_frequency
from keras_attention.training.export_replacement import recover_export_leftovers
from keras_attention.training.export_replacement import replace_folder
from keras_attention.training.run_folder import EXPORT_MARKER
from keras_attention.training.run_folder import RunFolderError
from keras_attention.training.run_folder import check_export_path
from keras_attention.training.run_folder import prepare_run_folder
from keras_attention.training.run_lock import release_run_lock

THESIS = "\\documentclass{article} six months of work"


def _args(output_dir, export=None, overwrite=False):
    return argparse.Namespace(
        output_dir=str(output_dir),
        export=None if export is None else str(export),
        overwrite=overwrite,
        strategy="default",
        epochs=2,
    )


def _prepare(args):
    """`prepare_output`, then the lock given back as `finish_run` does at the end of a run."""
    try:
        return run_setup.prepare_output(args)
    finally:
        release_run_lock(args.output_dir)


def _user_folder(path):
    path.mkdir(parents=True)
    (path / "thesis.tex").write_text(THESIS)
    return path


def _dead_pid():
    """The id of a process that has ended."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def _trained(output_dir):
    """The folder as a run leaves it after its first epoch: a checkpoint."""
    os.makedirs(os.path.join(output_dir, "checkpoints"), exist_ok=True)
    open(os.path.join(output_dir, "checkpoints", "epoch_001.keras"), "w").write("weights")


def _write_export(path, content="model"):
    """A folder as `replace_folder` leaves it: the export and its marker."""
    os.makedirs(path)
    open(os.path.join(path, "saved_model.pb"), "w").write(content)
    open(os.path.join(path, EXPORT_MARKER), "w").write("{}")


# --export


def test_export_into_a_folder_of_user_files_is_refused_before_training_leaving_them(tmp_path):
    served = _user_folder(tmp_path / "served")
    with pytest.raises(RunFolderError, match=r"`--export` must be absent.*served.*'thesis.tex'"):
        check_export_path(str(served))
    train_nmt = load_example("train_nmt", "_output_folders")
    argv = ["--output-dir", str(tmp_path / "run"), "--export", str(served)]
    with pytest.raises(SystemExit, match=r"--export.*served.*thesis\.tex"):
        train_nmt.main(argv)  # refused in well under a second: nothing loaded or trained
    assert (served / "thesis.tex").read_text() == THESIS
    assert os.listdir(served) == ["thesis.tex"]


def test_export_over_an_unmarked_saved_model_is_refused(tmp_path):
    served = tmp_path / "served"
    served.mkdir()
    (served / "saved_model.pb").write_text("written by someone else")
    with pytest.raises(RunFolderError, match=r"marked by keras_attention_export.json"):
        check_export_path(str(served))


@pytest.mark.parametrize("where", ["same", "parent"])
def test_export_that_is_or_holds_the_output_dir_is_refused_naming_both(tmp_path, where):
    output_dir = tmp_path / "runs" / "nmt"
    export = output_dir if where == "same" else tmp_path / "runs"
    verb = "be" if where == "same" else "hold"
    message = rf"`--export` must not {verb} the --output-dir.*{export}.*--output-dir="
    with pytest.raises(SystemExit, match=message):
        _prepare(_args(output_dir, export))
    assert not (output_dir / "run_arguments.json").exists()


def test_export_inside_the_output_dir_is_accepted_unless_it_is_one_of_the_runs_entries(tmp_path):
    output_dir = tmp_path / "runs" / "nmt"
    assert _prepare(_args(output_dir, output_dir / "served")) == "new"  # README's layout
    for entry in ("checkpoints", "backup", "vocabulary", "logs", "metrics.json"):
        with pytest.raises(SystemExit, match=rf"must not be the run's own '{entry}'"):
            _prepare(_args(output_dir, output_dir / entry))
    with pytest.raises(SystemExit, match=r"must not be the run's own 'checkpoints'"):
        _prepare(_args(output_dir, output_dir / "checkpoints" / "served"))


def test_export_replaces_an_earlier_export_of_this_library_and_nothing_else(tmp_path):
    target = tmp_path / "served"
    replace_folder(str(target), lambda folder: open(os.path.join(folder, "v1"), "w").close())
    replace_folder(str(target), lambda folder: open(os.path.join(folder, "v2"), "w").close())
    assert sorted(os.listdir(target)) == [EXPORT_MARKER, "v2"]
    # A folder that becomes a user's between the check and the export is still refused.
    user = _user_folder(tmp_path / "user")
    with pytest.raises(RunFolderError, match="thesis.tex"):
        replace_folder(str(user), lambda folder: open(os.path.join(folder, "v"), "w").close())
    assert os.listdir(user) == ["thesis.tex"]
    assert sorted(os.listdir(tmp_path)) == ["served", "user"]  # no staging folder left


def test_export_holds_a_whole_export_at_every_moment_of_its_replacement(tmp_path, monkeypatch):
    target = str(tmp_path / "served")
    _write_export(target, "old")
    seen = []

    def check_after(function):
        def call(*args):
            result = function(*args)
            seen.append(open(os.path.join(target, "saved_model.pb")).read())  # fails if missing
            assert os.path.exists(os.path.join(target, EXPORT_MARKER))
            return result

        return call

    monkeypatch.setattr(os, "rename", check_after(os.rename))
    monkeypatch.setattr(
        export_replacement, "exchange_paths", check_after(durable_files.exchange_paths)
    )

    def write(folder):
        open(os.path.join(folder, "saved_model.pb"), "w").write("new")

    replace_folder(target, write)
    assert seen[-1] == "new" and set(seen) <= {"old", "new"}
    assert sorted(os.listdir(tmp_path)) == ["served"]


def test_exchange_swaps_two_folders_in_one_step(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    (first / "from_a").touch()
    if not durable_files.exchange_paths(str(first), str(second)):
        pytest.skip("this system or file system cannot exchange paths (renameat2)")
    assert (os.listdir(first), os.listdir(second)) == ([], ["from_a"])


def test_export_without_an_atomic_exchange_falls_back_to_two_renames(tmp_path, monkeypatch):
    monkeypatch.setattr(export_replacement, "exchange_paths", lambda first, second: False)
    target = str(tmp_path / "served")
    replace_folder(target, lambda folder: open(os.path.join(folder, "v1"), "w").close())
    replace_folder(target, lambda folder: open(os.path.join(folder, "v2"), "w").close())
    assert sorted(os.listdir(target)) == [EXPORT_MARKER, "v2"]
    assert os.listdir(tmp_path) == ["served"]


def test_export_and_backup_folders_get_the_umask_permissions(tmp_path):
    previous = os.umask(0o022)
    try:
        target = tmp_path / "served"
        replace_folder(str(target), lambda folder: open(os.path.join(folder, "a"), "w").close())
        folder = durable_files.make_folder(str(tmp_path), ".partial_")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o755  # readable by a serving user
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o755


@needs_proc
def test_export_is_flushed_to_disk_before_the_rename_that_publishes_it(tmp_path, monkeypatch):
    events = record_fsyncs_and_renames(monkeypatch)
    target = str(tmp_path / "served")
    _write_export(target, "old")

    def write(folder):
        os.makedirs(os.path.join(folder, "variables"))
        open(os.path.join(folder, "variables", "variables.data"), "w").write("weights")

    replace_folder(target, write)
    staging = next(path for kind, path in events if kind != "fsync")
    before, after = flushed_before(events, staging)
    expected = {"variables/variables.data", "variables", EXPORT_MARKER, "."}
    assert {os.path.normpath(os.path.join(staging, name)) for name in expected} <= before
    assert str(tmp_path) in after  # the parent's new entry


# --overwrite


@pytest.mark.parametrize("files", [["thesis.tex"], ["metrics.json", "notes.txt"]])
def test_overwrite_refuses_a_folder_that_is_not_a_run_naming_it(tmp_path, files):
    for name in files:
        (tmp_path / name).write_text(THESIS)
    message = rf"--output-dir '{tmp_path}' holds files that are not a run.*'{files[0]}'"
    with pytest.raises(RunFolderError, match=message):
        prepare_run_folder(str(tmp_path), {"epochs": 2}, overwrite=True)
    assert sorted(os.listdir(tmp_path)) == sorted(files)
    with pytest.raises(SystemExit, match=message):
        _prepare(_args(tmp_path, overwrite=True))
    assert sorted(os.listdir(tmp_path)) == sorted(files)  # not even a lock file added


# a run that never trained


def test_a_run_that_failed_on_its_data_does_not_block_the_corrected_command(tmp_path, capsys):
    output_dir = tmp_path / "run"
    args = _args(output_dir)
    args.dataset = "foldr:~/glyphs"  # the typo: the run stops on its data, before training
    assert _prepare(args) == "new"
    (output_dir / "vocabulary").mkdir()  # what it wrote before it stopped
    (output_dir / "vocabulary" / "source.model").write_text("pieces of the wrong data")
    (output_dir / "checkpoints").mkdir()  # empty: no epoch ended
    capsys.readouterr()
    args.dataset = "folder:~/glyphs"  # the corrected command, without --overwrite
    assert _prepare(args) == "restart"
    printed = capsys.readouterr().out.splitlines()
    assert printed == [
        f"{output_dir} held a run that never trained (no checkpoint, backup or metrics), with "
        "other arguments (dataset='foldr:~/glyphs' there, dataset='folder:~/glyphs' now): a new "
        "run with these, training starts at epoch 1"
    ]
    assert sorted(os.listdir(output_dir)) == [".run.lock", "run_arguments.json"]
    recorded = json.loads((output_dir / "run_arguments.json").read_text())
    assert recorded["dataset"] == "folder:~/glyphs"
    assert _prepare(args) == "resume"  # and it is this run from now on


def test_the_script_takes_the_corrected_command_after_a_run_failed_on_its_data(
    tmp_path, monkeypatch, capsys
):
    train_nmt = load_example("train_nmt", "_folders")
    commas = tmp_path / "pairs.csv"  # commas, not tabs: no valid line, found once data loads
    commas.write_text("hello,hola\nthank you,gracias\n")
    tabs = tmp_path / "pairs.tsv"
    tabs.write_text("hello\thola\nthank you\tgracias\n")
    output_dir = tmp_path / "run"  # as runs/nmt, the default, would be
    # One line naming the file, not a traceback.
    with pytest.raises(SystemExit, match="^error: .*at least one valid `source<TAB>target` line"):
        with pytest.warns(UserWarning, match=r"Skipped 2 malformed line\(s\)"):
            train_nmt.main(["--dataset", f"tsv:{commas}", "--output-dir", str(output_dir)])
    assert (output_dir / "run_arguments.json").exists()  # claimed before its data loaded
    release_run_lock(str(output_dir))  # as the end of its process does

    class DataLoaded(Exception):
        pass

    def load_translation_splits(args, shard):
        raise DataLoaded(args.dataset)

    monkeypatch.setattr(train_nmt.training_data, "load_translation_splits", load_translation_splits)
    capsys.readouterr()
    with pytest.raises(DataLoaded):  # accepted without --overwrite: on to its data
        train_nmt.main(["--dataset", f"tsv:{tabs}", "--output-dir", str(output_dir)])
    release_run_lock(str(output_dir))
    assert f"{output_dir} held a run that never trained" in capsys.readouterr().out
    recorded = json.loads((output_dir / "run_arguments.json").read_text())
    assert recorded["dataset"] == f"tsv:{tabs}"


@pytest.mark.parametrize(
    "work",
    [
        "checkpoints/epoch_001.keras",
        "backup/training_metadata.json",
        "logs/train/events.out.tfevents.1",
        "metrics.json",
        "confusion_matrix.png",
        "thesis.tex",
    ],
)
def test_a_run_that_trained_or_a_file_it_did_not_write_still_needs_overwrite(tmp_path, work):
    output_dir = tmp_path / "run"
    args = _args(output_dir)
    args.dataset = "tsv:a.tsv"
    assert _prepare(args) == "new"
    (output_dir / work).parent.mkdir(parents=True, exist_ok=True)
    (output_dir / work).write_text(THESIS)
    args.dataset = "tsv:b.tsv"
    message = "holds a run with other arguments: dataset='tsv:a.tsv' there, .*pass --overwrite"
    with pytest.raises(SystemExit, match=message):
        _prepare(args)
    assert (output_dir / work).read_text() == THESIS
    recorded = json.loads((output_dir / "run_arguments.json").read_text())
    assert recorded["dataset"] == "tsv:a.tsv"


# one run at a time

_HOLD_LOCK = """
import sys
from keras_attention.training.run_lock import hold_run_lock
hold_run_lock(sys.argv[1])
print("locked", flush=True)
sys.stdin.read()
"""


def test_a_second_run_on_the_same_output_dir_stops_naming_the_first(tmp_path):
    output_dir = tmp_path / "run"
    assert _prepare(_args(output_dir)) == "new"
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    first = subprocess.Popen(
        [sys.executable, "-c", _HOLD_LOCK, str(output_dir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=environment,
    )
    try:
        assert first.stdout.readline().strip() == "locked"
        message = (
            rf"--output-dir '{output_dir}' is in use by another run: process {first.pid} on "
            rf"host '{socket.gethostname()}', started .*, command: .* -c .*\.run\.lock"
        )
        with pytest.raises(SystemExit, match=message):
            _prepare(_args(output_dir))
    finally:
        first.kill()  # as kill -9: the system releases its lock
        first.wait()
    assert _prepare(_args(output_dir)) == "resume"


@pytest.mark.parametrize(
    "name, first, then",
    [
        ("beam_width", 1, 4),
        ("samples", 5, 0),
        ("plots", 3, 1),
        ("eval_sentences", None, 50),
        ("eval_images", None, 20),
    ],
)
def test_evaluation_only_flags_never_block_a_resume(tmp_path, name, first, then):
    output_dir = tmp_path / "run"
    args = _args(output_dir)
    setattr(args, name, first)
    assert _prepare(args) == "new"
    setattr(args, name, then)
    assert _prepare(args) == "resume"
    # A flag that shapes the training of a run that trained is still named with both values.
    _trained(output_dir)
    args.max_length = 40
    with pytest.raises(SystemExit, match="max_length=None there, max_length=40 now"):
        _prepare(args)


def test_a_run_that_recorded_an_evaluation_flag_still_resumes(tmp_path):
    output_dir = tmp_path / "run"
    args = _args(output_dir)
    assert _prepare(args) == "new"
    recorded = json.loads((output_dir / "run_arguments.json").read_text())
    recorded["beam_width"] = 2  # as runs recorded it before the flag was evaluation-only
    (output_dir / "run_arguments.json").write_text(json.dumps(recorded))
    args.beam_width = 1
    assert _prepare(args) == "resume"


def test_backup_every_may_change_but_steps_per_epoch_is_part_of_the_run(tmp_path):
    args = _args(tmp_path / "run")
    args.steps_per_epoch, args.backup_every = None, backup_frequency("30min")
    assert _prepare(args) == "new"
    assert "backup_every" not in json.loads((tmp_path / "run" / "run_arguments.json").read_text())
    args.backup_every = backup_frequency("500")  # where results go, not what is computed
    assert _prepare(args) == "resume"
    _trained(tmp_path / "run")
    args.steps_per_epoch = 1000  # another schedule: another run
    with pytest.raises(SystemExit, match="steps_per_epoch=None there, steps_per_epoch=1000 now"):
        _prepare(args)


def test_a_run_recorded_before_a_flag_existed_resumes_with_that_flag_unset(tmp_path):
    args = _args(tmp_path / "run")
    assert _prepare(args) == "new"  # its run_arguments.json has no steps_per_epoch
    args.steps_per_epoch = None
    assert _prepare(args) == "resume"


def test_the_lock_is_held_from_prepare_output_to_finish_run(tmp_path):
    output_dir = tmp_path / "run"
    args = _args(output_dir)
    run_setup.prepare_output(args)
    probe = "import sys; from keras_attention.training.run_lock import hold_run_lock; "
    probe += "hold_run_lock(sys.argv[1])"
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}

    def other_process_can_lock():
        command = [sys.executable, "-c", probe, str(output_dir)]
        return subprocess.run(command, env=environment, capture_output=True).returncode == 0

    assert not other_process_can_lock()
    run_setup.finish_run(args, {"bleu": 1.0})
    assert other_process_can_lock()


# leftovers of killed writes


def test_leftovers_of_killed_writes_are_removed_at_the_next_start_and_nothing_else(tmp_path):
    output_dir, export = tmp_path / "run", tmp_path / "served"
    assert _prepare(_args(output_dir, export)) == "new"
    dead = _dead_pid()
    live = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    try:
        leftovers = [
            output_dir / "checkpoints" / f".partial_{dead}_epoch_002.keras",
            output_dir / "backup" / f".partial_{dead}_1a2b3c4d",
            output_dir / "backup" / ".partial_k2x9q0ab",  # an older version's name
            output_dir / f".metrics.json.partial_{dead}_1a2b3c4d",
            tmp_path / f".served.partial_{dead}_1a2b3c4d",
        ]
        kept = [
            tmp_path / f".served.partial_{live.pid}_1a2b3c4d",  # a live export in progress
            tmp_path / ".served.partial_k2x9q0ab",  # outside the run folder: maybe live
            tmp_path / "notes.partial_1.txt",
            output_dir / "checkpoints" / "epoch_001.keras",
        ]
        for path in leftovers + kept:
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.suffix in (".keras", ".txt") or "metrics" in path.name:
                path.touch()
            else:
                path.mkdir()
        assert _prepare(_args(output_dir, export)) == "resume"
    finally:
        live.kill()
        live.wait()
    assert [path for path in leftovers if path.exists()] == []
    assert [path for path in kept if not path.exists()] == []


def test_an_export_killed_between_its_two_renames_is_put_back(tmp_path):
    output_dir, export = tmp_path / "run", tmp_path / "served"
    aside = tmp_path / f".served.old_{_dead_pid()}_1a2b3c4d"
    _write_export(str(aside), "the previous export")
    _write_export(str(tmp_path / f".served.partial_{_dead_pid()}_5e6f7a8b"), "new, unpublished")
    _prepare(_args(output_dir, export))
    assert (export / "saved_model.pb").read_text() == "the previous export"
    assert sorted(os.listdir(tmp_path)) == ["run", "served"]


def test_recovery_leaves_a_live_exports_folders_alone(tmp_path):
    aside = tmp_path / f".served.old_{os.getpid()}_1a2b3c4d"  # this process: alive
    _write_export(str(aside))
    assert recover_export_leftovers(str(tmp_path / "served")) == ([], None)
    assert aside.exists() and not (tmp_path / "served").exists()


def test_a_data_set_path_spelled_otherwise_is_the_same_run(tmp_path, monkeypatch):
    from keras_attention.training.run_folder import prepare_run_folder

    (tmp_path / "data" / "pets").mkdir(parents=True)
    run = tmp_path / "run"
    monkeypatch.chdir(tmp_path / "data")
    assert prepare_run_folder(run, {"epochs": 1, "dataset": "folder:pets"}) == "new"
    (run / "checkpoints").mkdir()
    (run / "checkpoints" / "epoch_001.keras").write_bytes(b"")
    for spelling in ("folder:pets/", "folder:./pets", f"folder:{tmp_path}/data/pets"):
        assert prepare_run_folder(run, {"epochs": 1, "dataset": spelling}) == "resume"
    assert prepare_run_folder(run, {"epochs": 2, "dataset": "folder:pets"}) == "continue"
    # Another folder, another format, or the same words from elsewhere are another run.
    (tmp_path / "data" / "birds").mkdir()
    for other in ("folder:birds", "csv:pets"):
        with pytest.raises(RunFolderError, match="holds a run with other arguments: dataset="):
            prepare_run_folder(run, {"epochs": 2, "dataset": other})
    (tmp_path / "elsewhere" / "pets").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "elsewhere")
    with pytest.raises(RunFolderError, match="holds a run with other arguments: dataset="):
        prepare_run_folder(run, {"epochs": 2, "dataset": f"folder:{tmp_path}/elsewhere/pets"})


def test_overwrite_names_what_it_removed(tmp_path, capsys):
    run = tmp_path / "run"
    assert _prepare(_args(run)) == "new"
    (run / "checkpoints").mkdir()
    (run / "checkpoints" / "epoch_001.keras").write_bytes(b"")
    (run / "my_notes.txt").write_text("the user's")
    other = _args(run, overwrite=True)
    other.epochs = 1
    other.dataset = "folder:birds"
    capsys.readouterr()
    assert _prepare(other) == "overwrite"
    printed = capsys.readouterr().out
    assert (
        f"{run}: --overwrite removed the earlier run (dataset=None there, dataset='folder:birds' "
        "now; epochs=2 there, epochs=1 now): checkpoints, my_notes.txt, run_arguments.json"
    ) in printed

"""Progress of long steps: keras' bar on a terminal, one line per stage otherwise or `--quiet`."""

import io

import pytest
import tensorflow as tf

from keras_attention import progress
from keras_attention.progress import ProgressBar
from keras_attention.tasks.translation.evaluation import translate_pairs
from keras_attention.text.reversible_tokenizer import ReversibleTokenizer


class Terminal(io.StringIO):
    def isatty(self):
        return True


class Counter:
    def __init__(self):
        self.counts = []

    def add(self, count=1):
        self.counts.append(count)


@pytest.fixture
def quiet_reset():
    yield
    progress.set_quiet(False)


def test_a_terminal_gets_keras_bar_and_quiet_gets_one_line(monkeypatch, quiet_reset):
    terminal = Terminal()
    monkeypatch.setattr("sys.stdout", terminal)  # here: pytest sets its own at each phase
    with ProgressBar("learning the source vocabulary", total=40, unit="sentences") as bar:
        for _ in range(4):
            bar.add(10)
    drawn = terminal.getvalue()
    assert drawn.startswith("learning the source vocabulary:\n")
    assert "40/40" in drawn and "━" in drawn  # keras' Progbar, drawn to the end
    assert "sentences in" not in drawn

    progress.set_quiet(True)
    terminal.seek(0), terminal.truncate()
    with ProgressBar("learning the source vocabulary", total=40, unit="sentences") as bar:
        bar.add(40)
    (line,) = terminal.getvalue().splitlines()
    assert line.startswith("learning the source vocabulary: 40 sentences in ")


def test_a_log_file_gets_one_line_per_stage(capsys):
    assert not progress.shows_bars()  # pytest's captured output is no terminal
    with ProgressBar("checking that the 3 images decode", 3, "images") as bar:
        bar.add(2)
        bar.add(1)
    assert (
        capsys.readouterr()
        .out.splitlines()[0]
        .startswith("checking that the 3 images decode: 3 images in ")
    )


def test_the_long_steps_report_what_they_have_done(tmp_path):
    texts = [f"sentence number {index}" for index in range(2500)]
    counter = Counter()
    ReversibleTokenizer.train(texts, 300, progress=counter)
    assert counter.counts == [1024, 1024, 452]  # batch by batch, every text once

    pairs = tf.data.Dataset.from_tensor_slices(([f"s{i}" for i in range(5)], ["r"] * 5))
    counter = Counter()
    translate_pairs(lambda text: {"translation": text}, pairs, batch_size=2, progress=counter)
    assert counter.counts == [2, 2, 1]

"""SkippedItemsReport: one line per epoch for each kind of item the input pipelines skipped."""

import keras
import tensorflow as tf

from keras_attention.callbacks.skipped_items_report import SkippedItemsReport
from keras_attention.data.skipped_items import SkippedItems


def tiny_model():
    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    return model


def numbers_skipping(kinds, epoch, num_items=12):
    """Numbers 0..num_items-1, each kind skipping those its rule of the epoch refuses.

    `kinds`: `[(SkippedItems, rule)]`, `rule(n, epoch)` a bool tensor: skip `n`.
    `epoch`: a tf.Variable the test sets at each epoch's start (0-based).
    """
    numbers = tf.data.Dataset.range(num_items)
    for skipped, rule in kinds:
        numbers = numbers.filter(
            lambda n, skipped=skipped, rule=rule: skipped.keep(
                tf.logical_not(rule(n, epoch)), tf.strings.format("number {}", n)
            )
        )
    return numbers.map(lambda n: (tf.cast([n], "float32"), tf.cast(n, "float32"))).batch(4)


def skipped_numbers(rule, epoch, num_items=12):
    """How many of 0..num_items-1 `rule` skips in `epoch`, by plain Python."""
    return sum(
        bool(rule(tf.constant(n, tf.int64), tf.constant(epoch, tf.int64))) for n in range(num_items)
    )


def set_epoch(variable):
    return keras.callbacks.LambdaCallback(on_epoch_begin=lambda epoch, logs: variable.assign(epoch))


def printed_lines(capsys):
    return [line for line in capsys.readouterr().out.splitlines() if line.startswith("skipped")]


def test_one_line_per_kind_per_epoch_and_none_for_an_epoch_without_skips(capsys, tmp_path):
    epoch = tf.Variable(0, dtype=tf.int64)
    log = tmp_path / "skipped_lines.txt"

    # odd numbers are skipped in epochs 1 and 3 (0-based 0 and 2), never in epoch 2;
    # multiples of five (0, 5, 10) in every epoch but the third.
    def odd(n, e):
        return (n % 2 == 1) & (e != 1)

    def fives(n, e):
        return (n % 5 == 0) & (e != 2)

    odd_items = SkippedItems("odd numbers", log)
    five_items = SkippedItems("multiples of five")
    data = numbers_skipping([(odd_items, odd), (five_items, fives)], epoch)
    report = SkippedItemsReport([odd_items, five_items])
    capsys.readouterr()
    tiny_model().fit(data, epochs=3, verbose=0, callbacks=[set_epoch(epoch), report])
    expected = []
    totals = {"odd numbers": 0, "multiples of five": 0}
    for e in range(3):
        num_odd = skipped_numbers(odd, e)
        # The second filter only meets what the first kept.
        num_fives = skipped_numbers(lambda n, e_: fives(n, e_) & ~odd(n, e_), e)
        if num_odd:
            expected.append(f"skipped {num_odd} odd numbers in epoch {e + 1} (named in {log})")
        if num_fives:
            expected.append(f"skipped {num_fives} multiples of five in epoch {e + 1}")
        totals["odd numbers"] += num_odd
        totals["multiples of five"] += num_fives
    assert expected == [
        f"skipped 6 odd numbers in epoch 1 (named in {log})",
        "skipped 2 multiples of five in epoch 1",  # 0 and 10: 5 is odd, skipped already
        "skipped 3 multiples of five in epoch 2",
        f"skipped 6 odd numbers in epoch 3 (named in {log})",
    ]
    assert printed_lines(capsys) == expected
    assert report.totals == totals


def test_counts_met_before_training_are_not_epoch_ones(capsys):
    epoch = tf.Variable(0, dtype=tf.int64)
    odd_items = SkippedItems("odd numbers")
    data = numbers_skipping([(odd_items, lambda n, e: n % 2 == 1)], epoch)
    # Measuring the data before training meets the skipped items too.
    assert sum(1 for _ in data) == 2  # batches of the 6 even numbers
    assert sum(1 for _ in data) == 2  # batches of the 6 even numbers
    capsys.readouterr()
    report = SkippedItemsReport([odd_items])
    tiny_model().fit(data, epochs=2, verbose=0, callbacks=[report])
    assert printed_lines(capsys) == [
        "skipped 6 odd numbers in epoch 1",
        "skipped 6 odd numbers in epoch 2",
    ]
    assert report.totals == {"odd numbers": 12}
    assert odd_items.take_count() == 0  # the report took them all


def test_the_line_comes_after_the_epochs_progress_bar(capsys):
    epoch = tf.Variable(0, dtype=tf.int64)
    odd_items = SkippedItems("odd numbers")
    data = numbers_skipping([(odd_items, lambda n, e: (n % 2 == 1) & (e == 0))], epoch)
    capsys.readouterr()
    tiny_model().fit(
        data, epochs=2, verbose=2, callbacks=[set_epoch(epoch), SkippedItemsReport([odd_items])]
    )
    lines = capsys.readouterr().out.splitlines()
    assert lines.count("skipped 6 odd numbers in epoch 1") == 1
    position = lines.index("skipped 6 odd numbers in epoch 1")
    assert lines[position - 1].startswith("2/2"), lines  # epoch 1's summary line
    assert lines[position + 1] == "Epoch 2/2", lines
    assert not [line for line in lines if line.startswith("skipped") and line != lines[position]]


def test_a_report_without_any_skipped_item_prints_nothing(capsys):
    epoch = tf.Variable(0, dtype=tf.int64)
    nothing = SkippedItems("negative numbers")
    data = numbers_skipping([(nothing, lambda n, e: n < 0)], epoch)
    capsys.readouterr()
    report = SkippedItemsReport([nothing])
    tiny_model().fit(data, epochs=2, verbose=0, callbacks=[report])
    assert printed_lines(capsys) == []
    assert report.totals == {"negative numbers": 0}

"""SkippedItems: items a pipeline cannot use, counted, named in a file, or a strict stop."""

import collections

import pytest
import tensorflow as tf

from keras_attention.data.skipped_items import SkippedItems
from keras_attention.data.skipped_items import strict_errors_as_exit
from keras_attention.data.skipped_items import strict_stop_message

STOP = "{what}: {name} (--strict: without it, skipped and named)"


def log_lines(path):
    with open(path, encoding="utf-8") as file:
        return file.read().splitlines()


def blank_filter(skipped, lines):
    """The non-blank lines of `lines`, the blank ones named "line N" (1-based)."""
    numbered = tf.data.Dataset.from_tensor_slices(lines).enumerate(1)
    kept = numbered.filter(
        lambda number, line: skipped.keep(line != "", tf.strings.format("line {}", number))
    )
    return [line.decode() for _, line in kept.as_numpy_iterator()]


def test_a_filter_keeps_the_good_items_and_names_the_others_in_order(tmp_path):
    log = tmp_path / "skipped_lines.txt"
    lines = ["a", "", "b", "", "", "c", "d", ""]
    skipped = SkippedItems("blank lines", log)
    assert blank_filter(skipped, lines) == [line for line in lines if line]
    expected = [f"line {number}" for number, line in enumerate(lines, 1) if not line]
    assert log_lines(log) == expected
    assert skipped.take_count() == len(expected) == 4
    assert skipped.take_count() == 0  # the count starts again
    # A second pass (epoch) appends its names after the first's.
    assert blank_filter(skipped, lines) == ["a", "b", "c", "d"]
    assert log_lines(log) == expected + expected
    assert skipped.take_count() == 4


def test_names_are_appended_to_an_existing_file_and_may_be_any_text(tmp_path):
    log = tmp_path / "skipped.txt"
    log.write_text("from an earlier run\n", encoding="utf-8")
    skipped = SkippedItems("odd numbers", str(log))
    numbers = tf.data.Dataset.range(7).filter(
        lambda n: skipped.keep(n % 2 == 0, tf.strings.format("photos/été {}.jpg", n))
    )
    assert list(numbers.as_numpy_iterator()) == [0, 2, 4, 6]
    assert log_lines(log) == ["from an earlier run"] + [f"photos/été {n}.jpg" for n in (1, 3, 5)]


def test_without_a_file_only_the_count_is_kept(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    skipped = SkippedItems("blank lines")
    assert skipped.log_path is None
    assert blank_filter(skipped, ["", "x", ""]) == ["x"]
    assert skipped.take_count() == 2
    assert list(tmp_path.iterdir()) == []


def test_a_parallel_map_counts_and_names_every_skipped_item(tmp_path):
    log = tmp_path / "skipped.txt"
    skipped = SkippedItems("multiples of three", log)
    numbers = tf.data.Dataset.range(600).map(
        lambda n: (n, skipped.keep(n % 3 != 0, tf.strings.format("item {}", n))),
        num_parallel_calls=8,
    )
    kept = [int(n) for n, ok in numbers.as_numpy_iterator() if ok]
    assert kept == [n for n in range(600) if n % 3]
    expected = [f"item {n}" for n in range(600) if n % 3 == 0]
    # Parallel calls meet the items in any order; every name is there once, on a line of its own.
    assert collections.Counter(log_lines(log)) == collections.Counter(expected)
    assert skipped.take_count() == len(expected) == 200


def test_keep_all_counts_and_names_the_bad_items_of_batches(tmp_path):
    log = tmp_path / "skipped.txt"
    skipped = SkippedItems("blank lines", log)
    ok = tf.constant([True, False, True, False, False])
    names = tf.constant(["l1", "l2", "l3", "l4", "l5"])
    assert skipped.keep_all(ok, names).numpy().tolist() == [True, False, True, False, False]
    assert skipped.keep_all(tf.constant([True, True]), tf.constant(["a", "b"])).numpy().all()
    assert skipped.take_count() == 3
    assert log_lines(log) == ["l2", "l4", "l5"]

    lines = [f"text {i}" if i % 4 else "" for i in range(50)]
    batches = tf.data.Dataset.from_tensor_slices(lines).enumerate().batch(8)
    masked = batches.map(
        lambda numbers, texts: tf.boolean_mask(
            texts,
            skipped.keep_all(
                texts != "", tf.strings.join(["line ", tf.strings.as_string(numbers)])
            ),
        )
    )
    kept = [text.decode() for batch in masked.as_numpy_iterator() for text in batch]
    assert kept == [line for line in lines if line]
    assert skipped.take_count() == 13
    assert log_lines(log)[3:] == [f"line {i}" for i in range(50) if i % 4 == 0]


def test_take_count_reads_what_was_met_since_the_last_call():
    skipped = SkippedItems("odd numbers")
    numbers = tf.data.Dataset.range(10).filter(
        lambda n: skipped.keep(n % 2 == 0, tf.strings.as_string(n))
    )
    for expected in (5, 5):
        assert list(numbers.as_numpy_iterator()) == [0, 2, 4, 6, 8]
        assert skipped.take_count() == expected
    list(numbers.take(3).as_numpy_iterator())  # meets 0, 1, 2, 3, 4
    assert skipped.take_count() == 2
    assert skipped.take_count() == 0


def run_strict(form, skipped, name):
    """Meets the bad item `name` in one of the ways a pipeline meets it."""
    name = tf.constant(name)
    ok, names = tf.constant([True, False, False]), tf.stack([tf.constant("fine"), name, "later"])
    runs = {
        "eager keep": lambda: skipped.keep(tf.constant(False), name),
        "eager keep_all": lambda: skipped.keep_all(ok, names),
        "tf.data keep": lambda: list(
            tf.data.Dataset.from_tensor_slices(["fine", name]).filter(
                lambda item: skipped.keep(item == "fine", item)
            )
        ),
        "tf.data keep_all": lambda: list(
            tf.data.Dataset.from_tensors((ok, names)).map(skipped.keep_all)
        ),
        "tf.function keep": lambda: tf.function(skipped.keep)(tf.constant(False), name),
    }
    runs[form]()


def strict_stop_in(form, skipped, name):
    """The error of a strict stop for `name` in one of the ways a pipeline meets it."""
    with pytest.raises(tf.errors.InvalidArgumentError) as error:
        run_strict(form, skipped, name)
    return error.value


FORMS = ["eager keep", "eager keep_all", "tf.data keep", "tf.data keep_all", "tf.function keep"]


@pytest.mark.parametrize("form", FORMS)
def test_strict_stops_at_the_first_bad_item_with_a_message_naming_it(form):
    skipped = SkippedItems("image files that cannot be decoded", strict=True)
    error = strict_stop_in(form, skipped, "cat/1.jpg")
    expected = STOP.format(what="image files that cannot be decoded", name="cat/1.jpg")
    assert strict_stop_message(error) == expected
    with pytest.raises(SystemExit) as stop:
        with strict_errors_as_exit():
            raise error
    assert str(stop.value) == f"error: {expected}"
    assert stop.value.__cause__ is None and stop.value.__suppress_context__


@pytest.mark.parametrize("form", FORMS)
def test_strict_errors_as_exit_around_the_pipeline(form):
    skipped = SkippedItems("blank lines", strict=True)
    with pytest.raises(SystemExit, match=r"^error: blank lines: train\.en line 3 \(--strict"):
        with strict_errors_as_exit():
            run_strict(form, skipped, "train.en line 3")


@pytest.mark.parametrize("form", ["eager keep", "tf.data keep"])
@pytest.mark.parametrize(
    "name", ["photos/l'été.jpg", 'say "cheese".jpg', "写真/猫.jpg", "a] [b"], ids=repr
)
def test_the_strict_message_names_the_item_as_it_is(form, name):
    # File names hold apostrophes, quotes and letters outside ASCII: the message shows them as
    # they are, in both the eager and the tf.data forms of the error.
    skipped = SkippedItems("image files that cannot be decoded", strict=True)
    error = strict_stop_in(form, skipped, name)
    expected = STOP.format(what="image files that cannot be decoded", name=name)
    assert strict_stop_message(error) == expected


def test_without_strict_the_same_items_are_counted_not_stopped():
    skipped = SkippedItems("blank lines", strict=False)
    assert not bool(skipped.keep(tf.constant(False), tf.constant("x")))
    assert bool(skipped.keep(tf.constant(True), tf.constant("y")))
    assert skipped.take_count() == 1


def test_other_errors_pass_through_unchanged():
    assert strict_stop_message(tf.errors.InvalidArgumentError(None, None, "shape mismatch")) is None
    assert strict_stop_message(ValueError("keras_attention strict data stop")) is None
    other = tf.errors.InvalidArgumentError(None, None, "Input to reshape is a tensor with 3 values")
    with pytest.raises(tf.errors.InvalidArgumentError) as error:
        with strict_errors_as_exit():
            raise other
    assert error.value is other
    with pytest.raises(KeyError) as key_error:
        with strict_errors_as_exit():
            raise KeyError("k")
    assert key_error.value.args == ("k",)

    # A failing assertion of the pipeline itself is not a strict stop.
    def checked(n):
        with tf.control_dependencies([tf.debugging.assert_less(n, tf.constant(2, tf.int64))]):
            return tf.identity(n)

    dataset = tf.data.Dataset.range(3).map(checked)
    with pytest.raises(tf.errors.InvalidArgumentError, match="x < y"):
        with strict_errors_as_exit():
            list(dataset)
    with strict_errors_as_exit():
        value = 1 + 1
    assert value == 2


@pytest.mark.parametrize("what", ["", None, 3, b"blank lines"])
def test_what_must_name_the_items(what):
    with pytest.raises(ValueError, match="`what` must name the items skipped") as error:
        SkippedItems(what)
    assert f"what={what!r}" in str(error.value)


def test_the_message_says_how_many_and_where_the_names_are(tmp_path):
    log = str(tmp_path / "skipped_lines.txt")
    assert SkippedItems("blank lines", log).message(3, "in epoch 2") == (
        f"skipped 3 blank lines in epoch 2 (named in {log})"
    )
    assert SkippedItems("blank lines").message(1) == "skipped 1 blank lines"

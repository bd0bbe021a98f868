"""hf_image_pairs: rows of a `datasets` split as encoded images, in a new order every pass."""

from keras_attention.data.hf_datasets import hf_image_pairs

ROWS = {"train": [{"image": {"bytes": f"image {row}".encode()}} for row in range(20)]}
ENTRIES = [(("train", row), row % 3) for row in range(20)]


def _names(dataset):
    return [name.decode() for _, name, _ in dataset.as_numpy_iterator()]


def test_without_a_seed_the_rows_keep_their_order():
    assert _names(hf_image_pairs(ENTRIES, ROWS, "image")) == [
        f"train row {row + 1}" for row in range(20)
    ]


def test_with_a_seed_each_pass_is_a_new_order_of_every_row_with_its_label():
    pairs = hf_image_pairs(ENTRIES, ROWS, "image", shuffle_seed=3)
    first, second = list(pairs.as_numpy_iterator()), list(pairs.as_numpy_iterator())
    assert [row[1] for row in first] != [row[1] for row in second]
    expected = sorted(
        (f"image {row}".encode(), f"train row {row + 1}".encode(), row % 3) for row in range(20)
    )
    assert sorted(first) == expected and sorted(second) == expected

"""make_translation_batches: teacher-forcing inputs, shifted labels, padding."""

import numpy as np
import pytest
import tensorflow as tf

from keras_attention.tasks.translation.batches import make_translation_batches
from keras_attention.text.subword_encoder import SubwordEncoder

PAD, UNK, START, END, A, B = range(6)


@pytest.fixture(scope="module")
def encoder():
    return SubwordEncoder(["[PAD]", "[UNK]", "[START]", "[END]", "a", "b"])


def pairs_dataset(pairs):
    return tf.data.Dataset.from_tensor_slices(
        ([source for source, _ in pairs], [target for _, target in pairs])
    )


def all_batches(dataset):
    return [
        (inputs["source"].numpy(), inputs["target"].numpy(), labels.numpy())
        for inputs, labels in dataset
    ]


def test_inputs_and_labels_on_a_tiny_example(encoder):
    pairs = [("a b", "b a a"), ("b", "a b a b a b a"), ("a", "a")]
    batches = make_translation_batches(
        pairs_dataset(pairs),
        encoder,
        encoder,
        batch_size=3,
        source_length=3,
        target_length=4,
        shuffle=False,
    )
    [(source, target, labels)] = all_batches(batches)
    np.testing.assert_array_equal(source, [[A, B, PAD], [B, PAD, PAD], [A, PAD, PAD]])
    # Targets: "[START] b a a [END]", "[START] a b a [END]" (cut), "[START] a [END]".
    np.testing.assert_array_equal(
        target, [[START, B, A, A], [START, A, B, A], [START, A, END, PAD]]
    )
    np.testing.assert_array_equal(labels, [[B, A, A, END], [A, B, A, END], [A, END, PAD, PAD]])


def test_labels_are_the_decoder_input_shifted_by_one(encoder):
    rng = np.random.default_rng(0)
    pairs = [
        (
            " ".join(rng.choice(["a", "b"], size=rng.integers(1, 9))),
            " ".join(rng.choice(["a", "b"], size=rng.integers(1, 9))),
        )
        for _ in range(50)
    ]
    batches = make_translation_batches(
        pairs_dataset(pairs),
        encoder,
        encoder,
        batch_size=16,
        source_length=6,
        target_length=7,
        seed=1,
    )
    for source, target, labels in all_batches(batches):
        assert source.dtype == target.dtype == labels.dtype == np.int32
        assert target.shape == labels.shape and source.shape[1] == 6 and target.shape[1] == 7
        np.testing.assert_array_equal(target[:, 1:], labels[:, :-1])
        assert (target[:, 0] == START).all()
        # Exactly one [END] per label row, followed only by padding.
        assert ((labels == END).sum(axis=1) == 1).all()
        end_position = np.argmax(labels == END, axis=1)
        after_end = np.arange(7)[None, :] > end_position[:, None]
        assert (labels[after_end] == PAD).all() and (labels[~after_end] != PAD).all()


def test_element_spec_and_drop_remainder(encoder):
    pairs = pairs_dataset([("a", "b")] * 5)
    kept = make_translation_batches(pairs, encoder, encoder, 2, 3, 4, shuffle=False)
    dropped = make_translation_batches(pairs, encoder, encoder, 2, 3, 4, drop_remainder=True)
    assert [len(batch[0]) for batch in all_batches(kept)] == [2, 2, 1]
    assert [len(batch[0]) for batch in all_batches(dropped)] == [2, 2]
    inputs_spec, labels_spec = dropped.element_spec
    assert inputs_spec["source"].shape.as_list() == [2, 3]
    assert inputs_spec["target"].shape.as_list() == [2, 4]
    assert labels_spec.shape.as_list() == [2, 4] and labels_spec.dtype == tf.int32
    assert kept.element_spec[1].shape.as_list() == [None, 4]


def test_shuffle_is_seeded_and_keeps_every_pair(encoder):
    # Source i spells i in binary with a = 0 and b = 1, one word per bit.
    bits = [[int(bit) for bit in f"{i:05b}"] for i in range(32)]
    pairs = [(" ".join("ab"[bit] for bit in row), "a") for row in bits]
    in_order = np.array(bits) + A  # ids of a and b

    def first_epoch(seed):
        batches = make_translation_batches(
            pairs_dataset(pairs), encoder, encoder, 8, 5, 2, seed=seed
        )
        return np.concatenate([source for source, _, _ in all_batches(batches)])

    first = first_epoch(seed=3)
    np.testing.assert_array_equal(first, first_epoch(seed=3))
    assert not np.array_equal(first, first_epoch(seed=4))
    assert not np.array_equal(first, in_order)
    assert sorted(map(tuple, first)) == sorted(map(tuple, in_order))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"batch_size": 0}, "Received: batch_size=0"),
        ({"source_length": -2}, "Received: source_length=-2"),
        ({"target_length": 1.5}, "Received: target_length=1.5"),
        ({"shuffle_buffer_size": 0}, "Received: shuffle_buffer_size=0"),
    ],
)
def test_bad_sizes_raise(encoder, kwargs, message):
    arguments = {"batch_size": 2, "source_length": 3, "target_length": 3, **kwargs}
    with pytest.raises(ValueError, match=message):
        make_translation_batches(pairs_dataset([("a", "b")]), encoder, encoder, **arguments)


def test_dataset_that_is_not_string_pairs_raises(encoder):
    numbers = tf.data.Dataset.from_tensor_slices(([1, 2], [3, 4]))
    with pytest.raises(
        ValueError,
        match=r"scalar strings. Received: pairs_dataset with "
        r"element_spec=",
    ):
        make_translation_batches(numbers, encoder, encoder, 2, 3, 3)

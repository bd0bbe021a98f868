"""Teacher-forcing batches, example counts and the memory rule of the captioner's training."""

import numpy as np
import tensorflow as tf

from keras_attention.tasks.captioning.batches import caption_batches
from keras_attention.tasks.captioning.batches import fits_in_memory
from keras_attention.tasks.captioning.batches import training_and_validation_batches
from keras_attention.text.reversible_tokenizer import ReversibleTokenizer

CAPTIONS = ["a red circle", "a blue square", "a red square", "a blue circle", "a circle"]


def pairs_of(count):
    images = np.arange(count, dtype="float32")[:, None, None, None] * np.ones((1, 4, 4, 3))
    captions = [CAPTIONS[i % len(CAPTIONS)] for i in range(count)]
    return tf.data.Dataset.from_tensor_slices((images.astype("float32"), captions))


TOKENIZER = ReversibleTokenizer.train(CAPTIONS * 2, 300)


def test_labels_are_the_inputs_shifted_by_one():
    batches = list(caption_batches(pairs_of(5), TOKENIZER, 2, max_length=6).as_numpy_iterator())
    assert [len(labels) for _, labels in batches] == [2, 2, 1]  # in order, nothing dropped
    for index, (inputs, labels) in enumerate(batches):
        full = TOKENIZER.encode(
            [CAPTIONS[2 * index + row] for row in range(len(labels))],
            7,
            add_start=True,
            add_end=True,
        ).numpy()
        np.testing.assert_array_equal(inputs["caption"], full[:, :-1])
        np.testing.assert_array_equal(labels, full[:, 1:])
        assert (inputs["caption"][:, 0] == TOKENIZER.start_id).all()
        assert inputs["image"][0, 0, 0, 0] == 2 * index  # the image of its caption


def test_shuffled_training_batches_are_whole_and_reproducible():
    train = caption_batches(pairs_of(5), TOKENIZER, 2, max_length=6, shuffle=True, seed=3)
    first = [inputs["image"][:, 0, 0, 0].numpy().tolist() for inputs, _ in train]
    again = caption_batches(pairs_of(5), TOKENIZER, 2, max_length=6, shuffle=True, seed=3)
    assert [len(b) for b in first] == [2, 2]  # the remainder dropped: one batch shape
    assert first == [inputs["image"][:, 0, 0, 0].numpy().tolist() for inputs, _ in again]
    # Fewer pairs than a batch: one smaller batch rather than none.
    few = caption_batches(pairs_of(3), TOKENIZER, 8, max_length=6, shuffle=True, seed=0)
    assert [len(labels) for _, labels in few] == [3]


def test_an_empty_validation_split_gives_no_validation_batches():
    splits = {"train": pairs_of(4), "validation": pairs_of(4).take(0)}
    train, validation = training_and_validation_batches(splits, TOKENIZER, 2, 6, 0, cache=True)
    assert validation is None and sum(1 for _ in train) == 2
    splits["validation"] = pairs_of(3)
    _, validation = training_and_validation_batches(splits, TOKENIZER, 2, 6, 0, cache=False)
    assert [len(labels) for _, labels in validation] == [2, 1]


def test_training_shuffle_holds_at_most_256_mb_of_pixels(monkeypatch):
    from keras_attention.data import image_shuffle

    seen = []
    original = tf.data.Dataset.shuffle

    def recording(dataset, buffer_size, *args, **kwargs):
        seen.append(int(buffer_size))
        return original(dataset, buffer_size, *args, **kwargs)

    monkeypatch.setattr(tf.data.Dataset, "shuffle", recording)
    tokenizer = ReversibleTokenizer.train(CAPTIONS * 2, 300)
    large = tf.data.Dataset.from_tensors((tf.zeros((224, 224, 3)), "a red circle")).repeat(4)
    caption_batches(large, tokenizer, 2, max_length=5, shuffle=True, seed=0)
    caption_batches(pairs_of(4), tokenizer, 2, max_length=5, shuffle=True, seed=0)
    per_image = 224 * 224 * 3 * 4  # float32 pixels
    assert seen == [image_shuffle.SHUFFLE_BYTES // per_image, 4096]


def test_fits_in_memory_counts_float32_pixels():
    # 1000 images of 64 x 64 x 3 float32 are 49,152,000 bytes.
    assert fits_in_memory(1000, (64, 64), budget=49_152_000)
    assert not fits_in_memory(1000, (64, 64), budget=49_151_999)

"""Teacher-forcing batches of `(image, caption)` pairs for training a captioner.

Each caption is encoded once with its start and end tokens; the model reads
the ids without the last and predicts them shifted by one. Training batches
are shuffled and of one shape (the remainder dropped), so compiled steps are
traced once.

Example:

>>> import numpy as np
>>> import tensorflow as tf
>>> from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
>>> from keras_attention.tasks.captioning.batches import caption_batches
>>> tokenizer = ReversibleTokenizer.train(["a red circle"] * 2, 300)
>>> pairs = tf.data.Dataset.from_tensor_slices(
...     (np.zeros((3, 8, 8, 3), "float32"), ["a red circle"] * 3))
>>> inputs, labels = next(iter(caption_batches(pairs, tokenizer, 2, max_length=5)))
>>> inputs["image"].shape, inputs["caption"].shape, labels.shape
(TensorShape([2, 8, 8, 3]), TensorShape([2, 5]), TensorShape([2, 5]))
"""

import tensorflow as tf

from keras_attention.data.image_shuffle import image_shuffle_buffer
from keras_attention.validation import check_positive_int

# Training images kept in memory after their first decoding, at most (float32 pixels).
CACHE_BYTES = 2**30
# Captions the shuffle buffer holds.
_SHUFFLE_BUFFER = 4096


def fits_in_memory(num_examples, image_size, budget=CACHE_BYTES):
    """Whether `num_examples` float32 RGB images of `image_size` fit in `budget` bytes.

    Example:

    >>> from keras_attention.tasks.captioning.batches import fits_in_memory
    >>> fits_in_memory(4000, (48, 48)), fits_in_memory(400_000, (224, 224))
    (True, False)
    """
    height, width = image_size
    return num_examples * height * width * 3 * 4 <= budget


def caption_batches(
    pairs, encoder, batch_size, max_length, shuffle=False, seed=None, cache=False, num_pairs=None
):
    """`({"image", "caption": ids[:-1]}, ids[1:])` batches: teacher forcing on shifted ids.

    Args:
        pairs: a `tf.data.Dataset` of `(image, caption)` pairs.
        encoder: the captions' tokenizer (`encode(texts, length, add_start=,
            add_end=)`).
        batch_size: pairs per batch.
        max_length: tokens read and predicted per caption.
        shuffle: shuffle every epoch (`seed` fixes the order) and drop the
            last partial batch, when there is a whole one.
        seed: the shuffle's seed.
        cache: keep the decoded images in memory after the first epoch.
        num_pairs: how many pairs `pairs` holds, when its cardinality is
            unknown (a stream of decoded files); None reads the cardinality.

    Returns:
        a `tf.data.Dataset` of `(inputs, labels)`, ids `(B, max_length)`.
    """
    check_positive_int("batch_size", batch_size)
    check_positive_int("max_length", max_length)

    def to_example(image, text):
        ids = encoder.encode(text, max_length + 1, add_start=True, add_end=True)  # (L + 1,)
        return {"image": image, "caption": ids[:-1]}, ids[1:]

    dataset = pairs.map(to_example, num_parallel_calls=tf.data.AUTOTUNE)
    if cache:
        dataset = dataset.cache()
    if shuffle:
        buffer = image_shuffle_buffer(dataset, batch_size, _SHUFFLE_BUFFER)
        dataset = dataset.shuffle(buffer, seed=seed, reshuffle_each_iteration=True)
    # One batch shape while training: compiled steps are traced once.
    enough = (int(pairs.cardinality()) if num_pairs is None else num_pairs) >= batch_size
    dataset = dataset.batch(batch_size, drop_remainder=shuffle and enough)
    return dataset.prefetch(tf.data.AUTOTUNE)


def training_and_validation_batches(splits, encoder, batch_size, max_length, seed, cache):
    """Shuffled training batches, and validation batches (None for an empty split).

    Args:
        splits: a `DatasetSplits` (or a dict) with "train" and "validation"
            datasets of pairs; its `elements` count the pairs of streamed
            splits, whose cardinality is unknown.
        encoder, batch_size, max_length, seed, cache: as `caption_batches`.

    Returns:
        `(train, validation)`.
    """
    elements = getattr(splits, "elements", None) or {}

    def count(name):
        known = elements.get(name)
        return int(splits[name].cardinality()) if known is None else int(known)

    train = caption_batches(
        splits["train"],
        encoder,
        batch_size,
        max_length,
        shuffle=True,
        seed=seed,
        cache=cache,
        num_pairs=count("train"),
    )
    if count("validation") == 0:
        return train, None
    validation = caption_batches(
        splits["validation"], encoder, batch_size, max_length, seed=seed, cache=cache
    )
    return train, validation

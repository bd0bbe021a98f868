"""Teacher-forcing batches for translation models from (source, target) pairs."""

import tensorflow as tf

from keras_attention.validation import check_positive_int

_DEFAULT_SHUFFLE_BUFFER = 10_000
LONG_PAIRS = ("truncate", "drop")
# Pairs measured at once when long ones are dropped: tokenizers work on batches.
_MEASURE_BATCH = 1024


def make_translation_batches(
    pairs_dataset,
    source_encoder,
    target_encoder,
    batch_size,
    source_length,
    target_length,
    shuffle=True,
    seed=0,
    drop_remainder=False,
    shuffle_buffer_size=_DEFAULT_SHUFFLE_BUFFER,
    long_pairs="truncate",
    skipped=None,
):
    """Encode pairs into `({"source", "target"}, labels)` batches for `model.fit`.

    The target is encoded once as `[START] pieces... [END]` over
    `target_length + 1` positions; the decoder input "target" is that
    sequence without its last position and the labels are the same sequence
    without its first, so `labels[:, t]` is the token that follows
    `target[:, t]`. Id 0 is padding in all three tensors; a target that does
    not fit is cut so that `[END]` is still the last label.

    One function on purpose: its length is this docstring, the batches' layout and
    arguments; the code is one tf.data pipeline, read from top to bottom.

    Args:
        pairs_dataset: `tf.data.Dataset` of `(source, target)` scalar strings,
            as `load_translation_pairs` gives.
        source_encoder: a `SubwordEncoder` for the source language.
        target_encoder: a `SubwordEncoder` for the target language.
        batch_size: number of pairs per batch.
        source_length: length S of the source ids.
        target_length: length T of the decoder input and of the labels.
        shuffle: whether to shuffle the pairs (again at every epoch).
        seed: seed of the shuffle.
        drop_remainder: whether to drop a last batch smaller than `batch_size`.
        shuffle_buffer_size: number of pairs the shuffle draws from.
        long_pairs: "truncate" cuts a pair that does not fit the lengths;
            "drop" leaves it out (the batches keep one shape), telling
            `skipped`.
        skipped: with "drop", the `SkippedItems` told of the pairs left
            out (counted, not named); None to leave them out silently.

    Returns:
        `tf.data.Dataset` of `({"source": (B, S) int32, "target": (B, T)
        int32}, labels (B, T) int32)`, prefetched.

    Example:

    >>> import tensorflow as tf
    >>> from keras_attention.tasks.translation.batches import make_translation_batches
    >>> from keras_attention.text.subword_encoder import SubwordEncoder
    >>> encoder = SubwordEncoder(["[PAD]", "[UNK]", "[START]", "[END]", "a", "b"])
    >>> pairs = tf.data.Dataset.from_tensor_slices((["a b"], ["b a a"]))
    >>> inputs, labels = next(iter(make_translation_batches(
    ...     pairs, encoder, encoder, batch_size=1, source_length=3, target_length=5)))
    >>> inputs["source"].numpy().tolist(), inputs["target"].numpy().tolist()
    ([[4, 5, 0]], [[2, 5, 4, 4, 3]])
    >>> labels.numpy().tolist()
    [[5, 4, 4, 3, 0]]
    """
    _check_pairs_dataset(pairs_dataset)
    check_positive_int("batch_size", batch_size)
    check_positive_int("source_length", source_length)
    check_positive_int("target_length", target_length)
    check_positive_int("shuffle_buffer_size", shuffle_buffer_size)
    if long_pairs not in LONG_PAIRS:
        raise ValueError(
            f"`long_pairs` must be one of {LONG_PAIRS}. Received: long_pairs={long_pairs!r}"
        )

    @tf.autograph.experimental.do_not_convert  # plain TensorFlow ops: faster tracing
    def encode(sources, targets):
        source_ids = source_encoder.encode(sources, source_length)  # (B, S)
        target_ids = target_encoder.encode(
            targets, target_length + 1, add_start=True, add_end=True
        )  # (B, T + 1)
        inputs = {"source": source_ids, "target": target_ids[:, :-1]}  # target (B, T)
        return inputs, target_ids[:, 1:]  # (B, T)

    if shuffle:
        pairs_dataset = pairs_dataset.shuffle(
            shuffle_buffer_size, seed=seed, reshuffle_each_iteration=True
        )
    if long_pairs == "drop":
        pairs_dataset = pairs_dataset.batch(_MEASURE_BATCH).map(
            _fitting_pairs(source_encoder, target_encoder, source_length, target_length, skipped),
            num_parallel_calls=tf.data.AUTOTUNE,
        )
        pairs_dataset = pairs_dataset.unbatch()
    # Batching before encoding lets the tokenizer work on whole batches.
    batches = pairs_dataset.batch(batch_size, drop_remainder=drop_remainder)
    batches = batches.map(encode, num_parallel_calls=tf.data.AUTOTUNE)
    return batches.prefetch(tf.data.AUTOTUNE)


def _check_pairs_dataset(pairs_dataset):
    """Refuses anything but a `tf.data.Dataset` of `(source, target)` scalar strings."""
    spec = getattr(pairs_dataset, "element_spec", None)
    if not (
        isinstance(spec, tuple)
        and len(spec) == 2
        and all(
            isinstance(s, tf.TensorSpec) and s.dtype == tf.string and s.shape.rank == 0
            for s in spec
        )
    ):
        raise ValueError(
            "`pairs_dataset` must be a tf.data.Dataset of (source, target) scalar strings. "
            f"Received: pairs_dataset with element_spec={spec}"
        )


def _fitting_pairs(source_encoder, target_encoder, source_length, target_length, skipped):
    """A map from pair batches `(B,)` to those that fit the lengths uncut, the others told.

    A source fits in `source_length` tokens with the end token its
    tokenizer always adds (Marian's); a target with its start and end
    tokens in `target_length + 1` (the decoder input and the labels).
    """
    source_extra = int(bool(getattr(source_encoder, "always_add_end", False)))

    @tf.autograph.experimental.do_not_convert  # plain TensorFlow ops: faster tracing
    def keep_fitting(sources, targets):
        source_tokens = source_encoder.tokenize(sources).row_lengths() + source_extra  # (B,)
        target_tokens = target_encoder.tokenize(targets).row_lengths() + 2  # (B,)
        fits = (source_tokens <= source_length) & (target_tokens <= target_length + 1)
        if skipped is not None:
            fits = skipped.keep_all(fits, sources)
        return tf.boolean_mask(sources, fits), tf.boolean_mask(targets, fits)

    return keep_fitting

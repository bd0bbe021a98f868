"""A replica's share of a loss that is already a mean, under `tf.distribute`.

Keras scales the losses it reduces itself by `1 / num_replicas_in_sync`
(the replicas' gradients are summed) and multiplies the logged value back.
It leaves a loss function's scalar result as it is, so a loss that returns
its own mean must take its share itself; without it the logged loss and the
gradients are `num_replicas_in_sync` times too large.
"""

import keras


def replica_share(loss):
    """`loss / num_replicas_in_sync` under a TensorFlow distribution strategy, else `loss`.

    Args:
        loss: a scalar loss, the mean over this replica's part of the batch.

    Returns:
        The scalar to add up over the replicas.

    Example:

    >>> import tensorflow as tf
    >>> from keras_attention.losses.replica_share import replica_share
    >>> float(replica_share(tf.constant(3.0)))  # one device: unchanged
    3.0
    """
    if keras.backend.backend() != "tensorflow":
        return loss
    import tensorflow as tf

    replicas = tf.distribute.get_strategy().num_replicas_in_sync
    if replicas == 1:
        return loss
    return loss * keras.ops.cast(1.0 / replicas, loss.dtype)

"""Scaling the queries of dot-product attention, or not when it is done already."""

from keras import ops


def scale_queries(query, scale):
    """`query * scale`, skipped for a Python scale of 1.

    Layers that fold the scale into their query projection (a multiply on
    the small kernel rather than a pass over every query) call the kernels
    with `scale=1.0`, which then costs nothing.

    Args:
        query: tensor of queries.
        scale: Python number or scalar tensor.

    Returns:
        `query` scaled, in its own dtype.

    Example:

    >>> import numpy as np
    >>> np.asarray(scale_queries(np.ones(2, "float32"), 0.5)).tolist()
    [0.5, 0.5]
    """
    if isinstance(scale, (int, float)) and scale == 1:
        return query
    return query * ops.cast(scale, query.dtype)

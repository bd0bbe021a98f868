"""The general attention layer: scores -> mask -> softmax -> dropout -> weighted sum."""

import keras
from keras import ops

from keras_attention.layers.attention.call_arguments import call_arguments
from keras_attention.ops.masks import boolean_mask
from keras_attention.ops.masks import causal_mask
from keras_attention.ops.masks import merge_masks
from keras_attention.ops.masks import query_key_mask
from keras_attention.ops.softmax import masked_softmax
from keras_attention.validation import check_rate
from keras_attention.validation import check_seed


class BaseAttention(keras.layers.Layer):
    """A query attends over a memory of keys and values; subclasses choose the score.

    Every step is a method a subclass may override; a new attention layer
    usually overrides only `_compute_scores(query, key)` (and `build()` for
    its weights):

    1. `_project_keys(key)`: the part of the score that depends on the keys
       only (identity here). `precompute_keys()` runs it once so that a
       decoder attending over a fixed memory at every step does not redo it.
    2. `_compute_scores(query, key)`: alignment scores `(B, Tq, S)` from
       queries `(B, Tq, Dq)` and projected keys `(B, S, Dk')`.
    3. `_scores_mask(query_mask, value_mask)`: which scores take part.
    4. `_apply_scores(scores, value, mask, training)`: masked float32
       softmax, dropout, weighted sum of the values.

    Shapes: the query is one step `(B, Dq)` or a sequence `(B, Tq, Dq)`;
    the value is a sequence `(B, Tv, Dv)` or a feature map `(B, H, W, Dv)`
    whose `S = H * W` positions are attended to as one sequence. The key
    has the positions of the value and any size `Dk`. A query of rank 4 or
    more has batch axes before its last two, `(B, ..., Tq, Dq)`, as in
    `keras.layers.Attention`; the value and key then have the query's rank,
    `(B, ..., Tv, Dv)`, and the attention runs over `Tv` for each batch entry.

    The inputs may also come as keras' `Attention` takes them: a list
    `[query, value]` or `[query, value, key]`, with `mask=[query_mask,
    value_mask]`.

    Args:
        dropout: fraction of the attention weights dropped in training.
        seed: int seed of the dropout.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        query: `(B, Dq)`, `(B, Tq, Dq)` or `(B, ..., Tq, Dq)`; or the list
            `[query, value]` / `[query, value, key]`.
        value: `(B, Tv, Dv)` or `(B, H, W, Dv)` (`(B, ..., Tv, Dv)` for a
            query of rank 4 or more).
        key: optional, `(B, Tv, Dk)` or `(B, H, W, Dk)`; defaults to `value`.
        query_mask: optional bool `(B, Tq)` (`(B,)` for a single step);
            False zeroes the output and the weights of that query. Taken
            from the Keras mask of `query` when not given.
        value_mask: optional bool `(B, Tv)` or `(B, H, W)`; False hides
            that position from every query. Taken from the Keras mask of
            `value` when not given.
        return_attention_scores: also return the attention weights.
        training: whether dropout is active.
        precomputed_keys: optional result of `precompute_keys(key)`, used
            instead of recomputing it from `key`.
        mask: optional list `[query_mask, value_mask]` (keras' form; a
            third, key mask, entry is ignored as keras does).
        use_causal_mask: query `i` sees the keys `0..i` only.

    Returns:
        output `(B, [Tq,] Dv)` and, with `return_attention_scores=True`,
        the weights `(B, [Tq,] Tv)` or `(B, [Tq,] H, W)`, in the compute
        dtype. A query that sees no key gets output 0 and weights 0.

    Example:

    A cosine-similarity attention needs only its score:

    >>> import numpy as np
    >>> from keras import ops
    >>> from keras_attention.layers.attention.base_attention import BaseAttention
    >>> class CosineAttention(BaseAttention):
    ...     def _compute_scores(self, query, key):
    ...         query, key = ops.normalize(query), ops.normalize(key)
    ...         return ops.matmul(query, ops.swapaxes(key, 1, 2))  # (B, Tq, S)
    >>> query = np.array([[1.0, 0.0]], "float32")  # one step, (B, Dq)
    >>> memory = np.array([[[2.0, 0.0], [0.0, 1.0], [-1.0, 0.0]]], "float32")
    >>> output, weights = CosineAttention()(query, memory, return_attention_scores=True)
    >>> np.asarray(weights, "float64").round(2).tolist()  # softmax([1, 0, -1])
    [[0.67, 0.24, 0.09]]
    """

    def __init__(self, dropout=0.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        check_rate("dropout", dropout)
        self.dropout = dropout
        check_seed(seed)
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed) if dropout > 0 else None
        self.supports_masking = True

    def build(self, query_shape=None, value_shape=None, key_shape=None, **kwargs):
        # `**kwargs` takes keras' `build(input_shape=[...])`; keras matches
        # named build arguments to call arguments, so it cannot be one.
        query_shape, value_shape, key_shape = self._unpack_shapes(
            query_shape, value_shape, key_shape, kwargs
        )
        self._check_shapes(query_shape, value_shape, key_shape)

    def get_build_config(self):
        shapes = self._build_shapes_dict
        if shapes is not None and set(shapes) == {"kwargs"}:
            # Built with `build(input_shape=...)`: rebuild from the same list.
            return {"input_shape": shapes["kwargs"].get("input_shape")}
        return super().get_build_config()

    # ----------------------------------------------------------------- steps

    def _project_keys(self, key):
        """The key-only part of the score; identity for dot-product scores."""
        return key

    def _compute_scores(self, query, key):
        """Alignment scores `(B, Tq, S)`; every subclass defines its own.

        Args:
            query: `(B, Tq, Dq)`.
            key: `(B, S, K)`, the output of `_project_keys`.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement `_compute_scores`.")

    def _calculate_scores(self, query, key):
        """keras' name for the score step: `_compute_scores` on projected keys.

        Args:
            query: `(B, Tq, Dq)`.
            key: `(B, Tv, Dk)`.

        Returns:
            `(B, Tq, Tv)`.
        """
        return self._compute_scores(query, self._project_keys(key))

    def _calculate_score_mask(self, scores, v_mask, use_causal_mask):
        """keras' score mask: the value mask `(B, Tv)`, and with
        `use_causal_mask` a lower-triangular `(1, Tq, Tv)` merged with it."""
        if not use_causal_mask:
            return v_mask
        shape = ops.shape(scores)
        causal = causal_mask(shape[-2], shape[-1])[None]  # (1, Tq, Tv)
        if v_mask is None:
            return causal
        return ops.logical_and(boolean_mask(v_mask, "v_mask")[:, None, :], causal)  # (B, Tq, Tv)

    def _scores_mask(self, query_mask, value_mask):
        """Bool mask broadcastable to the scores `(B, Tq, S)`, or None.

        Args:
            query_mask: None or `(B, Tq)`.
            value_mask: None or `(B, S)`.
        """
        return query_key_mask(query_mask, value_mask)  # (B, Tq | 1, S | 1)

    def _apply_scores(self, scores, value, mask=None, training=None):
        """Masked softmax in float32, dropout, weighted sum.

        Args:
            scores: `(B, Tq, S)`.
            value: `(B, S, Dv)`.
            mask: None or bool, broadcastable to `scores`.
            training: whether dropout is active.

        Returns:
            output `(B, Tq, Dv)` and weights `(B, Tq, S)`, both in the dtype
            of `value`.
        """
        weights = ops.cast(masked_softmax(scores, mask), value.dtype)
        dropped = weights
        if training and self.dropout > 0:
            dropped = keras.random.dropout(weights, self.dropout, seed=self.seed_generator)
        return ops.matmul(dropped, value), weights  # (B, Tq, Dv)

    # ------------------------------------------------------------ public API

    def precompute_keys(self, key):
        """Runs the key-only part of the score once, for repeated calls.

        A decoder that attends over the same memory at every step can call
        this once and pass the result as `precomputed_keys=` to each call.
        The layer must be built (called once, or `build()` called).

        Args:
            key: `(B, Tv, Dk)` or `(B, H, W, Dk)`.

        Returns:
            A tensor with the positions of `key`, `(B, Tv, K)` or
            `(B, H, W, K)`, in the compute dtype.

        Example:

        >>> import numpy as np
        >>> from keras_attention.layers.attention.additive_attention import AdditiveAttention
        >>> layer = AdditiveAttention(units=8)
        >>> memory = np.random.rand(2, 3, 4).astype("float32")
        >>> layer.build((2, 5), memory.shape)
        >>> keys = layer.precompute_keys(memory)  # once per memory
        >>> tuple(keys.shape)
        (2, 3, 8)
        >>> step = layer(np.ones((2, 5)), memory, precomputed_keys=keys)  # every step
        >>> bool(np.allclose(step, layer(np.ones((2, 5)), memory), atol=1e-6))
        True
        """
        if not self.built:
            raise ValueError(
                "`precompute_keys()` needs a built layer: call the layer once or call "
                f"`build(query_shape, value_shape, key_shape)` first. Received: key.shape="
                f"{tuple(ops.shape(key))} for unbuilt layer {self.name!r}"
            )
        key = ops.convert_to_tensor(key, dtype=self.compute_dtype)
        _check_memory_rank("key", key.shape)
        return self._project_keys(key)

    def call(
        self,
        query,
        value=None,
        key=None,
        query_mask=None,
        value_mask=None,
        return_attention_scores=False,
        training=None,
        precomputed_keys=None,
        mask=None,
        use_causal_mask=False,
    ):
        """Score, mask, normalize and weight the values; see the class docstring."""
        query, value, key, query_mask, value_mask = self._unpack_call(
            query, value, key, query_mask, value_mask, mask
        )
        self._check_call(query, value, key, query_mask, value_mask, precomputed_keys)
        if len(query.shape) > 3:
            return self._call_batched(
                query,
                value,
                key,
                query_mask,
                value_mask,
                precomputed_keys,
                return_attention_scores=return_attention_scores,
                training=training,
                use_causal_mask=use_causal_mask,
            )
        single_step = len(query.shape) == 2
        if single_step:
            query = ops.expand_dims(query, 1)  # (B, 1, Dq)
            if query_mask is not None:
                query_mask = ops.expand_dims(query_mask, 1)  # (B, 1)
        if precomputed_keys is None:
            precomputed_keys = self._project_keys(value if key is None else key)
        keys = _flatten_positions(precomputed_keys)  # (B, S, K)
        values = _flatten_positions(value)  # (B, S, Dv)
        if value_mask is not None:
            value_mask = boolean_mask(value_mask, "value_mask")
            value_mask = _flatten_positions(value_mask, has_channels=False)  # (B, S)
            # Weight 0 times NaN is NaN: hidden values must not reach the output.
            values = ops.where(value_mask[:, :, None], values, ops.zeros_like(values))
        if query_mask is not None:
            query_mask = boolean_mask(query_mask, "query_mask")

        scores = self._compute_scores(query, keys)  # (B, Tq, S)
        mask = self._scores_mask(query_mask, value_mask)
        if use_causal_mask:
            shape = ops.shape(scores)
            mask = merge_masks(mask, causal_mask(shape[1], shape[2])[None])  # (B | 1, Tq, S)
        output, weights = self._apply_scores(scores, values, mask, training)

        if single_step:
            output = ops.squeeze(output, 1)  # (B, Dv)
            weights = ops.squeeze(weights, 1)  # (B, S)
        if not return_attention_scores:
            return output
        if len(value.shape) == 4:
            value_dims = ops.shape(value)
            # (B, [Tq,] S) -> (B, [Tq,] H, W)
            weights = ops.reshape(weights, tuple(ops.shape(weights)[:-1]) + tuple(value_dims[1:3]))
        return output, weights

    def _call_batched(self, query, value, key, query_mask, value_mask, precomputed_keys, **options):
        """A query with batch axes `(B, ..., Tq, Dq)`: attend per batch entry.

        `options` are the other arguments of `call`, passed on as they are.
        """
        batch_axes = tuple(ops.shape(query)[:-2])

        def merge(tensor, kept):  # (B, ..., *kept axes) -> (B', *kept axes)
            if tensor is None:
                return None
            return ops.reshape(tensor, (-1,) + tuple(ops.shape(tensor)[-kept:]))

        results = self.call(
            merge(query, 2),
            merge(value, 2),
            key=merge(key, 2),
            query_mask=merge(query_mask, 1),
            value_mask=merge(value_mask, 1),
            precomputed_keys=merge(precomputed_keys, 2),
            **options,
        )  # (B', Tq, Dv) [, (B', Tq, Tv)]
        return_attention_scores = options["return_attention_scores"]
        results = results if return_attention_scores else (results,)
        split = tuple(
            ops.reshape(tensor, batch_axes + tuple(ops.shape(tensor)[1:])) for tensor in results
        )  # (B, ..., Tq, Dv) [, (B, ..., Tq, Tv)]
        return split if return_attention_scores else split[0]

    def compute_mask(self, inputs, mask=None):
        # `mask` is the Keras mask of the query (or keras' list [query_mask,
        # value_mask]): padded queries stay padded.
        if isinstance(inputs, (list, tuple)):
            self._unpack_call(inputs, None, None, None, None, mask)
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        if mask is None:
            return None
        if isinstance(inputs, (list, tuple)):
            return ops.convert_to_tensor(mask)
        return mask if len(inputs.shape) >= 3 else None

    def compute_output_shape(
        self, query_shape=None, value_shape=None, key_shape=None, input_shape=None
    ):
        query_shape, value_shape, key_shape = self._unpack_shapes(
            query_shape, value_shape, key_shape, {"input_shape": input_shape}
        )
        self._check_shapes(query_shape, value_shape, key_shape)
        return tuple(query_shape[:-1]) + (value_shape[-1],)

    def compute_output_spec(self, *args, **kwargs):
        arguments = call_arguments(BaseAttention.call, (self, *args), kwargs)
        query, value, key, query_mask, value_mask = self._unpack_call(
            *(arguments[name] for name in ("query", "value", "key", "query_mask", "value_mask")),
            arguments["mask"],
        )
        self._check_call(query, value, key, query_mask, value_mask, arguments["precomputed_keys"])
        key_shape = None if key is None else key.shape
        output_shape = self.compute_output_shape(query.shape, value.shape, key_shape)
        output = keras.KerasTensor(output_shape, dtype=self.compute_dtype)
        if not arguments["return_attention_scores"]:
            return output
        if len(query.shape) > 3:
            weights_shape = tuple(query.shape[:-1]) + (value.shape[-2],)  # (B, ..., Tq, Tv)
        else:
            weights_shape = tuple(query.shape[:-1]) + tuple(value.shape[1:-1])
        return output, keras.KerasTensor(weights_shape, dtype=self.compute_dtype)

    # ------------------------------------------------- keras' list inputs

    def _unpack_call(self, query, value, key, query_mask, value_mask, mask):
        """(query, value, key, query_mask, value_mask) from either calling style."""
        name = type(self).__name__
        if isinstance(query, (list, tuple)):
            if value is not None or key is not None:
                raise ValueError(
                    f"{name} takes its inputs either as a list [query, value(, key)] or as "
                    "separate arguments, not both. Received: a list and "
                    f"value={'set' if value is not None else None}, "
                    f"key={'set' if key is not None else None}"
                )
            _check_list_length(name, "inputs", query)
            query, value, key = query[0], query[1], (query[2] if len(query) == 3 else None)
            if isinstance(query_mask, (list, tuple)):
                # keras fills `query_mask` with the Keras masks of the list's tensors.
                if mask is None and any(item is not None for item in query_mask):
                    mask = list(query_mask)
                query_mask = None
        elif value is None:
            raise ValueError(
                f"{name} layer must be called on a list of inputs, namely [query, value] "
                "or [query, value, key], or with `query` and `value` as separate "
                f"arguments. Received: inputs={query!r}, value=None"
            )
        if mask is not None:
            if not isinstance(mask, (list, tuple)):
                raise ValueError(
                    f"{name} layer mask must be a list, namely [query_mask, value_mask]. "
                    f"Received: mask={mask!r}"
                )
            _check_list_length(name, "mask", mask)
            # keras' list masks come filled from the inputs' Keras masks;
            # an explicit `query_mask` / `value_mask` wins.
            query_mask = mask[0] if query_mask is None else query_mask
            value_mask = mask[1] if value_mask is None else value_mask
        return query, value, key, query_mask, value_mask

    def _unpack_shapes(self, query_shape, value_shape, key_shape, extra):
        """(query_shape, value_shape, key_shape) from either building style."""
        name = type(self).__name__
        extra = dict(extra)
        input_shape = extra.pop("input_shape", None)
        if extra:
            raise TypeError(f"{name}.build() got unexpected keyword arguments: {sorted(extra)}")
        if input_shape is not None:
            if query_shape is not None:
                raise ValueError(
                    "`input_shape` (keras' list of shapes) and `query_shape` cannot both be "
                    f"given. Received: query_shape={query_shape}, input_shape={input_shape}"
                )
            query_shape = input_shape
        if _is_shape_list(query_shape):
            if value_shape is not None or key_shape is not None:
                raise ValueError(
                    f"{name} takes its inputs either as a list [query, value(, key)] or as "
                    "separate arguments, not both. Received: a list of shapes and "
                    f"value_shape={value_shape}, key_shape={key_shape}"
                )
            _check_list_length(name, "inputs", query_shape)
            shapes = list(query_shape)
            query_shape, value_shape = shapes[0], shapes[1]
            key_shape = shapes[2] if len(shapes) == 3 else None
        if query_shape is None or value_shape is None:
            raise ValueError(
                f"{name} layer must be called on a list of inputs, namely [query, value] "
                "or [query, value, key], or built with `query_shape` and `value_shape`. "
                f"Received: query_shape={query_shape}, value_shape={value_shape}"
            )
        return query_shape, value_shape, key_shape

    def get_config(self):
        return {**super().get_config(), "dropout": self.dropout, "seed": self.seed}

    # ------------------------------------------------------------ validation

    def _check_shapes(self, query_shape, value_shape, key_shape=None):
        """Checks ranks and that key and value share positions and batch."""
        query_shape = tuple(query_shape)
        value_shape = tuple(value_shape)
        if len(query_shape) < 2:
            raise ValueError(
                "`query` must be one step (batch, query_dim) or a sequence "
                f"(batch, ..., query_length, query_dim). Received: query_shape={query_shape}"
            )
        if len(query_shape) > 3:
            # keras' layout: the axes before (length, features) are batch axes.
            for other, shape in (("value", value_shape), ("key", key_shape)):
                if shape is None:
                    continue
                shape = tuple(shape)
                if len(shape) != len(query_shape) or not _compatible(shape[:-2], query_shape[:-2]):
                    raise ValueError(
                        f"A query of rank {len(query_shape)} has batch axes before its last "
                        f"two, so `{other}` must have its rank and batch axes. Received: "
                        f"query_shape={query_shape}, {other}_shape={shape}"
                    )
            return
        _check_memory_rank("value", value_shape)
        if key_shape is not None:
            key_shape = tuple(key_shape)
            _check_memory_rank("key", key_shape)
            if len(key_shape) != len(value_shape) or not _compatible(
                key_shape[:-1], value_shape[:-1]
            ):
                raise ValueError(
                    "`key` must have the batch and positions of `value` (all axes but the last). "
                    f"Received: key_shape={key_shape}, value_shape={value_shape}"
                )
        if not _compatible(query_shape[:1], value_shape[:1]):
            raise ValueError(
                "`query` and `value` must have the same batch size. "
                f"Received: query_shape={query_shape}, value_shape={value_shape}"
            )

    def _check_call(self, query, value, key, query_mask, value_mask, precomputed_keys):
        self._check_shapes(query.shape, value.shape, None if key is None else key.shape)
        value_shape = tuple(value.shape)
        for name, mask, expected in (
            ("query_mask", query_mask, tuple(query.shape[:-1])),
            ("value_mask", value_mask, value_shape[:-1]),
        ):
            if mask is None:
                continue
            mask_shape = tuple(mask.shape)
            if len(mask_shape) != len(expected) or not _compatible(mask_shape, expected):
                raise ValueError(
                    f"`{name}` must have the shape of `{name[:-5]}` without its last axis, "
                    f"{expected}. Received: {name}.shape={mask_shape}"
                )
        if precomputed_keys is not None:
            keys_shape = tuple(precomputed_keys.shape)
            expected_size = self._projected_key_size()
            if (
                len(keys_shape) != len(value_shape)
                or not _compatible(keys_shape[:-1], value_shape[:-1])
                or not _compatible(keys_shape[-1:], (expected_size,))
            ):
                raise ValueError(
                    "`precomputed_keys` must come from `precompute_keys(key)`: the positions "
                    f"of `value` {value_shape[:-1]} and last axis {expected_size}. "
                    f"Received: precomputed_keys.shape={keys_shape}"
                )

    def _projected_key_size(self):
        """Size of the last axis of `_project_keys`' output (None: unknown)."""
        return None


def project_queries(dense, query):
    """`dense(query)` for a bias-free `Dense` on a (B, Tq, E) query, as an einsum.

    Keras' Dense multiplies rank-3 inputs through a tensordot whose gradient
    XLA cannot compile inside a loop once the batch size is dynamic (an
    `AttentionDecoder` trained with a partial last batch); the einsum's can.
    """
    kernel = ops.cast(dense.kernel, query.dtype)  # (E, units)
    return ops.einsum("bqe,eu->bqu", query, kernel)  # (B, Tq, units)


def clone_initializer(initializer):
    """A fresh copy of a Keras initializer, so two weights never share one draw.

    Args:
        initializer: a `keras.initializers.Initializer`.

    Returns:
        A new initializer of the same class and configuration.

    Example:

    >>> import keras
    >>> from keras_attention.layers.attention.base_attention import clone_initializer
    >>> initializer = keras.initializers.GlorotUniform()
    >>> copy = clone_initializer(initializer)
    >>> copy is initializer, copy.get_config() == initializer.get_config()
    (False, True)
    """
    return initializer.__class__.from_config(initializer.get_config())


def _is_shape_list(shape):
    """Whether `shape` is keras' list of input shapes rather than one shape."""
    return (
        isinstance(shape, (list, tuple))
        and any(isinstance(item, (list, tuple)) for item in shape)
        and all(item is None or isinstance(item, (list, tuple)) for item in shape)
    )


def _check_list_length(name, what, items):
    if not 2 <= len(items) <= 3:
        namely = "[query, value] or [query, value, key]"
        if what == "mask":
            namely = "[query_mask, value_mask] or [query_mask, value_mask, key_mask]"
        raise ValueError(
            f"{name} layer accepts {what} list of length 2 or 3, namely {namely}. "
            f"Received length: {len(items)}."
        )


def _check_memory_rank(name, shape):
    shape = tuple(shape)
    if len(shape) not in (3, 4):
        raise ValueError(
            f"`{name}` must be a sequence (batch, length, {name}_dim) or a feature map "
            f"(batch, height, width, {name}_dim). Received: {name}_shape={shape}"
        )


def _compatible(shape_a, shape_b):
    return all(a is None or b is None or a == b for a, b in zip(shape_a, shape_b))


def _flatten_positions(tensor, has_channels=True):
    """Merges the height and width of a feature map into one axis of positions."""
    if len(tensor.shape) == (4 if has_channels else 3):
        batch = ops.shape(tensor)[0]
        if has_channels:
            return ops.reshape(tensor, (batch, -1, tensor.shape[-1]))  # (B, H * W, D)
        return ops.reshape(tensor, (batch, -1))  # (B, H * W)
    return tensor

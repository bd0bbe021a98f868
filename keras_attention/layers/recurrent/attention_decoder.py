"""An RNN decoder that attends to an encoder memory at every step (Bahdanau or Luong)."""

import functools

import keras
from keras import ops

from keras_attention.layers.attention.base_attention import BaseAttention
from keras_attention.layers.attention.call_arguments import call_arguments
from keras_attention.ops.masks import boolean_mask
from keras_attention.validation import check_bool
from keras_attention.validation import check_choice
from keras_attention.validation import check_known_last_axes
from keras_attention.validation import check_positive_int
from keras_attention.validation import keep_checked_arguments
from keras_attention.validation import kept_arguments

ATTENTION_STYLES = ("bahdanau", "luong")
# What the scores learn from the past alignments: their sum ("coverage", Tu et al. 2016)
# or the previous alignment through a convolution ("location", Chorowski et al. 2015).
LOCATION_FEATURES = (None, "coverage", "location")
# The constructor arguments besides the sublayers, kept as they are, with their checks.
_CHECKED_ARGUMENTS = {
    "attention_style": functools.partial(check_choice, choices=ATTENTION_STYLES),
    "input_feeding": check_bool,
    "context_gate": check_bool,
    "attention_output_dim": functools.partial(check_positive_int, allow_none=True),
    "location_features": functools.partial(check_choice, choices=LOCATION_FEATURES),
    "location_filters": check_positive_int,
    "location_kernel_size": check_positive_int,
}
_CELL_TYPES = (keras.layers.GRUCell, keras.layers.LSTMCell)


@keras.saving.register_keras_serializable(package="keras_attention")
class AttentionDecoder(keras.layers.Layer):
    """A GRU or LSTM decoder that computes a new context vector at every step.

    At step `t` the decoder state `s` attends to the encoder memory `h_1..h_S`
    (a sequence, or the `H * W` positions of an image feature map); the
    alignment weights `a_t` and the context `c_t = sum_i a_{t,i} h_i` feed the
    recurrence. `y_t` is the embedded target token of step `t` (teacher
    forcing: the previous ground-truth token). For an LSTM the state that
    attends is the hidden state `h`, not the memory cell `c`.

    - `attention_style="bahdanau"` ([Bahdanau et al., 2015](
      https://arxiv.org/abs/1409.0473)): the scores come from the previous
      state: `c_t = attend(s_{t-1}, memory)`, `s_t = cell([y_t; c_t], s_{t-1})`
      and the output is `o_t = [s_t; c_t]`, of size `cell.units + D` (`D`
      the memory's features).
    - `attention_style="luong"` ([Luong et al., 2015](
      https://arxiv.org/abs/1508.04025)): the new state attends:
      `s_t = cell(y_t, s_{t-1})`, `c_t = attend(s_t, memory)` and the output
      is the attentional vector `h~_t = tanh(W_c [c_t; s_t])` (`W_c` without
      bias, as in the paper), of size `attention_output_dim`. With
      `input_feeding=True` the cell reads `[y_t; h~_{t-1}]` (section 3.3), so
      that it knows its past alignment decisions.
    - `location_features` let the scores see where the decoder attended
      before, so that it neither attends to a source piece again nor skips
      one in a long output. The decoder state carries an alignment `(B, S)`
      and its features are added to the attention's projected keys (inside
      the additive score's `tanh`, `v^T tanh(W_q s + W_k h_i + U f_i + b)`):
      `"coverage"` ([Tu et al., 2016](https://arxiv.org/abs/1601.04811);
      the form of [See et al., 2017](https://arxiv.org/abs/1704.04368))
      carries the sum of the past alignments `cov_i = sum_{k<t} a_{k,i}`
      and `f_i = cov_i`; `"location"` ([Chorowski et al., 2015](
      https://arxiv.org/abs/1506.07503)) carries the previous alignment and
      `f = conv(a_{t-1})`, `location_filters` filters of width
      `location_kernel_size` over the source positions. A sequence memory
      only.
    - `context_gate=True` scales the context by a learned scalar,
      `c_t <- beta_t c_t` with `beta_t = sigmoid(f_beta(s_{t-1}))` ([Xu et al.,
      2015](https://arxiv.org/abs/1502.03044), section 4.2.1), which lets a
      captioner weigh the image against its language model.

    The decoder state is a list of `(B, size)` tensors, batch first, that a
    decoding loop treats as opaque (to tile or gather it for beam search):
    the cell's states (`[h]` for a GRU, `[h, c]` for an LSTM) followed, with
    `input_feeding=True`, by the previous attentional vector `h~_{t-1}`,
    and with `location_features` by the alignment state `(B, S)`.
    `initial_decoder_state()` builds it, `step()` advances it and
    `call(..., return_state=True)` returns it.

    The cell and the attention compute under this layer's dtype policy (an
    unbuilt cell or attention is switched to it); the softmax runs in float32.

    Args:
        cell: a `keras.layers.GRUCell` or `keras.layers.LSTMCell`, or its
            serialized config.
        attention: an `AdditiveAttention` or `DotProductAttention` (any
            `BaseAttention`), or its serialized config. Its query is the
            cell's hidden state, of size `cell.units`.
        attention_style: `"bahdanau"` or `"luong"`.
        input_feeding: feed the previous attentional vector to the cell
            (`"luong"` only).
        context_gate: gate the context with `sigmoid(f_beta(s_{t-1}))`.
        attention_output_dim: size of Luong's attentional vector `h~_t`;
            None means `cell.units`. `"luong"` only: the Bahdanau output is
            `[s_t; c_t]`.
        location_features: None, `"coverage"` or `"location"`: what the
            scores learn from the past alignments (see above).
        location_filters: convolution filters of `"location"`.
        location_kernel_size: convolution width of `"location"`, in source
            positions.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        inputs: `(B, T, E)` embedded target tokens, decoded in one call with
            teacher forcing. Their Keras mask (target padding) does not stop
            the recurrence but is passed on to the outputs and alignments.
        memory: `(B, S, D)` encoder outputs or `(B, H, W, D)` image features.
        memory_mask: optional bool `(B, S)` or `(B, H, W)`, True for real
            positions. Defaults to the Keras mask of `memory`.
        initial_state: optional list of the cell's states, e.g. an encoder's
            final states (`[h]` for a GRU, `[h, c]` for an LSTM), or a full
            decoder state as `return_state=True` returns it; zeros by default.
        return_state: also return the final decoder state.
        training: whether dropout (of the cell and the attention) is active.

    Returns:
        `(outputs, alignments)`: outputs `(B, T, output_dim)` (`cell.units +
        D` for `"bahdanau"`, `attention_output_dim` for `"luong"`) and the
        attention weights `(B, T, S)` or `(B, T, H, W)`; with
        `return_state=True`, `(outputs, alignments, states)` where `states`
        is the final decoder state list.

    Example:

    >>> import numpy as np
    >>> import keras
    >>> from keras_attention.layers.attention.additive_attention import AdditiveAttention
    >>> from keras_attention.layers.recurrent.attention_decoder import AttentionDecoder
    >>> decoder = AttentionDecoder(keras.layers.GRUCell(16), AdditiveAttention(units=8))
    >>> targets = np.random.rand(2, 5, 4).astype("float32")  # embedded tokens
    >>> memory = np.random.rand(2, 7, 12).astype("float32")  # encoder outputs
    >>> outputs, alignments = decoder(targets, memory)
    >>> tuple(outputs.shape), tuple(alignments.shape)  # o_t = [s_t; c_t]: 16 + 12
    ((2, 5, 28), (2, 5, 7))

    Decoding one step at a time gives the same outputs:

    >>> keys = decoder.precompute_memory(memory)  # once per memory
    >>> states = decoder.initial_decoder_state(2)
    >>> output, states, alignment = decoder.step(targets[:, 0], states, memory,
    ...                                          precomputed_keys=keys)
    >>> bool(np.allclose(output, outputs[:, 0], atol=1e-5))
    True
    """

    def __init__(
        self,
        cell,
        attention,
        attention_style="bahdanau",
        input_feeding=False,
        context_gate=False,
        attention_output_dim=None,
        location_features=None,
        location_filters=16,
        location_kernel_size=7,
        **kwargs,
    ):
        """Check the arguments and keep them; the sublayers are made in `build`."""
        super().__init__(**kwargs)
        cell = _deserialize_if_config(cell)
        if not isinstance(cell, _CELL_TYPES):
            raise ValueError(
                "`cell` must be a keras.layers.GRUCell or keras.layers.LSTMCell (or its "
                f"config). Received: cell={cell!r} of type {type(cell).__name__}"
            )
        attention = _deserialize_if_config(attention)
        if not isinstance(attention, BaseAttention):
            raise ValueError(
                "`attention` must be an AdditiveAttention or DotProductAttention layer of "
                f"keras_attention (or its config). Received: attention={attention!r} of type "
                f"{type(attention).__name__}"
            )
        keep_checked_arguments(self, locals(), _CHECKED_ARGUMENTS)
        if attention_style == "bahdanau" and (input_feeding or attention_output_dim is not None):
            raise ValueError(
                '`input_feeding` and `attention_output_dim` belong to attention_style="luong" '
                "(the Bahdanau output is [s_t; c_t]). Received: "
                f"input_feeding={input_feeding}, attention_output_dim={attention_output_dim!r} "
                'with attention_style="bahdanau"'
            )
        # The sub-layers run under the decoder's policy (e.g. mixed precision).
        for layer in (cell, attention):
            if not layer.built:
                layer.dtype_policy = self.dtype_policy
        self.cell = cell
        self.attention = attention
        self.supports_masking = True

    # ------------------------------------------------------------------ sizes

    def _num_cell_states(self):
        return 2 if isinstance(self.cell, keras.layers.LSTMCell) else 1

    def _attentional_dim(self):
        return self.attention_output_dim or self.cell.units

    def _state_sizes(self, positions=None):
        """Sizes of the decoder state's tensors; `positions`: the memory's, or None."""
        sizes = [self.cell.units] * self._num_cell_states()
        if self.input_feeding:
            sizes.append(self._attentional_dim())
        if self.location_features:
            sizes.append(positions)  # the alignment state, one entry per memory position
        return sizes

    def _output_dim(self, memory_dim):
        if self.attention_style == "bahdanau":
            return None if memory_dim is None else self.cell.units + memory_dim
        return self._attentional_dim()

    # ------------------------------------------------------------------ build

    def build(self, inputs_shape, memory_shape, memory_mask_shape=None):
        """Build the recurrent cell, the attention and the output projection."""
        _check_shapes(inputs_shape, memory_shape, memory_mask_shape)
        inputs_dim, memory_dim = inputs_shape[-1], memory_shape[-1]
        check_known_last_axes(inputs=inputs_shape, memory=memory_shape)
        self._inputs_dim = inputs_dim
        self._memory_dim = memory_dim
        units = self.cell.units
        if self.location_features and len(memory_shape) != 3:
            raise ValueError(
                "`location_features` need a sequence memory (batch, length, features): their "
                f"alignment state is a sequence. Received: memory.shape={tuple(memory_shape)} "
                f"with location_features={self.location_features!r}"
            )
        if not self.attention.built:
            self.attention.build((memory_shape[0], units), tuple(memory_shape))

        cell_inputs_dim = inputs_dim
        if self.attention_style == "bahdanau":
            cell_inputs_dim += memory_dim
        elif self.input_feeding:
            cell_inputs_dim += self._attentional_dim()
        if not self.cell.built:
            self.cell.build((inputs_shape[0], cell_inputs_dim))
        elif self.cell.kernel.shape[0] != cell_inputs_dim:
            raise ValueError(
                f"The prebuilt `cell` must read {cell_inputs_dim} features (`inputs` features "
                "plus what the attention style feeds it). Received: cell built for "
                f"{self.cell.kernel.shape[0]} features"
            )

        if self.attention_style == "luong":
            self._attentional_dense = keras.layers.Dense(
                self._attentional_dim(),
                activation="tanh",
                use_bias=False,
                dtype=self.dtype_policy,
                name="attentional_dense",
            )
            self._attentional_dense.build((None, memory_dim + units))
        if self.context_gate:
            self._context_gate_dense = keras.layers.Dense(
                1, activation="sigmoid", dtype=self.dtype_policy, name="context_gate_dense"
            )
            self._context_gate_dense.build((None, units))
        if self.location_features:
            self._build_location_layers(memory_dim)
        self.built = True

    def _build_location_layers(self, memory_dim):
        """The layers from the alignment state to a term of the projected keys."""
        key_size = self.attention._projected_key_size() or memory_dim
        if self.location_features == "location":
            self._location_conv = keras.layers.Conv1D(
                self.location_filters,
                self.location_kernel_size,
                padding="same",
                use_bias=False,
                dtype=self.dtype_policy,
                name="location_conv",
            )
            self._location_conv.build((None, None, 1))
        features = self.location_filters if self.location_features == "location" else 1
        # No bias: the keys have theirs; zero features (no past attention) add nothing.
        self._location_dense = keras.layers.Dense(
            key_size, use_bias=False, dtype=self.dtype_policy, name="location_dense"
        )
        self._location_dense.build((None, None, features))

    # ----------------------------------------------------------- decoding API

    def initial_decoder_state(self, batch_size_or_states, memory=None):
        """The decoder state that starts decoding.

        Args:
            batch_size_or_states: an int (or scalar tensor) batch size for
                zero cell states; or the cell's states, a list (`[h]` for a
                GRU, `[h, c]` for an LSTM; a single `(B, units)` tensor for a
                GRU), e.g. an encoder's final states; or a full decoder state.
            memory: the `(B, S, D)` memory the decoder will attend to; needed
                with `location_features` only, for the size of the alignment
                state.

        Returns:
            The decoder state: a list of `(B, size)` tensors in the compute
            dtype, the cell's states then, with `input_feeding=True`, the
            attentional vector `h~_0`, and with `location_features` the
            alignment state `(B, S)` (zeros unless given).

        Example:

        >>> import keras
        >>> from keras_attention.layers.attention.dot_product_attention import DotProductAttention
        >>> from keras_attention.layers.recurrent.attention_decoder import AttentionDecoder
        >>> decoder = AttentionDecoder(keras.layers.LSTMCell(8), DotProductAttention(),
        ...                            attention_style="luong", input_feeding=True,
        ...                            attention_output_dim=6)
        >>> [tuple(state.shape) for state in decoder.initial_decoder_state(3)]  # h, c, h~
        [(3, 8), (3, 8), (3, 6)]
        """
        value = batch_size_or_states
        if isinstance(value, (list, tuple)) or len(getattr(value, "shape", ())) > 0:
            return self._complete_state(value, "batch_size_or_states", memory)
        batch_size = value
        states = self.cell.get_initial_state(batch_size)
        states = [ops.cast(state, self.compute_dtype) for state in states]
        return self._complete_state(states, "batch_size_or_states", memory)

    def precompute_memory(self, memory):
        """What `step()` needs from the memory, computed once per memory.

        Args:
            memory: `(B, S, D)` or `(B, H, W, D)`.

        Returns:
            The attention's `precompute_keys(memory)`, to pass to every
            `step()` as `precomputed_keys=`.

        Example:

        >>> import numpy as np
        >>> import keras
        >>> import keras_attention as ka
        >>> attention = ka.layers.AdditiveAttention(units=5)
        >>> decoder = ka.layers.AttentionDecoder(keras.layers.GRUCell(8), attention)
        >>> memory = np.random.rand(2, 3, 3, 4).astype("float32")  # a feature map
        >>> decoder.build((2, None, 6), memory.shape)
        >>> tuple(decoder.precompute_memory(memory).shape)
        (2, 3, 3, 5)
        """
        if not self.built:
            raise ValueError(
                "`precompute_memory()` needs a built decoder: call it once or call "
                "`build(inputs_shape, memory_shape)` first. Received: memory.shape="
                f"{tuple(ops.shape(memory))} for unbuilt layer {self.name!r}"
            )
        memory = ops.convert_to_tensor(memory, dtype=self.compute_dtype)
        self._check_call_shapes((None, None, self._inputs_dim), memory.shape)
        return self.attention.precompute_keys(memory)

    def step(
        self,
        inputs_t,
        states,
        memory,
        memory_mask=None,
        precomputed_keys=None,
        training=None,
    ):
        """One decoding step, for inference (greedy or beam search).

        Args:
            inputs_t: `(B, E)` embedded previous token.
            states: the decoder state, from `initial_decoder_state()` (given
                the memory with `location_features`) or the previous `step()`.
            memory: `(B, S, D)` or `(B, H, W, D)`.
            memory_mask: optional bool `(B, S)` or `(B, H, W)`.
            precomputed_keys: optional `precompute_memory(memory)`.
            training: whether dropout is active.

        Returns:
            `(output_t, new_states, alignment_t)`: the output `(B,
            output_dim)`, the next decoder state and the attention weights
            `(B, S)` or `(B, H, W)`.

        Example:

        >>> import numpy as np
        >>> import keras
        >>> from keras_attention.layers.attention.dot_product_attention import DotProductAttention
        >>> from keras_attention.layers.recurrent.attention_decoder import AttentionDecoder
        >>> decoder = AttentionDecoder(keras.layers.GRUCell(8),
        ...                            DotProductAttention(score_mode="general"),
        ...                            attention_style="luong", input_feeding=True)
        >>> memory = np.random.rand(2, 5, 4).astype("float32")
        >>> states = decoder.initial_decoder_state(2)
        >>> output, states, alignment = decoder.step(np.ones((2, 3)), states, memory)
        >>> tuple(output.shape), len(states), tuple(alignment.shape)
        ((2, 8), 2, (2, 5))
        """
        inputs_t = ops.convert_to_tensor(inputs_t, dtype=self.compute_dtype)
        memory = ops.convert_to_tensor(memory, dtype=self.compute_dtype)
        if len(inputs_t.shape) != 2:
            raise ValueError(
                "`inputs_t` must be one embedded token per example, (batch, features). "
                f"Received: inputs_t.shape={tuple(inputs_t.shape)}"
            )
        inputs_shape = (inputs_t.shape[0], None, inputs_t.shape[-1])
        mask_shape = None if memory_mask is None else memory_mask.shape
        if not self.built:
            self.build(inputs_shape, memory.shape, mask_shape)
        self._check_call_shapes(inputs_shape, memory.shape, mask_shape)
        if not isinstance(states, (list, tuple)) or len(states) != len(self._state_sizes()):
            raise ValueError(
                f"`states` must be the decoder state, a list of {len(self._state_sizes())} "
                "tensors from `initial_decoder_state()` or `step()`. "
                f"Received: states={_describe(states)}"
            )
        if memory_mask is not None:
            memory_mask = boolean_mask(memory_mask, "memory_mask")
        states = [ops.cast(state, self.compute_dtype) for state in states]
        self._set_dropout_masks(ops.shape(inputs_t)[0], states, training)
        output, states, alignment = self._decode_step(
            inputs_t, states, memory, memory_mask, precomputed_keys, training
        )
        self._reset_dropout_masks()
        return output, states, alignment

    # ------------------------------------------------------------------- call

    def call(
        self,
        inputs,
        memory,
        memory_mask=None,
        initial_state=None,
        return_state=False,
        training=None,
    ):
        """Decode `inputs` step by step, attending to `memory`; see the class docstring."""
        mask_shape = None if memory_mask is None else memory_mask.shape
        self._check_call_shapes(inputs.shape, memory.shape, mask_shape)
        inputs = ops.cast(inputs, self.compute_dtype)
        memory = ops.cast(memory, self.compute_dtype)
        batch = ops.shape(inputs)[0]
        steps = inputs.shape[1] if inputs.shape[1] is not None else ops.shape(inputs)[1]
        if initial_state is None:
            states = self.initial_decoder_state(batch, memory)
        else:
            states = self._complete_state(initial_state, "initial_state", memory)

        # The loop attends over a sequence; feature maps are reshaped back at the end.
        image_memory = len(memory.shape) == 4
        memory_sequence = memory
        if image_memory:
            memory_sequence = ops.reshape(memory, (batch, -1, memory.shape[-1]))  # (B, H * W, D)
        if memory_mask is not None:
            memory_mask = boolean_mask(memory_mask, "memory_mask")
            memory_mask = ops.reshape(memory_mask, (batch, -1))  # (B, S)
        positions = memory_sequence.shape[1]
        if positions is None:
            positions = ops.shape(memory_sequence)[1]
        keys = self.attention.precompute_keys(memory_sequence)  # once, not per step

        time_major = ops.transpose(inputs, (1, 0, 2))  # (T, B, E)
        self._set_dropout_masks(batch, states, training)
        loop = self._while_loop if keras.backend.backend() == "tensorflow" else self._scan
        outputs, alignments, states = loop(
            time_major,
            steps,
            batch,
            positions,
            states,
            memory_sequence,
            memory_mask,
            keys,
            training,
        )  # (T, B, O), (T, B, S)
        self._reset_dropout_masks()

        outputs = ops.transpose(outputs, (1, 0, 2))  # (B, T, O)
        alignments = ops.transpose(alignments, (1, 0, 2))  # (B, T, S)
        if image_memory:
            height, width = ops.shape(memory)[1], ops.shape(memory)[2]
            alignments = ops.reshape(alignments, (batch, steps, height, width))  # (B, T, H, W)
        if return_state:
            return outputs, alignments, list(states)
        return outputs, alignments

    def _while_loop(
        self, time_major, steps, batch, positions, states, memory, memory_mask, keys, training
    ):
        """The steps as one `while_loop` writing rows of preallocated outputs (TensorFlow)."""
        dtype = self.compute_dtype
        outputs = ops.zeros((steps, batch, self._output_dim(self._memory_dim)), dtype)  # (T, B, O)
        alignments = ops.zeros((steps, batch, positions), dtype)  # (T, B, S)

        def body(t, outputs, alignments, states):
            output_t, states, alignment_t = self._decode_step(
                time_major[t], states, memory, memory_mask, keys, training
            )
            row = ops.reshape(t, (1, 1))  # scatter index of row t
            outputs = ops.scatter_update(outputs, row, output_t[None])
            alignments = ops.scatter_update(alignments, row, alignment_t[None])
            return t + 1, outputs, alignments, states

        # `maximum_iterations` lets XLA size the loop's gradient accumulators;
        # scatter_update has a gradient where slice_update has none in TensorFlow.
        _, outputs, alignments, states = ops.while_loop(
            lambda t, *_: t < steps,
            body,
            (0, outputs, alignments, states),
            maximum_iterations=steps,
        )
        return outputs, alignments, states

    def _scan(
        self, time_major, steps, batch, positions, states, memory, memory_mask, keys, training
    ):
        """The steps as one `scan` over time (JAX and PyTorch).

        JAX differentiates a loop only when it is a scan (a `while_loop` has
        no reverse-mode gradient there), and the shapes are static anyway.
        """

        def step(states, inputs_t):
            output_t, states, alignment_t = self._decode_step(
                inputs_t, states, memory, memory_mask, keys, training
            )
            return states, (output_t, alignment_t)

        states, (outputs, alignments) = ops.scan(step, states, time_major)
        # The same dtypes as the TensorFlow loop's preallocated rows.
        dtype = self.compute_dtype
        return ops.cast(outputs, dtype), ops.cast(alignments, dtype), states

    def _decode_step(self, inputs_t, states, memory, memory_mask, keys, training):
        """One step of the recurrence on validated tensors; see the class docstring."""
        cell_states = list(states[: self._num_cell_states()])
        previous_hidden = cell_states[0]  # s_{t-1}; h for an LSTM
        if keys is None:
            keys = self.attention.precompute_keys(memory)
        alignment_state = states[-1] if self.location_features else None
        attend_kwargs = {
            "value_mask": memory_mask,
            "precomputed_keys": self._keys_with_location(keys, alignment_state),
            "return_attention_scores": True,
            "training": training,
        }
        if self.attention_style == "bahdanau":
            context, alignment = self.attention(previous_hidden, memory, **attend_kwargs)
            context = self._gate(context, previous_hidden)
            cell_inputs = ops.concatenate([inputs_t, context], axis=-1)  # (B, E + D)
            hidden, new_cell_states = self.cell(cell_inputs, cell_states, training=training)
            output = ops.concatenate([hidden, context], axis=-1)  # (B, units + D)
            new_states = list(new_cell_states)
        else:
            cell_inputs = inputs_t
            if self.input_feeding:
                feed = states[self._num_cell_states()]  # h~_{t-1}
                cell_inputs = ops.concatenate([inputs_t, feed], axis=-1)  # (B, E + A)
            hidden, new_cell_states = self.cell(cell_inputs, cell_states, training=training)
            context, alignment = self.attention(hidden, memory, **attend_kwargs)
            context = self._gate(context, previous_hidden)
            output = self._attentional_dense(ops.concatenate([context, hidden], axis=-1))  # (B, A)
            new_states = list(new_cell_states) + ([output] if self.input_feeding else [])
        if self.location_features:
            alignment = ops.cast(alignment, self.compute_dtype)
            coverage = self.location_features == "coverage"
            new_states.append(alignment_state + alignment if coverage else alignment)
        return output, new_states, alignment

    def _keys_with_location(self, keys, alignment_state):
        """The projected keys `(B, S, K)` plus the alignment state's features `U f`."""
        if alignment_state is None:
            return keys
        features = alignment_state[:, :, None]  # (B, S, 1)
        if self.location_features == "location":
            features = self._location_conv(features)  # (B, S, filters)
        # An einsum on the kernel, not `Dense` on a rank-3 input: Dense's tensordot has
        # a transpose whose gradient XLA cannot compile inside the loop.
        kernel = ops.cast(self._location_dense.kernel, features.dtype)  # (features, K)
        return keys + ops.einsum("bsf,fk->bsk", features, kernel)  # (B, S, K)

    def _gate(self, context, previous_hidden):
        if not self.context_gate:
            return context
        return self._context_gate_dense(previous_hidden) * context  # (B, 1) * (B, D)

    def _complete_state(self, states, name, memory=None):
        """The decoder state from the cell's states or from a full decoder state.

        What the cell's states lack is zeros: the attentional vector `h~_0`
        and the alignment state, whose size is the memory's length.
        """
        states = list(states) if isinstance(states, (list, tuple)) else [states]
        expected = len(self._state_sizes())
        if len(states) not in (self._num_cell_states(), expected) or any(
            len(getattr(state, "shape", ())) != 2 for state in states
        ):
            raise ValueError(
                f"`{name}` must be the cell's {self._num_cell_states()} state(s) or the "
                f"{expected} tensors of a decoder state, each (batch, size). "
                f"Received: {name}={_describe(states)}"
            )
        states = [ops.cast(state, self.compute_dtype) for state in states]
        if len(states) == expected:
            return states
        batch = ops.shape(states[0])[0]
        if self.input_feeding:
            states.append(ops.zeros((batch, self._attentional_dim()), self.compute_dtype))
        if self.location_features:
            if memory is None:
                raise ValueError(
                    f"`memory` must be given with location_features={self.location_features!r}"
                    ": the alignment state has one entry per memory position. Received: "
                    "memory=None"
                )
            positions = ops.shape(memory)[1]
            states.append(ops.zeros((batch, positions), self.compute_dtype))
        return states

    def _set_dropout_masks(self, batch, states, training):
        # Cells cache one dropout mask per sequence; making it before the loop
        # keeps the loop body free of Python-side state.
        if not training:
            return
        if self.cell.dropout > 0:
            cell_inputs_dim = self.cell.kernel.shape[0]
            self.cell.get_dropout_mask(ops.zeros((batch, cell_inputs_dim), self.compute_dtype))
        self.cell.get_recurrent_dropout_mask(states[0])

    def _reset_dropout_masks(self):
        self.cell.reset_dropout_mask()
        self.cell.reset_recurrent_dropout_mask()

    # ------------------------------------------------------------ validation

    def _check_call_shapes(self, inputs_shape, memory_shape, memory_mask_shape=None):
        _check_shapes(inputs_shape, memory_shape, memory_mask_shape)
        for name, shape, built_dim in (
            ("inputs", inputs_shape, self._inputs_dim),
            ("memory", memory_shape, self._memory_dim),
        ):
            if shape[-1] is not None and shape[-1] != built_dim:
                raise ValueError(
                    f"`{name}` must have {built_dim} features (the size the layer was built "
                    f"with). Received: {name}.shape={tuple(shape)}"
                )

    # ----------------------------------------------------------------- shapes

    def compute_mask(self, inputs, previous_mask=None):
        # Target padding carries over to the outputs and the alignments.
        if previous_mask is None:
            return None
        return [previous_mask, previous_mask]

    def compute_output_shape(self, inputs_shape, memory_shape, memory_mask_shape=None):
        _check_shapes(inputs_shape, memory_shape, memory_mask_shape)
        batch_and_time = tuple(inputs_shape[:2])
        output_shape = batch_and_time + (self._output_dim(memory_shape[-1]),)
        return output_shape, batch_and_time + tuple(memory_shape[1:-1])

    def compute_output_spec(self, *args, **kwargs):
        arguments = call_arguments(self.call, args, kwargs)
        inputs, memory = arguments["inputs"], arguments["memory"]
        memory_mask = arguments["memory_mask"]
        mask_shape = None if memory_mask is None else memory_mask.shape
        self._check_call_shapes(inputs.shape, memory.shape, mask_shape)
        output_shape, alignment_shape = self.compute_output_shape(
            inputs.shape, memory.shape, mask_shape
        )
        outputs = keras.KerasTensor(output_shape, dtype=self.compute_dtype)
        alignments = keras.KerasTensor(alignment_shape, dtype=self.compute_dtype)
        if not arguments["return_state"]:
            return outputs, alignments
        batch = inputs.shape[0]
        states = [
            keras.KerasTensor((batch, size), dtype=self.compute_dtype)
            for size in self._state_sizes(memory.shape[1])
        ]
        return outputs, alignments, states

    def get_config(self):
        return {
            **super().get_config(),
            "cell": keras.saving.serialize_keras_object(self.cell),
            "attention": keras.saving.serialize_keras_object(self.attention),
            **kept_arguments(self, _CHECKED_ARGUMENTS),
        }


def _deserialize_if_config(layer):
    if isinstance(layer, dict):
        return keras.layers.deserialize(layer)
    return layer


def _describe(states):
    if isinstance(states, (list, tuple)):
        return "[" + ", ".join(f"shape {tuple(getattr(s, 'shape', ()))}" for s in states) + "]"
    return repr(states)


def _check_shapes(inputs_shape, memory_shape, memory_mask_shape=None):
    """Ranks of the call's tensors, the mask against the memory, the batch."""
    inputs_shape, memory_shape = tuple(inputs_shape), tuple(memory_shape)
    if len(inputs_shape) != 3:
        raise ValueError(
            "`inputs` must be embedded target tokens (batch, time, features); use `step()` "
            f"for one token per example. Received: inputs.shape={inputs_shape}"
        )
    if len(memory_shape) not in (3, 4):
        raise ValueError(
            "`memory` must be a sequence (batch, length, features) or a feature map "
            f"(batch, height, width, features). Received: memory.shape={memory_shape}"
        )
    if memory_mask_shape is not None:
        mask_shape = tuple(memory_mask_shape)
        positions = memory_shape[:-1]
        if len(mask_shape) != len(positions) or not _compatible(mask_shape, positions):
            raise ValueError(
                f"`memory_mask` must have the shape of `memory` without its last axis, "
                f"{memory_shape[:-1]}. Received: memory_mask.shape={mask_shape}"
            )
    if not _compatible(inputs_shape[:1], memory_shape[:1]):
        raise ValueError(
            "`inputs` and `memory` must have the same batch size. "
            f"Received: inputs.shape={inputs_shape}, memory.shape={memory_shape}"
        )


def _compatible(shape_a, shape_b):
    return all(a is None or b is None or a == b for a, b in zip(shape_a, shape_b))

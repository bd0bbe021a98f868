"""AttentionDecoder against NumPy GRU/LSTM decoders with Bahdanau and Luong attention."""

import re

import keras
import numpy as np
import pytest
from layer_harness import LayerSpec
from layer_harness import harness_test

from keras_attention.layers.attention.additive_attention import AdditiveAttention
from keras_attention.layers.attention.dot_product_attention import DotProductAttention
from keras_attention.layers.recurrent.attention_decoder import AttentionDecoder

RNG = np.random.default_rng(11)
BATCH, STEPS, EMBED, MEMORY_DIM = 2, 4, 5, 7


def _normal(*shape):
    return RNG.normal(size=shape).astype("float32")


def _serialized(layer):
    return keras.saving.serialize_keras_object(layer)


# ---------------------------------------------------------------- NumPy reference


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _gru_step(x, h, w):
    """Keras' GRU with reset_after=True: the reset gate multiplies (U h + b_rec)."""
    x_z, x_r, x_h = np.split(x @ w["cell/kernel"] + w["cell/bias"][0], 3, axis=-1)
    h_z, h_r, h_h = np.split(h @ w["cell/recurrent_kernel"] + w["cell/bias"][1], 3, axis=-1)
    z, r = _sigmoid(x_z + h_z), _sigmoid(x_r + h_r)
    candidate = np.tanh(x_h + r * h_h)
    return [z * h + (1.0 - z) * candidate]


def _lstm_step(x, h, c, w):
    """Keras' LSTM: gates in the order input, forget, candidate, output."""
    gates = x @ w["cell/kernel"] + h @ w["cell/recurrent_kernel"] + w["cell/bias"]
    i, f, g, o = np.split(gates, 4, axis=-1)
    c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
    return [_sigmoid(o) * np.tanh(c), c]


def _attend(query, memory, mask, w, score, key_term=0.0):
    """Masked softmax of the scores over the S positions; query (B, Dq), memory (B, S, D).

    `key_term` `(B, S, K)` is added to the projected keys (the location features `U f`).
    """
    if score == "additive":
        hidden = np.tanh(
            (query @ w["attention/query_dense/kernel"])[:, None, :]
            + memory @ w["attention/key_dense/kernel"]
            + w["attention/key_dense/bias"]
            + key_term
        )
        scores = hidden @ w["attention/score_dense/kernel"][:, 0]  # (B, S)
    else:  # Luong's "general": q^T W k, the key being the memory
        keys = memory + key_term
        scores = np.einsum("bd,de,bse->bs", query, w["attention/query_dense/kernel"], keys)
    weights = np.zeros_like(scores)
    for b in range(scores.shape[0]):
        visible = mask[b]
        if visible.any():
            exponentials = np.exp(scores[b, visible] - scores[b, visible].max())
            weights[b, visible] = exponentials / exponentials.sum()
    return np.einsum("bs,bsd->bd", weights, memory), weights


def _location_term(alignment_state, w, kind):
    """`U f` (B, S, K): f the summed past alignments (coverage, Tu et al.; See et al.'s
    `w_c c_i`) or the convolved previous alignment (location, Chorowski et al.)."""
    features = alignment_state[:, :, None]  # (B, S, 1)
    if kind == "location":
        kernel = w["location_conv/kernel"]  # (width, 1, filters)
        width, pad = kernel.shape[0], (kernel.shape[0] - 1) // 2
        padded = np.pad(alignment_state, ((0, 0), (pad, width - 1 - pad)))
        positions = alignment_state.shape[1]
        # Cross-correlation, as Keras' Conv1D: out[s] = sum_j a[s + j - pad] w[j].
        features = np.stack(
            [padded[:, s : s + width] @ kernel[:, 0, :] for s in range(positions)], 1
        )  # (B, S, filters)
    return features @ w["location_dense/kernel"]


def _numpy_decoder(decoder, inputs, memory, mask, initial_state, score):
    """The published recurrences, step by step, with the decoder's weights."""
    w = {v.path.split("/", 1)[1]: np.asarray(v, "float64") for v in decoder.weights}
    batch = memory.shape[0]
    memory = memory.reshape(batch, -1, memory.shape[-1]).astype("float64")  # (B, S, D)
    mask = mask.reshape(batch, -1)  # (B, S)
    lstm = isinstance(decoder.cell, keras.layers.LSTMCell)
    states = [np.asarray(s, "float64") for s in initial_state]
    attentional = None
    if decoder.input_feeding:
        attentional = np.zeros((batch, w["attentional_dense/kernel"].shape[1]))  # h~_0
    alignment_state = np.zeros(mask.shape)  # (B, S): no past attention
    outputs, alignments = [], []
    for t in range(inputs.shape[1]):
        y = inputs[:, t].astype("float64")
        previous_h = states[0]
        key_term = 0.0
        if decoder.location_features:
            key_term = _location_term(alignment_state, w, decoder.location_features)
        beta = 1.0
        if decoder.context_gate:
            gate = previous_h @ w["context_gate_dense/kernel"] + w["context_gate_dense/bias"]
            beta = _sigmoid(gate)  # (B, 1), from s_{t-1}
        if decoder.attention_style == "bahdanau":
            context, weights = _attend(previous_h, memory, mask, w, score, key_term)
            context = beta * context
            x = np.concatenate([y, context], -1)
            states = _lstm_step(x, *states, w) if lstm else _gru_step(x, *states, w)
            output = np.concatenate([states[0], context], -1)
        else:
            x = np.concatenate([y, attentional], -1) if decoder.input_feeding else y
            states = _lstm_step(x, *states, w) if lstm else _gru_step(x, *states, w)
            context, weights = _attend(states[0], memory, mask, w, score, key_term)
            context = beta * context
            combined = np.concatenate([context, states[0]], -1)  # [c_t; s_t]
            output = np.tanh(combined @ w["attentional_dense/kernel"])
            attentional = output
        if decoder.location_features == "coverage":
            alignment_state = alignment_state + weights
        else:
            alignment_state = weights
        outputs.append(output)
        alignments.append(weights)
    return np.stack(outputs, 1), np.stack(alignments, 1)  # (B, T, O), (B, T, S)


# --------------------------------------------------------------------- helpers


def _decoder(cell="gru", score="additive", units=8, **kwargs):
    cell_class = keras.layers.LSTMCell if cell == "lstm" else keras.layers.GRUCell
    # Non-zero biases so that their place in the formulas is tested.
    cell = cell_class(units, bias_initializer="random_normal", name="cell")
    if score == "additive":
        attention = AdditiveAttention(units=6, bias_initializer="random_normal", name="attention")
    else:
        attention = DotProductAttention(score_mode=score, name="attention")
    return AttentionDecoder(cell, attention, **kwargs)


def _memory(image):
    if image:
        memory = _normal(BATCH, 2, 3, MEMORY_DIM)
        mask = np.ones((BATCH, 2, 3), bool)
        mask[1, 1, 1:] = False
    else:
        memory = _normal(BATCH, 6, MEMORY_DIM)
        mask = np.array([[True] * 6, [True] * 4 + [False] * 2])
    return memory, mask


def _cell_states(decoder):
    count = 2 if isinstance(decoder.cell, keras.layers.LSTMCell) else 1
    return [_normal(BATCH, decoder.cell.units) for _ in range(count)]


CONFIGS = {
    "gru_additive_bahdanau_sequence": (dict(cell="gru", score="additive"), False),
    "lstm_additive_bahdanau_gate_image": (
        dict(cell="lstm", score="additive", context_gate=True),
        True,
    ),
    "gru_general_luong_image": (dict(cell="gru", score="general", attention_style="luong"), True),
    "lstm_general_luong_feeding_sequence": (
        dict(
            cell="lstm",
            score="general",
            attention_style="luong",
            input_feeding=True,
            attention_output_dim=5,
        ),
        False,
    ),
    "gru_scaled_dot_luong_feeding_gate_image": (
        dict(
            cell="gru",
            score="scaled_dot",
            units=MEMORY_DIM,
            attention_style="luong",
            input_feeding=True,
            context_gate=True,
        ),
        True,
    ),
    "gru_additive_bahdanau_coverage_sequence": (
        dict(cell="gru", score="additive", location_features="coverage"),
        False,
    ),
    "lstm_additive_bahdanau_location_sequence": (
        dict(cell="lstm", score="additive", location_features="location", location_kernel_size=3),
        False,
    ),
    "gru_general_luong_feeding_location_sequence": (
        dict(
            cell="gru",
            score="general",
            units=MEMORY_DIM,
            attention_style="luong",
            input_feeding=True,
            location_features="location",
            location_filters=4,
        ),
        False,
    ),
}


def _decoder_and_inputs(name):
    """The CONFIGS[name] decoder, inputs (B, T, E), memory and its mask, encoder states."""
    kwargs, image = CONFIGS[name]
    decoder = _decoder(**kwargs)
    inputs = _normal(BATCH, STEPS, EMBED)
    memory, mask = _memory(image)
    return decoder, inputs, memory, mask, _cell_states(decoder)


# ------------------------------------------------------------------------ tests


@pytest.mark.parametrize("name", CONFIGS)
def test_step_by_step_decoding_equals_the_teacher_forced_pass(name):
    decoder, inputs, memory, mask, encoder_states = _decoder_and_inputs(name)
    outputs, alignments, final_states = decoder(
        inputs, memory, memory_mask=mask, initial_state=encoder_states, return_state=True
    )

    keys = decoder.precompute_memory(memory)
    states = decoder.initial_decoder_state(encoder_states, memory)
    for t in range(STEPS):
        output_t, states, alignment_t = decoder.step(
            inputs[:, t], states, memory, memory_mask=mask, precomputed_keys=keys
        )
        assert tuple(alignment_t.shape) == (BATCH,) + mask.shape[1:]
        np.testing.assert_allclose(output_t, np.asarray(outputs)[:, t], atol=1e-5)
        np.testing.assert_allclose(alignment_t, np.asarray(alignments)[:, t], atol=1e-5)
    assert len(states) == len(final_states)
    for stepped, final in zip(states, final_states):
        np.testing.assert_allclose(stepped, final, atol=1e-5)


@pytest.mark.parametrize(
    "name",
    [
        "gru_additive_bahdanau_sequence",
        "lstm_additive_bahdanau_gate_image",
        "lstm_general_luong_feeding_sequence",
        "gru_additive_bahdanau_coverage_sequence",
        "lstm_additive_bahdanau_location_sequence",
        "gru_general_luong_feeding_location_sequence",
    ],
)
def test_teacher_forced_pass_matches_numpy_recurrences(name):
    decoder, inputs, memory, mask, encoder_states = _decoder_and_inputs(name)
    kwargs, _ = CONFIGS[name]
    outputs, alignments = decoder(inputs, memory, memory_mask=mask, initial_state=encoder_states)
    expected_outputs, expected_alignments = _numpy_decoder(
        decoder, inputs, memory, mask, encoder_states, kwargs["score"]
    )
    np.testing.assert_allclose(outputs, expected_outputs, atol=1e-5)
    alignments = np.asarray(alignments).reshape(expected_alignments.shape)  # (B, T, S)
    np.testing.assert_allclose(alignments, expected_alignments, atol=1e-5)


@pytest.mark.parametrize("kind", ["coverage", "location"])
def test_location_features_carry_the_alignments_in_the_state(kind):
    decoder = _decoder(location_features=kind)
    memory, mask = _memory(image=False)
    inputs = _normal(BATCH, STEPS, EMBED)
    _, alignments, states = decoder(inputs, memory, memory_mask=mask, return_state=True)
    alignments = np.asarray(alignments)  # (B, T, S)
    expected = alignments.sum(1) if kind == "coverage" else alignments[:, -1]
    np.testing.assert_allclose(states[-1], expected, atol=1e-6)
    # The features change the alignments from the second step on, not the first.
    plain = _decoder()
    plain.build(inputs.shape, memory.shape)
    shared = [v for v in decoder.weights if "location" not in v.path]
    plain.set_weights([np.asarray(v) for v in shared])
    _, plain_alignments = plain(inputs, memory, memory_mask=mask)
    np.testing.assert_allclose(plain_alignments[:, 0], alignments[:, 0], atol=1e-6)
    assert np.abs(np.asarray(plain_alignments)[:, 1:] - alignments[:, 1:]).max() > 1e-4


def test_location_features_need_a_sequence_memory_and_its_length():
    decoder = _decoder(location_features="coverage")
    memory, mask = _memory(image=True)
    with pytest.raises(ValueError, match=r"need a sequence memory.*memory.shape=\(2, 2, 3, 7\)"):
        decoder(_normal(BATCH, STEPS, EMBED), memory, memory_mask=mask)
    with pytest.raises(ValueError, match="`memory` must be given with location_features"):
        _decoder(location_features="location").initial_decoder_state(BATCH)


def test_one_bahdanau_gru_step_matches_numpy_from_zero_state():
    decoder = _decoder(cell="gru", score="additive")
    memory, mask = _memory(image=False)
    y = _normal(BATCH, EMBED)
    states = decoder.initial_decoder_state(BATCH)
    output, (state,), alignment = decoder.step(y, states, memory, mask)
    w = {v.path.split("/", 1)[1]: np.asarray(v, "float64") for v in decoder.weights}
    zeros = np.zeros((BATCH, decoder.cell.units))
    context, weights = _attend(zeros, memory.astype("float64"), mask, w, "additive")  # e(s_0, h_i)
    (expected_state,) = _gru_step(np.concatenate([y, context], -1), zeros, w)
    np.testing.assert_allclose(alignment, weights, atol=1e-5)
    np.testing.assert_allclose(state, expected_state, atol=1e-5)
    np.testing.assert_allclose(output, np.concatenate([expected_state, context], -1), atol=1e-5)


@pytest.mark.parametrize("image", [False, True], ids=["sequence", "image"])
@pytest.mark.parametrize("style", ["bahdanau", "luong"])
def test_alignments_sum_to_one_over_real_positions_and_are_zero_elsewhere(style, image):
    decoder = _decoder(cell="lstm", score="additive", attention_style=style)
    memory, mask = _memory(image)
    mask[0] = False  # nothing to attend to: weights 0 and no NaN
    outputs, alignments = decoder(_normal(BATCH, STEPS, EMBED), memory, memory_mask=mask)
    alignments = np.asarray(alignments)
    assert alignments.shape == (BATCH, STEPS) + mask.shape[1:]
    assert np.all(np.isfinite(outputs))
    np.testing.assert_array_equal(alignments[0], 0.0)
    real = np.broadcast_to(mask[1][None], alignments[1].shape)
    np.testing.assert_array_equal(alignments[1][~real], 0.0)
    np.testing.assert_allclose(alignments[1].reshape(STEPS, -1).sum(-1), 1.0, atol=1e-6)


def test_return_state_continues_decoding_where_it_stopped():
    decoder = _decoder(cell="lstm", score="general", attention_style="luong", input_feeding=True)
    inputs = _normal(BATCH, STEPS, EMBED)
    memory, mask = _memory(image=False)
    full, full_alignments = decoder(inputs, memory, memory_mask=mask)
    first, _, states = decoder(inputs[:, :2], memory, memory_mask=mask, return_state=True)
    assert [tuple(s.shape) for s in states] == [(BATCH, 8)] * 3  # h, c and h~
    second, second_alignments = decoder(
        inputs[:, 2:], memory, memory_mask=mask, initial_state=states
    )
    np.testing.assert_allclose(np.concatenate([first, second], 1), full, atol=1e-5)
    np.testing.assert_allclose(second_alignments, np.asarray(full_alignments)[:, 2:], atol=1e-5)


def test_initial_decoder_state_from_batch_size_or_encoder_states():
    decoder = _decoder(
        cell="lstm",
        score="general",
        attention_style="luong",
        input_feeding=True,
        attention_output_dim=3,
    )
    zeros = decoder.initial_decoder_state(4)
    assert [tuple(s.shape) for s in zeros] == [(4, 8), (4, 8), (4, 3)]
    assert all(not np.any(s) for s in zeros)
    h, c = _cell_states(decoder)
    states = decoder.initial_decoder_state([h, c])
    np.testing.assert_array_equal(states[0], h)
    np.testing.assert_array_equal(states[1], c)
    np.testing.assert_array_equal(states[2], np.zeros((BATCH, 3)))
    gru = _decoder(cell="gru")
    (state,) = gru.initial_decoder_state(h)  # a GRU state may be one tensor
    np.testing.assert_array_equal(state, h)


def test_keras_masks_pass_through():
    tokens = np.array([[3, 1, 2, 0], [4, 0, 0, 0]])
    source = np.array([[5, 6, 0], [7, 8, 9]])
    targets = keras.layers.Embedding(10, EMBED, mask_zero=True)(tokens)
    memory = keras.layers.Embedding(10, MEMORY_DIM, mask_zero=True)(source)
    decoder = _decoder(cell="gru", score="additive")
    outputs, alignments = decoder(targets, memory)
    # The memory's padding is hidden from the attention...
    np.testing.assert_array_equal(np.asarray(alignments)[0, :, 2], 0.0)
    np.testing.assert_allclose(np.asarray(alignments).sum(-1), 1.0, atol=1e-6)
    # ...and the target padding is passed on: a masked mean skips padded steps.
    pooled = keras.layers.GlobalAveragePooling1D()(outputs)
    valid = tokens != 0
    expected = (np.asarray(outputs) * valid[..., None]).sum(1) / valid.sum(1, keepdims=True)
    np.testing.assert_allclose(pooled, expected, atol=1e-6)


def test_symbolic_call_with_state_and_output_shapes():
    decoder = _decoder(cell="lstm", score="additive")  # bahdanau: output [s_t; c_t]
    inputs = keras.Input((None, EMBED))
    memory = keras.Input((3, 4, MEMORY_DIM))
    outputs, alignments, states = decoder(inputs, memory, return_state=True)
    assert outputs.shape == (None, None, 8 + MEMORY_DIM)
    assert alignments.shape == (None, None, 3, 4)
    assert [s.shape for s in states] == [(None, 8), (None, 8)]
    assert decoder.compute_output_shape((2, 5, EMBED), (2, 6, MEMORY_DIM)) == (
        (2, 5, 8 + MEMORY_DIM),
        (2, 5, 6),
    )


def test_config_nests_the_cell_and_attention():
    cell, attention = keras.layers.GRUCell(8), DotProductAttention(score_mode="dot")
    decoder = AttentionDecoder(cell, attention, attention_style="luong", context_gate=True)
    assert decoder.cell is cell and decoder.attention is attention
    config = decoder.get_config()
    assert config["cell"]["class_name"] == "GRUCell" and config["cell"]["config"]["units"] == 8
    assert config["attention"]["config"]["score_mode"] == "dot"
    clone = AttentionDecoder.from_config(config)
    assert isinstance(clone.cell, keras.layers.GRUCell) and clone.cell is not cell
    assert clone.get_config() == config


def test_jit_compiled_fit_learns_to_copy_the_memory():
    vocabulary, length, count = 6, 4, 32
    rng = np.random.default_rng(0)
    source = rng.integers(1, vocabulary, size=(count, length))
    memory = np.eye(vocabulary, dtype="float32")[source]  # (N, S, V): a fixed one-hot memory
    decoder_inputs = np.concatenate([np.zeros((count, 1), int), source[:, :-1]], 1)  # shifted right

    tokens = keras.Input((length,), dtype="int32")
    memory_input = keras.Input((length, vocabulary))
    embedded = keras.layers.Embedding(vocabulary, 8)(tokens)
    decoder = AttentionDecoder(
        keras.layers.GRUCell(16, dropout=0.1, recurrent_dropout=0.1),
        AdditiveAttention(units=8, dropout=0.1),
    )
    outputs, _ = decoder(embedded, memory_input)
    logits = keras.layers.Dense(vocabulary)(outputs)
    model = keras.Model([tokens, memory_input], logits)
    model.compile(
        optimizer=keras.optimizers.Adam(0.02),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        jit_compile=True,
    )
    history = model.fit([decoder_inputs, memory], source, epochs=30, batch_size=count, verbose=0)
    losses = history.history["loss"]
    assert np.all(np.isfinite(losses))
    assert losses[-1] < losses[0], losses
    # The previous tokens say nothing about the next one: beating the entropy
    # of the token frequencies needs the memory, read through the attention.
    frequencies = np.bincount(source.ravel())[1:] / source.size
    entropy = -np.sum(frequencies * np.log(frequencies))
    assert losses[-1] < 0.85 * entropy, (losses, entropy)


@pytest.mark.parametrize("name", CONFIGS)
def test_jit_compiled_fit_with_a_partial_last_batch(name):
    # 5 examples in batches of 2: the last batch has 1, so the compiled
    # program sees a batch size that is not a constant of the graph.
    kwargs, image = CONFIGS[name]
    memory, mask = _memory(image)
    rng = np.random.default_rng(1)
    memory = np.concatenate([memory, memory, memory[:1]])
    mask = np.concatenate([mask, mask, mask[:1]])
    inputs = rng.normal(size=(5, 3, 4)).astype("float32")
    targets = rng.normal(size=(5, 3, 2)).astype("float32")

    decoder = _decoder(**kwargs)
    inputs_in = keras.Input((None, 4))
    memory_in = keras.Input(memory.shape[1:])
    mask_in = keras.Input(mask.shape[1:], dtype="bool")
    outputs, _ = decoder(inputs_in, memory_in, memory_mask=mask_in)
    model = keras.Model([inputs_in, memory_in, mask_in], keras.layers.Dense(2)(outputs))
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse", jit_compile=True)
    before = model.evaluate([inputs, memory, mask], targets, batch_size=5, verbose=0)
    history = model.fit([inputs, memory, mask], targets, batch_size=2, epochs=3, verbose=0)
    after = model.evaluate([inputs, memory, mask], targets, batch_size=5, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))
    assert after < before, (before, after)


def test_cell_dropout_is_active_only_in_training_with_a_new_mask_per_call():
    decoder = AttentionDecoder(
        keras.layers.LSTMCell(8, dropout=0.5, recurrent_dropout=0.5),
        DotProductAttention(score_mode="general"),
        attention_style="luong",
        input_feeding=True,
    )
    inputs, (memory, _) = _normal(BATCH, STEPS, EMBED), _memory(image=False)
    inference, _ = decoder(inputs, memory)
    first, _ = decoder(inputs, memory, training=True)
    second, _ = decoder(inputs, memory, training=True)
    assert np.all(np.isfinite(first)) and not np.allclose(first, inference)
    assert not np.allclose(first, second), "a dropout mask was kept from one call to the next"
    np.testing.assert_allclose(decoder(inputs, memory)[0], inference, atol=1e-6)


def _spec_memory(shape):
    mask = np.ones(shape[:-1], bool)
    mask[1, ..., -1] = False
    return _normal(*shape), mask


_SEQUENCE_MEMORY, _SEQUENCE_MASK = _spec_memory((BATCH, 6, MEMORY_DIM))
_IMAGE_MEMORY, _IMAGE_MASK = _spec_memory((BATCH, 2, 3, MEMORY_DIM))

SPECS = [
    LayerSpec(
        "gru_additive_bahdanau",
        AttentionDecoder,
        {
            "cell": _serialized(keras.layers.GRUCell(8)),
            "attention": _serialized(AdditiveAttention(units=6)),
            "attention_style": "bahdanau",
        },
        inputs=[_normal(BATCH, STEPS, EMBED), _SEQUENCE_MEMORY],
        tensor_kwargs={"memory_mask": _SEQUENCE_MASK},
    ),
    LayerSpec(
        "lstm_general_luong_feeding_gate_image",
        AttentionDecoder,
        {
            "cell": _serialized(keras.layers.LSTMCell(8)),
            "attention": _serialized(DotProductAttention(score_mode="general")),
            "attention_style": "luong",
            "input_feeding": True,
            "context_gate": True,
            "attention_output_dim": 6,
        },
        inputs=[_normal(BATCH, STEPS, EMBED), _IMAGE_MEMORY],
        tensor_kwargs={"memory_mask": _IMAGE_MASK},
    ),
]


test_harness = harness_test(SPECS)


# ------------------------------------------------------------------ bad inputs


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (
            dict(cell=keras.layers.SimpleRNNCell(4)),
            r"`cell` must be .*Received: cell=.* of type SimpleRNNCell",
        ),
        (dict(cell="gru"), r"`cell` must be .*Received: cell='gru' of type str"),
        (
            dict(attention=keras.layers.AdditiveAttention()),
            r"`attention` must be .*Received: attention=.* of type AdditiveAttention",
        ),
        (dict(attention_style="transformer"), re.escape("Received: attention_style='transformer'")),
        (dict(input_feeding=True), r"Received: input_feeding=True.*attention_style=\"bahdanau\""),
        (
            dict(attention_style="luong", input_feeding="yes"),
            re.escape("Received: input_feeding='yes'"),
        ),
        (
            dict(attention_style="luong", attention_output_dim=0),
            re.escape("Received: attention_output_dim=0"),
        ),
        (dict(attention_output_dim=4), r"Received: input_feeding=False, attention_output_dim=4"),
        (
            dict(location_features="cumulative"),
            re.escape("Received: location_features='cumulative'"),
        ),
        (dict(location_filters=0), re.escape("Received: location_filters=0")),
        (dict(location_kernel_size=2.5), re.escape("Received: location_kernel_size=2.5")),
    ],
)
def test_bad_constructor_arguments(kwargs, message):
    arguments = {"cell": keras.layers.GRUCell(4), "attention": AdditiveAttention(units=3), **kwargs}
    with pytest.raises(ValueError, match=message):
        AttentionDecoder(**arguments)


def test_bad_call_arguments():
    inputs, (memory, mask) = _normal(BATCH, STEPS, EMBED), _memory(image=False)
    with pytest.raises(ValueError, match=re.escape("Received: memory.shape=(2, 7)")):
        _decoder()(inputs, _normal(BATCH, MEMORY_DIM))
    with pytest.raises(ValueError, match=re.escape("Received: memory.shape=(2, 1, 2, 3, 7)")):
        _decoder()(inputs, _normal(BATCH, 1, 2, 3, MEMORY_DIM))
    with pytest.raises(ValueError, match=re.escape("Received: memory_mask.shape=(2, 5)")):
        _decoder()(inputs, memory, memory_mask=mask[:, :5])
    with pytest.raises(ValueError, match=re.escape("Received: inputs.shape=(2, 5)")):
        _decoder()(inputs[:, 0], memory)

    decoder = _decoder(cell="lstm")
    unbuilt = r"needs a built decoder.*Received: memory.shape=\(2, 6, 7\)"
    with pytest.raises(ValueError, match=unbuilt):
        decoder.precompute_memory(memory)
    decoder(inputs, memory)
    with pytest.raises(ValueError, match=re.escape("Received: initial_state=[shape (2, 8)]")):
        decoder(inputs, memory, initial_state=[_normal(BATCH, 8)])
    with pytest.raises(ValueError, match=re.escape("Received: memory.shape=(2, 6, 3)")):
        decoder(inputs, _normal(BATCH, 6, 3))
    states = decoder.initial_decoder_state(BATCH)
    with pytest.raises(ValueError, match=re.escape("Received: states=[shape (2, 8)]")):
        decoder.step(inputs[:, 0], states[:1], memory)
    with pytest.raises(ValueError, match=re.escape("Received: inputs_t.shape=(2, 4, 5)")):
        decoder.step(inputs, states, memory)


def test_prebuilt_cell_of_the_wrong_width_is_rejected():
    cell = keras.layers.GRUCell(8)
    cell.build((None, 3))
    decoder = AttentionDecoder(cell, AdditiveAttention(units=4))
    with pytest.raises(ValueError, match="Received: cell built for 3 features"):
        decoder(_normal(BATCH, STEPS, EMBED), _normal(BATCH, 6, MEMORY_DIM))

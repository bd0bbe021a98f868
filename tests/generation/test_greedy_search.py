import numpy as np
import pytest
from keras import ops
from toy_decoders import END
from toy_decoders import PAD
from toy_decoders import START
from toy_decoders import TableDecoder
from toy_decoders import expected_attention
from toy_decoders import padded

from keras_attention.generation.greedy_search import greedy_search

TOY_INPUTS = np.array([[1, 5, 5, 5], [2, 7, 0, 0]])


def _numpy_greedy(tables, kind, max_length):
    """Follow the largest logit (padding excluded) until END or max_length tokens."""
    sequence, before_previous, previous = [], 0, START
    for index in range(max_length):
        logits = tables[kind, index, before_previous, previous].copy()
        logits[PAD] = -np.inf
        token = int(np.argmax(logits))
        sequence.append(token)
        if token == END:
            break
        before_previous, previous = previous, token
    return sequence


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_toy_decoder_matches_numpy_greedy(seed):
    rng = np.random.default_rng(seed)
    tables = rng.normal(size=(2, 5, 5, 5, 5)).astype("float32")
    tables[..., END] -= 1.0  # some sequences end early, others run to max_length
    tokens, attention = greedy_search(
        TableDecoder(tables), TOY_INPUTS, START, END, 5, jit_compile=False
    )
    for example in range(2):
        expected = _numpy_greedy(tables, example, 5)
        assert np.asarray(tokens[example]).tolist() == padded(expected, 5)
        rows = np.zeros((5, 4), "float32")
        rows[: len(expected)] = expected_attention(expected, 4, TOY_INPUTS[example] != 0)
        np.testing.assert_array_equal(np.asarray(attention[example]), rows)


def test_padding_is_never_produced():
    tables = np.zeros((2, 3, 5, 5, 5), "float32")
    tables[..., PAD] = 10.0  # the likeliest token is padding, then 4
    tables[..., 4] = 5.0
    tokens, _ = greedy_search(TableDecoder(tables), TOY_INPUTS, START, END, 3, jit_compile=False)
    assert np.asarray(tokens).tolist() == [[4, 4, 4]] * 2


def test_xla_search_stops_early_and_is_traced_once_per_shape():
    tables = np.zeros((2, 6, 5, 5, 5), "float32")
    tables[:, 0, :, :, 3] = 5.0
    tables[:, 1, :, :, END] = 5.0  # [3, END] for every example
    decoder = TableDecoder(tables, count_steps=True)
    tokens, _ = greedy_search(decoder, TOY_INPUTS, START, END, 6)
    assert np.asarray(tokens).tolist() == [[3, END, 0, 0, 0, 0]] * 2
    assert decoder.steps.numpy() == 2  # two steps, not six
    greedy_search(decoder, np.array([[2, 3, 4, 0], [1, 1, 0, 0]]), START, END, 6)
    assert decoder.traces == 1
    greedy_search(decoder, TOY_INPUTS[:, :3], START, END, 6)
    assert decoder.traces == 2  # a new source length is a new program
    greedy_search(decoder, TOY_INPUTS, START, END, 5)
    assert decoder.traces == 3  # and so is a new max_length


class _NoMaskDecoder(TableDecoder):
    def encode(self, inputs):
        state = super().encode(inputs)
        return {"kind": state["kind"], "mask": ops.ones((2, 4), "bool")}


def test_bad_arguments():
    decoder = TableDecoder(np.zeros((2, 4, 5, 5, 5), "float32"))
    with pytest.raises(ValueError, match="start_id.*Received: start_id=-1"):
        greedy_search(decoder, TOY_INPUTS, -1, END, 4)
    with pytest.raises(ValueError, match="max_length.*Received: max_length=0"):
        greedy_search(decoder, TOY_INPUTS, START, END, 0)
    with pytest.raises(ValueError, match="at most 4.*Received: max_length=9"):
        greedy_search(decoder, TOY_INPUTS, START, END, 9)
    with pytest.raises(ValueError, match="decoding protocol.*Received: decoder="):
        greedy_search(object(), TOY_INPUTS, START, END, 4)
    no_mask = _NoMaskDecoder(np.zeros((2, 4, 5, 5, 5), "float32"))
    with pytest.raises(ValueError, match="'memory_mask' entry.*Received: \\['kind', 'mask'\\]"):
        greedy_search(no_mask, TOY_INPUTS, START, END, 4, jit_compile=False)

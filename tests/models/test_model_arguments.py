"""Every model builder refuses a bad argument with a ValueError naming it and its value."""

import pytest
from tiny_models import tiny_rnn_attention_translator
from tiny_models import tiny_show_attend_tell_captioner
from tiny_models import tiny_transformer_captioner
from tiny_models import tiny_transformer_translator

BACKBONE = r"`backbone` must be 'small_cnn' or the name of a keras.applications model .* "
BAD_ARGUMENTS = {
    tiny_show_attend_tell_captioner: [
        ({"backbone": "NoSuchNet"}, BACKBONE + r"Received: backbone='NoSuchNet'"),
        ({"units": 0}, r"`units` must be a positive integer. Received: units=0"),
        ({"dropout": 1.5}, r"`dropout` must be a float in \[0, 1\). Received: dropout=1.5"),
        (
            {"doubly_stochastic_lambda": -0.1},
            r"`doubly_stochastic_lambda` must be a number >= 0. "
            r"Received: doubly_stochastic_lambda=-0.1",
        ),
    ],
    tiny_transformer_captioner: [
        ({"backbone": "nope"}, BACKBONE + r"Received: backbone='nope'"),
        (
            {"num_heads": 3},
            r"`hidden_dim` must be a multiple of `num_heads`. "
            r"Received: hidden_dim=16, num_heads=3",
        ),
        (
            {"encoder_layers": -1},
            r"`encoder_layers` must be an integer >= 0. Received: encoder_layers=-1",
        ),
        (
            {"max_caption_length": 0},
            r"`max_caption_length` must be a positive integer. Received: max_caption_length=0",
        ),
    ],
    tiny_rnn_attention_translator: [
        ({"units": 0}, "units.*Received: units=0"),
        ({"embedding_dim": 2.5}, "embedding_dim.*Received: embedding_dim=2.5"),
        ({"cell": "rnn"}, "cell.*Received: cell='rnn'"),
        ({"attention": "cosine"}, "attention.*Received: attention='cosine'"),
        ({"attention_style": "vaswani"}, "attention_style.*Received: attention_style='vaswani'"),
        ({"dropout": -0.1}, "dropout.*Received: dropout=-0.1"),
        ({"input_feeding": True}, "input_feeding.*luong.*Received"),
    ],
    tiny_transformer_translator: [
        ({"hidden_dim": 0}, "hidden_dim.*Received: hidden_dim=0"),
        ({"num_layers": 1.5}, "num_layers.*Received: num_layers=1.5"),
        (
            {"hidden_dim": 10, "num_heads": 4},
            "multiple of `num_heads`.*Received: hidden_dim=10, num_heads=4",
        ),
        ({"dropout": 1.0}, "dropout.*Received: dropout=1.0"),
        ({"norm_first": "yes"}, "norm_first.*Received: norm_first='yes'"),
        ({"source_vocabulary_size": -3}, "Received: source_vocabulary_size=-3"),
    ],
}
CASES = [
    pytest.param(build, arguments, message, id=f"{build.__name__}-{'-'.join(arguments)}")
    for build, cases in BAD_ARGUMENTS.items()
    for arguments, message in cases
]


@pytest.mark.parametrize("build, arguments, message", CASES)
def test_bad_arguments(build, arguments, message):
    with pytest.raises(ValueError, match=message):
        build(**arguments)

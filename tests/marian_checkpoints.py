"""Small Marian (opus-mt) checkpoint folders made in the test, and a NumPy Marian to check them.

`write_marian_folder` writes what `MarianMTModel.save_pretrained` and
`MarianTokenizer.save_pretrained` write (`config.json`, `model.safetensors`,
`source.spm`, `target.spm`, `vocab.json`), with SentencePiece models trained
on a few hundred lines (`benchmarks.marian_folders`, which the Marian
benchmark writes its tokenizer with too) and random weights, using
`safetensors` and `sentencepiece` only. `numpy_marian_logits` and `numpy_greedy` are the
published model written out in NumPy (post-norm blocks, swish MLP, token
embeddings scaled by sqrt(d_model), sinusoids as all sines then all cosines,
logits on the shared embedding plus `final_logits_bias`), in Marian's ids.
"""

import json
import os
import pathlib
import sys

import numpy as np
from safetensors.numpy import save_file

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.marian_folders import write_tokenizer_files  # noqa: E402

WORDS = {
    "cat": "Katze",
    "dog": "Hund",
    "house": "Haus",
    "red": "rot",
    "big": "groß",
    "small": "klein",
    "tree": "Baum",
    "river": "Fluss",
    "blue": "blau",
    "green": "grün",
    "old": "alt",
    "new": "neu",
}
SIZES = dict(d_model=32, layers=2, heads=4, ffn=64, positions=64)


def phrase_pairs(count, seed):
    """English phrases and their German words in the reverse order: a reordering task."""
    rng = np.random.default_rng(seed)
    english = sorted(WORDS)
    pairs = []
    for _ in range(count):
        chosen = list(rng.choice(english, rng.integers(2, 6)))
        pairs.append((" ".join(chosen), " ".join(WORDS[word] for word in reversed(chosen))))
    return pairs


def marian_config(vocab_size, **changes):
    """A `config.json` of a small Marian model, as transformers writes it."""
    config = {
        "model_type": "marian",
        "architectures": ["MarianMTModel"],
        "vocab_size": vocab_size,
        "decoder_vocab_size": vocab_size,
        "d_model": SIZES["d_model"],
        "encoder_layers": SIZES["layers"],
        "decoder_layers": SIZES["layers"],
        "encoder_attention_heads": SIZES["heads"],
        "decoder_attention_heads": SIZES["heads"],
        "encoder_ffn_dim": SIZES["ffn"],
        "decoder_ffn_dim": SIZES["ffn"],
        "max_position_embeddings": SIZES["positions"],
        "activation_function": "swish",
        "scale_embedding": True,
        "share_encoder_decoder_embeddings": True,
        "tie_word_embeddings": True,
        "pad_token_id": vocab_size - 1,
        "eos_token_id": 0,
        "decoder_start_token_id": vocab_size - 1,
        "dropout": 0.0,
    }
    config.update(changes)
    return config


def random_marian_weights(config, seed=0):
    """A state dict in transformers' names and layouts, random (biases and norms too)."""
    rng = np.random.default_rng(seed)
    hidden, ffn, size = config["d_model"], config["encoder_ffn_dim"], config["vocab_size"]

    def normal(*shape, scale=0.2):
        return (rng.standard_normal(shape) * scale).astype("float32")

    weights = {"model.shared.weight": normal(size, hidden, scale=0.5)}
    weights["final_logits_bias"] = normal(1, size)

    def attention(prefix):
        for projection in ("q_proj", "k_proj", "v_proj", "out_proj"):
            weights[f"{prefix}.{projection}.weight"] = normal(hidden, hidden)
            weights[f"{prefix}.{projection}.bias"] = normal(hidden)

    def norm(prefix):
        weights[f"{prefix}.weight"] = 1 + normal(hidden, scale=0.1)
        weights[f"{prefix}.bias"] = normal(hidden, scale=0.1)

    def mlp(prefix):
        weights[f"{prefix}.fc1.weight"], weights[f"{prefix}.fc1.bias"] = (
            normal(ffn, hidden),
            normal(ffn),
        )
        weights[f"{prefix}.fc2.weight"], weights[f"{prefix}.fc2.bias"] = (
            normal(hidden, ffn),
            normal(hidden),
        )

    for index in range(config["encoder_layers"]):
        prefix = f"model.encoder.layers.{index}"
        attention(f"{prefix}.self_attn")
        norm(f"{prefix}.self_attn_layer_norm")
        mlp(prefix)
        norm(f"{prefix}.final_layer_norm")
    for index in range(config["decoder_layers"]):
        prefix = f"model.decoder.layers.{index}"
        attention(f"{prefix}.self_attn")
        norm(f"{prefix}.self_attn_layer_norm")
        attention(f"{prefix}.encoder_attn")
        norm(f"{prefix}.encoder_attn_layer_norm")
        mlp(prefix)
        norm(f"{prefix}.final_layer_norm")
    return weights


def write_marian_folder(folder, pairs=None, seed=0, **config_changes):
    """A Marian folder with tokenizer files and random weights; returns `(config, weights)`."""
    pairs = pairs or phrase_pairs(400, seed=0)
    vocabulary = write_tokenizer_files(folder, pairs)
    config = marian_config(len(vocabulary), **config_changes)
    weights = random_marian_weights(config, seed)
    with open(os.path.join(folder, "config.json"), "w") as file:
        json.dump(config, file)
    save_file(weights, os.path.join(folder, "model.safetensors"))
    return config, weights


# --- The published model in NumPy (float64), Marian's ids ---


def _layer_norm(x, weights, prefix):
    mean = x.mean(-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + 1e-5) * weights[f"{prefix}.weight"] + weights[
        f"{prefix}.bias"
    ]


def _linear(x, weights, prefix):
    return x @ weights[f"{prefix}.weight"].T.astype("float64") + weights[f"{prefix}.bias"]


def _attention(query, memory, weights, prefix, heads, mask):
    """`mask` `(B, Tq, Tk)` True where a query may attend."""
    batch, length, hidden = query.shape
    head_dim = hidden // heads

    def split(x):  # (B, T, D) -> (B, heads, T, head_dim)
        return x.reshape(batch, x.shape[1], heads, head_dim).transpose(0, 2, 1, 3)

    q = split(_linear(query, weights, f"{prefix}.q_proj")) / np.sqrt(head_dim)
    k = split(_linear(memory, weights, f"{prefix}.k_proj"))
    v = split(_linear(memory, weights, f"{prefix}.v_proj"))
    scores = np.where(mask[:, None], q @ k.transpose(0, 1, 3, 2), -1e30)
    scores = np.exp(scores - scores.max(-1, keepdims=True))
    probabilities = scores / scores.sum(-1, keepdims=True)
    heads_output = (probabilities @ v).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
    return _linear(heads_output, weights, f"{prefix}.out_proj")


def _mlp(x, weights, prefix):
    hidden = _linear(x, weights, f"{prefix}.fc1")
    return _linear(hidden / (1 + np.exp(-hidden)), weights, f"{prefix}.fc2")  # swish


def _embed(ids, weights, config):
    hidden = config["d_model"]
    positions = np.arange(ids.shape[1])[:, None]
    omega = 1 / 10000 ** (np.arange(0, hidden, 2) / hidden)  # (D/2,)
    table = np.concatenate([np.sin(positions * omega), np.cos(positions * omega)], -1)
    return weights["model.shared.weight"].astype("float64")[ids] * np.sqrt(hidden) + table


def numpy_marian_logits(weights, config, input_ids, decoder_input_ids):
    """Logits `(B, T, V)` in Marian's ids; source padding is `pad_token_id`."""
    heads = config["encoder_attention_heads"]
    source_mask = input_ids != config["pad_token_id"]  # (B, S)
    x = _embed(input_ids, weights, config)
    for index in range(config["encoder_layers"]):
        prefix = f"model.encoder.layers.{index}"
        mask = np.broadcast_to(source_mask[:, None, :], (len(x), x.shape[1], x.shape[1]))
        x = _layer_norm(
            x + _attention(x, x, weights, f"{prefix}.self_attn", heads, mask),
            weights,
            f"{prefix}.self_attn_layer_norm",
        )
        x = _layer_norm(x + _mlp(x, weights, prefix), weights, f"{prefix}.final_layer_norm")
    y = _embed(decoder_input_ids, weights, config)
    length = y.shape[1]
    causal = np.broadcast_to(np.tril(np.ones((length, length), bool)), (len(y), length, length))
    cross = np.broadcast_to(source_mask[:, None, :], (len(y), length, x.shape[1]))
    for index in range(config["decoder_layers"]):
        prefix = f"model.decoder.layers.{index}"
        y = _layer_norm(
            y + _attention(y, y, weights, f"{prefix}.self_attn", heads, causal),
            weights,
            f"{prefix}.self_attn_layer_norm",
        )
        y = _layer_norm(
            y + _attention(y, x, weights, f"{prefix}.encoder_attn", heads, cross),
            weights,
            f"{prefix}.encoder_attn_layer_norm",
        )
        y = _layer_norm(y + _mlp(y, weights, prefix), weights, f"{prefix}.final_layer_norm")
    return y @ weights["model.shared.weight"].T.astype("float64") + weights["final_logits_bias"]


def numpy_greedy(weights, config, input_ids, max_new_tokens):
    """Greedy ids after the start token, as transformers' generate with `bad_words_ids=[[pad]]`."""
    pad, end = config["pad_token_id"], config["eos_token_id"]
    produced = np.full((len(input_ids), 1), config["decoder_start_token_id"])
    finished = np.zeros(len(input_ids), bool)
    for _ in range(max_new_tokens):
        logits = numpy_marian_logits(weights, config, input_ids, produced)[:, -1]
        logits[:, pad] = -np.inf
        token = np.where(finished, pad, logits.argmax(-1))
        produced = np.concatenate([produced, token[:, None]], axis=1)
        finished |= token == end
        if finished.all():
            break
    return produced[:, 1:]

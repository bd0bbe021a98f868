"""A `TransformerTranslator` from a Marian (opus-mt) checkpoint folder of Hugging Face.

A `MarianMTModel` folder (what `save_pretrained` writes: `config.json` and
`model.safetensors` or `pytorch_model.bin`) is a post-norm encoder-decoder
Transformer with token embeddings scaled by `sqrt(d_model)`, sinusoidal
positions laid out as all sines then all cosines, a swish MLP, one token
table for both languages and the output, and a bias per output token
(`final_logits_bias`). Our `TransformerTranslator` has each of these as an
option; `translator_from_marian` sets them from `config.json` and assigns
the weights, read with `safetensors` (transformers and torch are not needed).

Token ids. Marian's padding id is the last of its vocabulary, and its
decoder starts from that same padding token. Our translators take id 0 as
padding and hide it from attention, so the model's ids are Marian's
reordered (`marian_token_order`): id 0 is Marian's padding, ids 1 .. V - 1
are Marian's other tokens in their order, and one more id, V, is the start
token, with the padding token's embedding. Padding and start are never
produced: their output bias is -1e9, as transformers' `bad_words_ids` for
the padding token.
"""

import os

import numpy as np

from keras_attention.models.checkpoint_folders import assign_weights
from keras_attention.models.checkpoint_folders import attention_values
from keras_attention.models.checkpoint_folders import norm_and_dense_values
from keras_attention.models.checkpoint_folders import read_json
from keras_attention.models.checkpoint_folders import read_state_dict

# Logit bias of the ids a translation never holds (padding, start).
NEVER_PRODUCED = -1e9
# The tokenizer files of a Marian folder: a SentencePiece model per language, one vocabulary.
TOKENIZER_FILES = ("source.spm", "target.spm", "vocab.json")
# The name of the start token we add (Marian starts from its padding token).
START_TOKEN = "<start>"
# Activations of Marian configs, and ours of the same function.
_ACTIVATIONS = {"swish": "silu", "silu": "silu", "relu": "relu", "gelu": "gelu"}


def marian_token_order(config):
    """Marian's id for each of our ids: `[pad, the others in order..., pad (as start)]`.

    Args:
        config: the checkpoint's `config.json` as a dict.

    Returns:
        int NumPy array `(vocab_size + 1,)`.

    Example:

    >>> from keras_attention.models.translation.marian_checkpoints import marian_token_order
    >>> marian_token_order({"vocab_size": 5, "pad_token_id": 4}).tolist()
    [4, 0, 1, 2, 3, 4]
    """
    size, pad = config["vocab_size"], config["pad_token_id"]
    others = [index for index in range(size) if index != pad]
    return np.array([pad, *others, pad])


def marian_special_ids(config, unknown_marian_id=1):
    """Our `{"pad", "start", "end", "unknown"}` ids for a Marian config (see the module).

    Args:
        config: the checkpoint's `config.json` as a dict.
        unknown_marian_id: Marian's id of `<unk>` (its `vocab.json` says; 1 in opus-mt).
    """
    order = list(marian_token_order(config)[:-1])
    return {
        "pad": 0,
        "start": config["vocab_size"],
        "end": order.index(config["eos_token_id"]),
        "unknown": order.index(unknown_marian_id),
    }


def has_marian_tokenizers(folder):
    """Whether `folder` holds Marian's tokenizer files (`TOKENIZER_FILES`)."""
    return all(os.path.isfile(os.path.join(folder, name)) for name in TOKENIZER_FILES)


def marian_tokenizers(folder, config=None):
    """The source and target `SentencePieceTokenizer`s of a Marian folder, in our ids.

    The source one ends every sentence with the end token, as Marian's
    tokenizer does; both number pieces with `vocab.json` in the order of
    `marian_token_order`.

    Args:
        folder: the checkpoint folder, with `source.spm`, `target.spm` and
            `vocab.json`.
        config: its `config.json` as a dict (read when None).

    Returns:
        `(source_tokenizer, target_tokenizer)`.

    Raises:
        ValueError: a file is missing, or the folder has a vocabulary per
            language (`target_vocab.json`), which is not read.
    """
    from keras_attention.text.sentencepiece_tokenizer import SentencePieceTokenizer

    config = config or marian_config(folder)
    if not has_marian_tokenizers(folder):
        raise ValueError(
            f"The checkpoint folder {folder!r} must hold {', '.join(TOKENIZER_FILES)} "
            "(Marian's tokenizer, as save_pretrained writes it)"
        )
    if os.path.isfile(os.path.join(folder, "target_vocab.json")):
        raise ValueError(
            f"The checkpoint folder {folder!r} has a vocabulary per language "
            "(target_vocab.json); only one joint vocab.json is read"
        )
    vocabulary = read_json(folder, "vocab.json")  # piece -> Marian id
    piece_of = {marian_id: piece for piece, marian_id in vocabulary.items()}
    order = marian_token_order(config)
    tokens = [piece_of.get(int(marian_id), f"<unused {marian_id}>") for marian_id in order[:-1]]
    tokens.append(START_TOKEN if START_TOKEN not in piece_of.values() else START_TOKEN + "_")
    ids = marian_special_ids(config, vocabulary.get("<unk>", 1))
    special = dict(start_id=ids["start"], end_id=ids["end"], unknown_id=ids["unknown"])
    tokenizers = []
    for name, always_add_end in (("source.spm", True), ("target.spm", False)):
        with open(os.path.join(folder, name), "rb") as file:
            model_proto = file.read()
        tokenizers.append(
            SentencePieceTokenizer(model_proto, tokens, always_add_end=always_add_end, **special)
        )
    return tuple(tokenizers)


def translator_from_marian(folder, **kwargs):
    """Builds a `TransformerTranslator` holding the weights of a Marian checkpoint folder.

    Args:
        folder: the `MarianMTModel` folder (`config.json`, `model.safetensors`
            or `pytorch_model.bin`).
        **kwargs: other `TransformerTranslator` arguments (`dropout`,
            `max_source_length`, `max_target_length`, `name`); the
            architecture comes from the checkpoint.

    Returns:
        a `TransformerTranslator` of `vocab_size + 1` source and target ids
        (`marian_token_order`), holding the folder's tokenizers where it has
        them (`marian_tokenizers`), so that `generate` translates strings.

    Raises:
        ValueError: not a Marian folder, or options our model does not have
            (encoder and decoder of other depths or widths, separate
            embeddings for the two languages, an output projection of its
            own, another activation).
    """
    from keras_attention.models.translation.transformer_translator import TransformerTranslator

    config = marian_config(folder)
    size = config["vocab_size"] + 1  # and the start token
    length = config["max_position_embeddings"]
    arguments = dict(
        source_vocabulary_size=size,
        target_vocabulary_size=size,
        max_source_length=length,
        max_target_length=length,
        hidden_dim=config["d_model"],
        num_layers=config["encoder_layers"],
        num_heads=config["encoder_attention_heads"],
        intermediate_dim=config["encoder_ffn_dim"],
        dropout=config.get("dropout", 0.1),
        norm_first=False,
        position_encoding="sinusoidal_split",
        scale_embeddings=bool(config.get("scale_embedding", False)),
        activation=_ACTIVATIONS[config.get("activation_function", "swish")],
        tie_embeddings=True,
        name="marian_translator",
    )
    arguments.update(kwargs)
    model = TransformerTranslator(**arguments)
    assign_weights(model, _our_weights(read_state_dict(folder), config), folder)
    if has_marian_tokenizers(folder):
        model.attach_tokenizers(*marian_tokenizers(folder, config))
    return model


def marian_config(folder):
    """The folder's `config.json`, checked to be a Marian model our translator can be."""
    config = read_json(folder, "config.json")
    if config.get("model_type") != "marian":
        raise ValueError(
            "`preset` must be a Marian (opus-mt) checkpoint folder, whose config.json has "
            f"model_type 'marian'. Received: {folder!r} with model_type "
            f"{config.get('model_type')!r}"
        )
    pairs = (
        ("encoder_layers", "decoder_layers"),
        ("encoder_attention_heads", "decoder_attention_heads"),
        ("encoder_ffn_dim", "decoder_ffn_dim"),
    )
    for encoder, decoder in pairs:
        if config[encoder] != config[decoder]:
            raise ValueError(
                f"The checkpoint {folder!r} has {encoder}={config[encoder]} but "
                f"{decoder}={config[decoder]}; the TransformerTranslator has the same on both sides"
            )
    if not config.get("share_encoder_decoder_embeddings", True):
        raise ValueError(
            f"The checkpoint {folder!r} has separate source and target embeddings "
            "(share_encoder_decoder_embeddings=False); only shared ones are read"
        )
    if not config.get("tie_word_embeddings", True):
        raise ValueError(
            f"The checkpoint {folder!r} has an output projection of its own "
            "(tie_word_embeddings=False); only one tied to the embeddings is read"
        )
    activation = config.get("activation_function", "swish")
    if activation not in _ACTIVATIONS:
        raise ValueError(
            f"The checkpoint {folder!r} has activation_function={activation!r}; "
            f"one of {sorted(_ACTIVATIONS)} was expected"
        )
    if config.get("normalize_before", False):
        raise ValueError(f"The checkpoint {folder!r} is pre-norm; Marian models are post-norm")
    return config


# Our attention projections and the checkpoint's, and the MLP's two layers.
_PROJECTIONS = {
    "query": "q_proj",
    "key": "k_proj",
    "value": "v_proj",
    "attention_output": "out_proj",
}
_MLP = (("fc1", "feedforward_intermediate_dense"), ("fc2", "feedforward_output_dense"))
# Each stack's attentions and layer norms, as (their name, our name).
_STACKS = {
    "encoder": {
        "attention": (("self_attn", "self_attention_layer"),),
        "norms": (
            ("self_attn_layer_norm", "self_attention_layer_norm"),
            ("final_layer_norm", "feedforward_layer_norm"),
        ),
    },
    "decoder": {
        "attention": (("self_attn", "self_attention"), ("encoder_attn", "cross_attention")),
        "norms": (
            ("self_attn_layer_norm", "self_attention_layer_norm"),
            ("encoder_attn_layer_norm", "cross_attention_layer_norm"),
            ("final_layer_norm", "feedforward_layer_norm"),
        ),
    },
}


def _our_weights(weights, config):
    """`{our variable path: value}` from a Marian state dict (PyTorch layouts)."""
    hidden, heads = config["d_model"], config["encoder_attention_heads"]
    order = marian_token_order(config)
    table = next(
        weights[name]
        for name in ("model.shared.weight", "model.encoder.embed_tokens.weight", "lm_head.weight")
        if name in weights
    )  # (V, D)
    bias = weights.get("final_logits_bias", np.zeros((1, config["vocab_size"]), "float32"))[0]
    our_bias = bias[order].copy()
    our_bias[[0, len(order) - 1]] = NEVER_PRODUCED  # padding and start
    values = {
        "shared_embedding/token_embedding/embeddings": table[order],
        "shared_embedding/logits_bias": our_bias,
    }
    for side, stack in _STACKS.items():
        for index in range(config[f"{side}_layers"]):
            theirs, ours = f"model.{side}.layers.{index}", f"{side}_block_{index}"
            for their_attention, our_attention in stack["attention"]:
                prefix = f"{theirs}.{their_attention}"
                projections = {name: f"{prefix}.{proj}" for name, proj in _PROJECTIONS.items()}
                values.update(
                    attention_values(weights, f"{ours}/{our_attention}", projections, hidden, heads)
                )
            norms = [(f"{theirs}.{their}", f"{ours}/{our}") for their, our in stack["norms"]]
            denses = [(f"{theirs}.{their}", f"{ours}/{our}") for their, our in _MLP]
            values.update(norm_and_dense_values(weights, norms, denses))
    return values

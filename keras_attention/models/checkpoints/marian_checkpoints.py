"""A Transformer translator from a Marian (opus-mt) checkpoint folder of Hugging Face.

A `MarianMTModel` folder (what `save_pretrained` writes: `config.json` and
`model.safetensors` or `pytorch_model.bin`) is a post-norm encoder-decoder
Transformer with token embeddings scaled by `sqrt(d_model)`, sinusoidal
positions laid out as all sines then all cosines, a swish MLP, one token
table for both languages and the output, and a bias per output token
(`final_logits_bias`). Our `TransformerTranslator` has each of these as an
option; `translator_from_marian` sets them from `config.json` and assigns
the weights, read with `safetensors` (transformers and torch are not needed),
once the folder is checked against itself (`checkpoint_consistency`: the
tensors against the config, `vocab.json` against the config's ids).

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

from keras_attention.models.checkpoints.checkpoint_consistency import ConfigSizes
from keras_attention.models.checkpoints.checkpoint_consistency import NumberedParts
from keras_attention.models.checkpoints.checkpoint_consistency import TensorLayout
from keras_attention.models.checkpoints.checkpoint_consistency import check_tensors
from keras_attention.models.checkpoints.checkpoint_folders import assign_weights
from keras_attention.models.checkpoints.checkpoint_folders import attention_values
from keras_attention.models.checkpoints.checkpoint_folders import model_from_config
from keras_attention.models.checkpoints.checkpoint_folders import norm_and_dense_values
from keras_attention.models.checkpoints.checkpoint_folders import read_config_of_kind
from keras_attention.models.checkpoints.checkpoint_folders import read_json
from keras_attention.models.checkpoints.checkpoint_folders import read_state_dict

# Logit bias of the ids a translation never holds (padding, start).
NEVER_PRODUCED = -1e9
# The tokenizer files of a Marian folder: a SentencePiece model per language, one vocabulary.
TOKENIZER_FILES = ("source.spm", "target.spm", "vocab.json")
# The name of the start token we add (Marian starts from its padding token).
START_TOKEN = "<start>"
# The names under which a folder may hold the one token table (tied copies of each other).
_TOKEN_TABLES = (
    "model.shared.weight",
    "model.encoder.embed_tokens.weight",
    "model.decoder.embed_tokens.weight",
    "lm_head.weight",
)
# Activations of Marian configs, and ours of the same function.
_ACTIVATIONS = {"swish": "silu", "silu": "silu", "relu": "relu", "gelu": "gelu"}
# Our constructor arguments and the config keys (encoder and decoder have the same sizes).
_ARGUMENTS = {
    "hidden_dim": "d_model",
    "num_layers": "encoder_layers",
    "num_heads": "encoder_attention_heads",
    "intermediate_dim": "encoder_ffn_dim",
    "dropout": ("dropout", 0.1),
}


def marian_token_order(config):
    """Marian's id for each of our ids: `[pad, the others in order..., pad (as start)]`.

    Args:
        config: the checkpoint's `config.json` as a dict.

    Returns:
        int NumPy array `(vocab_size + 1,)`.

    Example:

    >>> from keras_attention.models.checkpoints.marian_checkpoints import marian_token_order
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
    return not missing_tokenizer_files(folder)


def missing_tokenizer_files(folder):
    """The names of `TOKENIZER_FILES` that `folder` lacks."""
    return [name for name in TOKENIZER_FILES if not os.path.isfile(os.path.join(folder, name))]


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
        ValueError: naming the file: one is missing or damaged, `vocab.json`
            disagrees with the config's ids, or the folder has a vocabulary
            per language (`target_vocab.json`), which is not read.
    """
    from keras_attention.text.sentencepiece_model import parse_model_proto
    from keras_attention.text.sentencepiece_tokenizer import SentencePieceTokenizer

    config = config or marian_config(folder)
    _require_tokenizer_files(folder, missing_tokenizer_files(folder))
    if os.path.isfile(os.path.join(folder, "target_vocab.json")):
        raise ValueError(
            f"The checkpoint folder {folder!r} has a vocabulary per language "
            "(target_vocab.json); only one joint vocab.json is read"
        )
    vocabulary = _marian_vocabulary(folder, config)  # piece -> Marian id
    piece_of = {marian_id: piece for piece, marian_id in vocabulary.items()}
    order = marian_token_order(config)
    tokens = [piece_of.get(int(marian_id), f"<unused {marian_id}>") for marian_id in order[:-1]]
    tokens.append(START_TOKEN if START_TOKEN not in piece_of.values() else START_TOKEN + "_")
    ids = marian_special_ids(config, vocabulary["<unk>"])
    special = dict(start_id=ids["start"], end_id=ids["end"], unknown_id=ids["unknown"])
    tokenizers = []
    for name, always_add_end in (("source.spm", True), ("target.spm", False)):
        path = os.path.join(folder, name)
        with open(path, "rb") as file:
            model_proto = file.read()
        parse_model_proto(model_proto, path)  # a damaged file: an error naming it
        tokenizers.append(
            SentencePieceTokenizer(model_proto, tokens, always_add_end=always_add_end, **special)
        )
    return tuple(tokenizers)


def _require_tokenizer_files(folder, missing):
    if missing:
        raise ValueError(
            f"{os.path.join(folder, missing[0])}: missing; Marian's tokenizer is "
            f"{', '.join(TOKENIZER_FILES)} together (as save_pretrained writes it)"
        )


def _marian_vocabulary(folder, config):
    """`vocab.json` (piece -> Marian id), checked against the config's ids."""
    path = os.path.join(folder, "vocab.json")
    vocabulary = read_json(folder, "vocab.json")
    size = config["vocab_size"]
    for piece, marian_id in vocabulary.items():
        if (
            isinstance(marian_id, bool)
            or not isinstance(marian_id, int)
            or not 0 <= marian_id < size
        ):
            raise ValueError(
                f"{path}: {piece!r} has the id {marian_id!r}, but ids are whole numbers below "
                f"config.json's vocab_size {size}"
            )
    if "<unk>" not in vocabulary:  # as transformers' MarianTokenizer, which needs it
        raise ValueError(f"{path}: no '<unk>' piece, which Marian's tokenizer needs")
    # The model's special ids must be the tokenizer's, or every sentence ends elsewhere.
    for piece, key in (("<pad>", "pad_token_id"), ("</s>", "eos_token_id")):
        if piece in vocabulary and vocabulary[piece] != config[key]:
            raise ValueError(
                f"{path}: {piece!r} has the id {vocabulary[piece]} but config.json's {key} "
                f"is {config[key]}"
            )
    return vocabulary


def translator_from_marian(
    folder, model_class, *, ignore_unexpected_weights=False, require_tokenizers=False, **kwargs
):
    """Builds a Transformer translator holding the weights of a Marian checkpoint folder.

    The folder is checked against itself first (`checkpoint_consistency`);
    a folder with some of the tokenizer files but not all is refused.

    Args:
        folder: the `MarianMTModel` folder (`config.json`, `model.safetensors`
            or `pytorch_model.bin`).
        model_class: our translator class (`TransformerTranslator`).
        ignore_unexpected_weights: read a folder holding tensors its config
            does not account for, without them (by default they stop it).
        require_tokenizers: refuse a folder without its tokenizer files
            (what serves strings needs them); by default the weights alone
            are read.
        **kwargs: other `TransformerTranslator` arguments (`dropout`,
            `max_source_length`, `max_target_length`, `name`); the
            architecture comes from the checkpoint.

    Returns:
        a `model_class` of `vocab_size + 1` source and target ids
        (`marian_token_order`), holding the folder's tokenizers where it has
        them (`marian_tokenizers`), so that `generate` translates strings.

    Raises:
        ValueError: not a Marian folder, options our model does not have
            (encoder and decoder of other depths or widths, separate
            embeddings for the two languages, an output projection of its
            own, another activation), or a folder that disagrees with itself.
    """
    config = marian_config(folder)
    missing = missing_tokenizer_files(folder)
    if require_tokenizers and len(missing) == len(TOKENIZER_FILES):
        raise ValueError(
            f"`preset` must hold the translator's tokenizer ({', '.join(TOKENIZER_FILES)}) to "
            f"serve strings. Received: {folder!r}, which lacks {', '.join(missing)}"
        )
    if len(missing) < len(TOKENIZER_FILES):  # all missing: a folder of weights alone
        _require_tokenizer_files(folder, missing)
    weights = read_state_dict(folder)
    check_tensors(
        folder, weights, _tensor_layout(config, folder, weights), ignore_unexpected_weights
    )
    tokenizers = marian_tokenizers(folder, config) if not missing else None
    size = config["vocab_size"] + 1  # and the start token
    length = config["max_position_embeddings"]
    model = model_from_config(
        model_class,
        config,
        _ARGUMENTS,
        kwargs,
        source_vocabulary_size=size,
        target_vocabulary_size=size,
        max_source_length=length,
        max_target_length=length,
        norm_first=False,
        position_encoding="sinusoidal_split",
        scale_embeddings=bool(config.get("scale_embedding", False)),
        activation=_ACTIVATIONS[config.get("activation_function", "swish")],
        tie_embeddings=True,
        name="marian_translator",
    )
    assign_weights(model, _our_weights(weights, config), folder)
    if tokenizers:
        model.attach_tokenizers(*tokenizers)
    return model


def marian_config(folder):
    """The folder's `config.json`, checked to be a Marian model our translator can be."""
    config = read_config_of_kind(
        folder, "model_type", "marian", "`preset` must be a Marian (opus-mt) checkpoint folder"
    )
    sizes = ConfigSizes(folder, config)
    for key in ("pad_token_id", "eos_token_id"):
        value = config.get(key)
        if (
            isinstance(value, bool)
            or not isinstance(value, int)
            or not 0 <= value < sizes("vocab_size")
        ):
            raise ValueError(
                f"{sizes.path}: {key} is {value!r} but vocab_size is {config['vocab_size']}: "
                "an id below it was expected"
            )
    for key in ("encoder_attention_heads", "decoder_attention_heads"):
        sizes.divisible(sizes("d_model"), sizes(key))
    pairs = (
        ("encoder_layers", "decoder_layers"),
        ("encoder_attention_heads", "decoder_attention_heads"),
        ("encoder_ffn_dim", "decoder_ffn_dim"),
    )
    for encoder, decoder in pairs:
        if sizes(encoder) != sizes(decoder):
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


def _tensor_layout(config, folder, tensors):
    """The tensors a Marian config implies (transformers' names), as a `TensorLayout`."""
    sizes = ConfigSizes(folder, config)
    hidden, vocabulary = sizes("d_model"), sizes("vocab_size")
    positions = sizes("max_position_embeddings")
    required, numbered = {}, []
    # One token table, under any of its tied names (the first present is read).
    optional = dict.fromkeys(_TOKEN_TABLES, (vocabulary, hidden))
    if not any(name in tensors for name in _TOKEN_TABLES):
        required[_TOKEN_TABLES[0]] = optional.pop(_TOKEN_TABLES[0])
    optional["final_logits_bias"] = (1, vocabulary)
    for side in ("encoder", "decoder"):
        # Sinusoids that older transformers saved; ours are computed.
        optional[f"model.{side}.embed_positions.weight"] = (positions, hidden)
        units = sizes(f"{side}_ffn_dim")
        shapes = {
            **{
                f"{attention}.{projection}": (hidden, hidden)
                for attention, _ in _STACKS[side]["attention"]
                for projection in _PROJECTIONS.values()
            },
            **{norm: (hidden,) for norm, _ in _STACKS[side]["norms"]},
            "fc1": (units, hidden),  # Linear weights are (out, in)
            "fc2": (hidden, units),
        }
        layers = sizes(f"{side}_layers")
        numbered.append(NumberedParts(layers, f"model.{side}.layers.{{}}.", f"{side} layers"))
        for index in range(layers):
            for part, shape in shapes.items():
                required[f"model.{side}.layers.{index}.{part}.weight"] = shape
                required[f"model.{side}.layers.{index}.{part}.bias"] = shape[:1]
    return TensorLayout(required, optional, tuple(numbered))


def _our_weights(weights, config):
    """`{our variable path: value}` from a Marian state dict (PyTorch layouts)."""
    hidden, heads = config["d_model"], config["encoder_attention_heads"]
    order = marian_token_order(config)
    table = next(weights[name] for name in _TOKEN_TABLES if name in weights)  # (V, D)
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

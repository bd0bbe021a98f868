"""A Swin Transformer from a pretrained Hugging Face Swin checkpoint folder.

`SwinForImageClassification` and `SwinModel` folders (as `save_pretrained`
writes them) follow the Swin paper's layout as our Swin Transformer does:
patch embedding and its norm, stages of window attention with a relative
position bias table per block, patch merging of the four interleaved
sub-grids in the same order, a final norm and average pooling. The
query, key and value projections, separate in the checkpoint, become our
one fused `qkv` projection. The weights are checked against the config
first (`checkpoint_consistency`).
"""

import numpy as np

from keras_attention.models.checkpoints.checkpoint_consistency import NumberedParts
from keras_attention.models.checkpoints.checkpoint_consistency import Size
from keras_attention.models.checkpoints.checkpoint_consistency import TensorLayout
from keras_attention.models.checkpoints.checkpoint_folders import norm_and_dense_values
from keras_attention.models.checkpoints.hf_image_checkpoints import CheckpointFamily
from keras_attention.models.checkpoints.hf_image_checkpoints import checkpoint_input

# Config options of a Hugging Face Swin, and the value our SwinTransformer has.
_OPTIONS = {"hidden_act": "gelu", "qkv_bias": True, "use_absolute_embeddings": False}
# The checkpoint's block parts -> ours, for weights that only need a transpose (Linear) or none.
_BLOCK_NORMS = {"layernorm_before": "attention_norm", "layernorm_after": "feedforward_norm"}
_BLOCK_DENSES = {"intermediate.dense": "intermediate_dense", "output.dense": "output_dense"}
# The names the checkpoint files use (transformers' in-memory names may differ).
_QUERY_KEY_VALUE = ("query", "key", "value")


def swin_checkpoint_input(folder):
    """`(patch_size, (height, width))` a Hugging Face Swin folder's model reads its images at.

    Raises:
        ValueError: the folder is not a Hugging Face Swin checkpoint.
    """
    return checkpoint_input(folder, "swin", "SwinTransformer")


# Our constructor arguments and the config keys of a Hugging Face Swin, beyond the shared ones.
_ARGUMENTS = {
    "embed_dim": "embed_dim",
    "depths": "depths",
    "num_heads": "num_heads",
    "window_size": "window_size",
    "mlp_ratio": ("mlp_ratio", 4.0),
    "layer_norm_epsilon": ("layer_norm_eps", 1e-5),
    "stochastic_depth_rate": ("drop_path_rate", 0.1),
}


def _tensor_layout(sizes, prefix):
    """The tensors a Hugging Face Swin config implies, as the folder names them.

    Args:
        sizes: the config's `ConfigSizes`.
        prefix: "swin." in a classifier folder, "" in a backbone (`SwinModel`) one.
    """
    embed, patch, window = sizes("embed_dim"), sizes("patch_size"), sizes("window_size")
    stages, heads_per_stage = sizes.length("depths"), sizes.length("num_heads")
    if stages != heads_per_stage:
        raise ValueError(f"{sizes.path}: {stages.reason} but {heads_per_stage.reason}")
    mlp_ratio = sizes.config.get("mlp_ratio", 4.0)
    embeddings = f"{prefix}embeddings."
    required = {
        f"{embeddings}patch_embeddings.projection.weight": (
            embed,
            sizes("num_channels", 3),
            patch,
            patch,
        ),
        f"{embeddings}patch_embeddings.projection.bias": (embed,),
        f"{embeddings}norm.weight": (embed,),
        f"{embeddings}norm.bias": (embed,),
    }
    optional = {}
    numbered = [NumberedParts(stages, f"{prefix}encoder.layers.{{}}.", "stages")]
    table = Size((2 * window - 1) ** 2, f"{window.reason}: {(2 * window - 1) ** 2} offsets")
    window_tokens = Size(window * window, window.reason)
    for stage in range(stages):
        width = embed * 2**stage
        width = Size(width, embed.reason + (f" (stage {stage}: {width} channels)" if stage else ""))
        heads = sizes.item("num_heads", stage)
        sizes.divisible(width, heads)
        units = int(mlp_ratio * width)
        units = Size(units, f"mlp_ratio is {mlp_ratio} (stage {stage}: {units} units)")
        depth = sizes.item("depths", stage)
        numbered.append(
            NumberedParts(depth, f"{prefix}encoder.layers.{stage}.blocks.{{}}.", "blocks")
        )
        shapes = {
            **{f"attention.self.{name}": (width, width) for name in _QUERY_KEY_VALUE},
            "attention.output.dense": (width, width),
            "layernorm_before": (width,),
            "layernorm_after": (width,),
            "intermediate.dense": (units, width),  # Linear weights are (out, in)
            "output.dense": (width, units),
        }
        for index in range(depth):
            block = f"{prefix}encoder.layers.{stage}.blocks.{index}."
            for part, shape in shapes.items():
                required[f"{block}{part}.weight"] = shape
                required[f"{block}{part}.bias"] = shape[:1]
            required[f"{block}attention.self.relative_position_bias_table"] = (table, heads)
            # A buffer transformers saves (older versions) and we recompute.
            optional[f"{block}attention.self.relative_position_index"] = (
                window_tokens,
                window_tokens,
            )
        if stage + 1 < stages:
            merging = f"{prefix}encoder.layers.{stage}.downsample."
            merged = Size(4 * width, width.reason)  # the four interleaved sub-grids, side by side
            required[f"{merging}reduction.weight"] = (Size(2 * width, width.reason), merged)
            required[f"{merging}norm.weight"] = required[f"{merging}norm.bias"] = (merged,)
    required[f"{prefix}layernorm.weight"] = required[f"{prefix}layernorm.bias"] = (width,)
    return TensorLayout(required, optional, tuple(numbered))


def _our_weights(weights, config, model):
    """`{our variable path: value}` from the checkpoint's `weights` (PyTorch layouts).

    `model` is not read: Swin's tables have the window's size, not the image's.
    """
    del model
    values = {
        # Conv2d (C_out, C_in, P, P) -> Keras (P, P, C_in, C_out)
        "patch_embedding/projection/kernel": weights[
            "embeddings.patch_embeddings.projection.weight"
        ].transpose(2, 3, 1, 0),
        "patch_embedding/projection/bias": weights["embeddings.patch_embeddings.projection.bias"],
        "patch_norm/gamma": weights["embeddings.norm.weight"],
        "patch_norm/beta": weights["embeddings.norm.bias"],
        "final_norm/gamma": weights["layernorm.weight"],
        "final_norm/beta": weights["layernorm.bias"],
    }
    for stage, depth in enumerate(config["depths"]):
        for index in range(depth):
            theirs = f"encoder.layers.{stage}.blocks.{index}."
            ours = f"stage_{stage}_block_{index}/"
            attention = theirs + "attention.self."
            values[ours + "window_attention/qkv/kernel"] = np.concatenate(
                [weights[f"{attention}{name}.weight"].T for name in _QUERY_KEY_VALUE], axis=1
            )  # (C, 3C): queries, keys, values, each head after head
            values[ours + "window_attention/qkv/bias"] = np.concatenate(
                [weights[f"{attention}{name}.bias"] for name in _QUERY_KEY_VALUE]
            )
            values[ours + "window_attention/relative_position_bias"] = weights[
                attention + "relative_position_bias_table"
            ]
            output = theirs + "attention.output.dense."
            values[ours + "window_attention/output_projection/kernel"] = weights[
                output + "weight"
            ].T
            values[ours + "window_attention/output_projection/bias"] = weights[output + "bias"]
            values.update(
                norm_and_dense_values(
                    weights,
                    norms=[(theirs + their, ours + our) for their, our in _BLOCK_NORMS.items()],
                    denses=[(theirs + their, ours + our) for their, our in _BLOCK_DENSES.items()],
                )
            )
        if stage + 1 < len(config["depths"]):
            merging, downsample = (
                f"patch_merging_{stage + 1}/",
                f"encoder.layers.{stage}.downsample.",
            )
            values[merging + "reduction/kernel"] = weights[downsample + "reduction.weight"].T
            values[merging + "norm/gamma"] = weights[downsample + "norm.weight"]
            values[merging + "norm/beta"] = weights[downsample + "norm.bias"]
    return values


# How `hf_image_checkpoints.classifier_from_checkpoint` reads a Hugging Face Swin folder.
HUGGINGFACE_SWIN = CheckpointFamily("swin", _OPTIONS, _ARGUMENTS, _tensor_layout, _our_weights)

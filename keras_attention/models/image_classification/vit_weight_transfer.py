"""Moving a trained Vision Transformer's weights to one built at another image size."""

from keras import ops

from keras_attention.layers.position.position_grid import resize_position_grid
from keras_attention.models.image_classification.vision_transformer import check_vision_transformer


def _weighted_parts(model, include_head):
    """`(part name, layer)` for every part of `model` that holds weights, input first."""
    parts = [("patch_embedding", model.patch_embedding)]
    if model.class_token is not None:
        parts.append(("class_token", model.class_token))
    parts.append(("position_embedding", model.position_embedding))
    parts += [(f"encoder_blocks[{i}]", block) for i, block in enumerate(model.encoder_blocks)]
    parts.append(("final_norm", model.final_norm))
    if include_head:
        parts.append(("head", model.head))
    return parts


def _resized_weight(source_weight, target_weight, part, is_position_table):
    """`source_weight` as a value for `target_weight`, resizing a position grid."""
    source_value = ops.convert_to_numpy(source_weight)
    target_shape = tuple(target_weight.shape)
    if source_value.shape == target_shape:
        return source_value
    if is_position_table and source_value.ndim == 3 and len(target_shape) == 3:
        if source_value.shape[-1] == target_shape[-1]:
            return ops.convert_to_numpy(resize_position_grid(source_value, target_shape[:2]))
    raise ValueError(
        "The two models must have the same architecture apart from `image_size` (and the "
        f"head with include_head=False). Received: {part} with weight "
        f"{source_weight.path!r} of shape {source_value.shape} in `source` and "
        f"{target_shape} in `target`"
    )


def copy_vision_transformer_weights(source, target, include_head=True):
    """Copies a Vision Transformer's weights into one built at another size.

    Build `target` with the same architecture as `source` but any
    `image_size` (and, with `include_head=False`, any `num_classes`). Every
    weight is copied as is, except the learned position table, which is
    bilinearly resized to the new patch grid, as the ViT paper does to
    fine-tune at a higher resolution.

    Args:
        source: the trained `VisionTransformer`.
        target: the `VisionTransformer` to fill in; changed in place.
        include_head: also copy the classification head; False keeps
            `target`'s freshly initialised head (new classes).

    Returns:
        `target`.

    Example:

    >>> from keras_attention.models import vision_transformer
    >>> from keras_attention.models import copy_vision_transformer_weights
    >>> config = dict(patch_size=4, num_classes=2, hidden_dim=8, num_layers=1,
    ...     num_heads=2, mlp_dim=8)
    >>> small = vision_transformer(image_size=8, **config)
    >>> large = copy_vision_transformer_weights(small, vision_transformer(image_size=16, **config))
    >>> tuple(large.position_embedding.grid_embeddings.shape)
    (4, 4, 8)
    """
    check_vision_transformer(source, "source")
    check_vision_transformer(target, "target")
    source_parts = dict(_weighted_parts(source, include_head))
    for part, layer in _weighted_parts(target, include_head):
        source_layer = source_parts.get(part)
        if source_layer is None or len(source_layer.weights) != len(layer.weights):
            raise ValueError(
                "The two models must have the same layers. "
                f"Received: {part} of `target` "
                + ("is missing from `source`" if source_layer is None else "differs in `source`")
            )
        is_position_table = layer is target.position_embedding
        layer.set_weights(
            [
                _resized_weight(source_weight, target_weight, part, is_position_table)
                for source_weight, target_weight in zip(source_layer.weights, layer.weights)
            ]
        )
    if len(source_parts) != len(_weighted_parts(target, include_head)):
        raise ValueError(
            "The two models must have the same layers. Received: `source` with "
            f"{len(source.encoder_blocks)} encoder blocks and a class token: "
            f"{source.class_token is not None}; `target` with {len(target.encoder_blocks)} "
            f"and {target.class_token is not None}"
        )
    return target

"""Where a Vision Transformer looks: a confusion matrix, attention maps and one HTML page.

The functions take a trained classifier and test images with their labels,
and write figures under a folder. A ViT (anything with `token_layout`,
`attention_maps(images)` and `classify(images, return_attention=True)`, as
`keras_attention.models.VisionTransformer` has) gets attention rollout; a
windowed model (with `window_layouts` instead of `token_layout`, as
`keras_attention.models.SwinTransformer` has) gets its first-stage window
attention put back on the image.
"""

import os

import numpy as np

from keras_attention.visualization.confusion import plot_confusion_matrix
from keras_attention.visualization.explorer.image_classification import write_vit_explorer
from keras_attention.visualization.figures import save_figure
from keras_attention.visualization.rollout import attention_rollout
from keras_attention.visualization.rollout import plot_rollout
from keras_attention.visualization.rollout import rollout_to_image_map
from keras_attention.visualization.window_maps import window_attention_map
from keras_attention.visualization.window_maps import window_attention_matrices

# The overlay panel says which map it shows.
_MAP_TITLES = {
    "rollout": "attention rollout",
    "window_attention": "attention received in its window",
}


def _image_maps(model, images):
    """`(B, rows, cols)` maps of where the model looks, and the figure's file prefix."""
    layouts = getattr(model, "window_layouts", None)
    if layouts is not None:
        return window_attention_map(model.attention_maps(images), layouts), "window_attention"
    grid_size, has_class_token = model.token_layout
    rollouts = attention_rollout(model.attention_maps(images))  # (B, T, T)
    return rollout_to_image_map(rollouts, grid_size, has_class_token), "rollout"


def draw_vit_figures(model, output_dir, labels, predictions, images, class_names):
    """Saves `confusion_matrix.png` and one attention map per image under `output_dir`.

    The maps are `rollout_<i>.png` for a ViT, `window_attention_<i>.png`
    (the mean attention each first-stage token receives in its window) for
    a model with `window_layouts`.

    Args:
        model: the trained Vision Transformer.
        output_dir: the folder of the figures.
        labels: `(N,)` true class indices of the test set.
        predictions: `(N,)` predicted class indices.
        images: `(B, H, W, C)` the first test images (B <= N), whose
            attention is drawn.
        class_names: list of the class names.

    Returns:
        list of the paths written, as str.
    """
    paths = [
        save_figure(
            plot_confusion_matrix(labels, predictions, class_names, title="test set"),
            os.path.join(output_dir, "confusion_matrix.png"),
        )
    ]
    maps, prefix = _image_maps(model, images)  # (B, rows, cols)
    for index, (image, patch_map) in enumerate(zip(images, maps)):
        title = f"true {class_names[labels[index]]}, predicted {class_names[predictions[index]]}"
        figure = plot_rollout(image, patch_map, title=title, map_title=_MAP_TITLES[prefix])
        paths.append(save_figure(figure, os.path.join(output_dir, f"{prefix}_{index}.png")))
    return [str(path) for path in paths]


def write_vit_attention_explorer(model, path, images, labels, class_names):
    """The images' attention, by layer and head, as one HTML page at `path`.

    Args:
        model: the trained Vision Transformer.
        path: the HTML file to write.
        images: `(B, H, W, C)` images.
        labels: their true class indices (at least B).
        class_names: list of the class names.

    Returns:
        `path`.
    """
    predicted, probabilities, maps = model.classify(images, return_attention=True)
    layouts = getattr(model, "window_layouts", None)
    if layouts is not None:
        # The first-stage blocks' windows as full token-to-token matrices.
        grid_size, has_class_token = tuple(layouts[0][0]), False
        tokens = grid_size[0] * grid_size[1]
        maps = [
            window_attention_matrices(block_maps, positions, tokens)
            for block_maps, (size, positions) in zip(maps, layouts)
            if tuple(size) == grid_size
        ]
    else:
        grid_size, has_class_token = model.token_layout
    examples = [
        {
            "image": image,
            "label": f"true {class_names[labels[index]]}, predicted {predicted[index]}",
            "probability": float(probabilities[index].max()),
            "attention": np.stack([layer[index] for layer in maps]),  # (layers, heads, T, T)
            "grid_size": grid_size,
            "has_class_token": has_class_token,
        }
        for index, image in enumerate(images)
    ]
    write_vit_explorer(path, examples, title="Vision Transformer attention")
    return path

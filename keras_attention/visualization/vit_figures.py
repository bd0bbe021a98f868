"""Where a Vision Transformer looks: a confusion matrix, rollout maps and one HTML page.

The functions take a trained ViT (anything with `token_layout`,
`attention_maps(images)` and `classify(images, return_attention=True)`, as
`keras_attention.models.VisionTransformer` has) and test images with their
labels, and write figures under a folder.
"""

import os

import numpy as np

from keras_attention.visualization.confusion import plot_confusion_matrix
from keras_attention.visualization.explorer.vit import write_vit_explorer
from keras_attention.visualization.figures import save_figure
from keras_attention.visualization.rollout import attention_rollout
from keras_attention.visualization.rollout import plot_rollout
from keras_attention.visualization.rollout import rollout_to_image_map


def draw_vit_figures(model, output_dir, labels, predictions, images, class_names):
    """Saves `confusion_matrix.png` and `rollout_<i>.png` (one per image) under `output_dir`.

    Args:
        model: the trained Vision Transformer.
        output_dir: the folder of the figures.
        labels: `(N,)` true class indices of the test set.
        predictions: `(N,)` predicted class indices.
        images: `(B, H, W, C)` the first test images (B <= N), whose
            attention rollout is drawn.
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
    grid_size, has_class_token = model.token_layout
    rollouts = attention_rollout(model.attention_maps(images))  # (B, T, T)
    maps = rollout_to_image_map(rollouts, grid_size, has_class_token)  # (B, rows, cols)
    for index, (image, patch_map) in enumerate(zip(images, maps)):
        title = f"true {class_names[labels[index]]}, predicted {class_names[predictions[index]]}"
        paths.append(
            save_figure(
                plot_rollout(image, patch_map, title=title),
                os.path.join(output_dir, f"rollout_{index}.png"),
            )
        )
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

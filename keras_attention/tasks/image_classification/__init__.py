"""Image classification: the labelled images, recipe, evaluation and figures of `train_vit.py`.

For the Vision Transformer and the Swin Transformer. Modules: `flags` (the
command line), `model_from_flags`, `recipe` and `recipe_from_flags`
(patch size, image shape, batch size, epochs derived from the data),
`training_data`, `sources` (built-in shapes, class folders, `train/` `val/`
`test/` roots, `hf:` and tfds), `image_folders`, `builtin_shapes`,
`batches`, `evaluation`, `figures`.

>>> from keras_attention.tasks import image_classification
>>> image_classification.vit_input_shape(32)[0]
(32, 32)
"""

from keras_attention.tasks import lazy_exports

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "load_image_classification_dataset": "sources",
        "ImageClassificationData": "sources",
        "generate_shape_classification": "builtin_shapes",
        "shape_classification_class_names": "builtin_shapes",
        "shape_classification_splits": "builtin_shapes",
        "make_classification_batches": "batches",
        "vit_input_shape": "recipe",
        "vit_training_recipe": "recipe",
        "ViTTrainingRecipe": "recipe",
        "evaluate_classifier": "evaluation",
        "class_prior_loss": "evaluation",
    },
)

"""Captioning: the image-caption data, recipe, evaluation and figures of `train_captioning.py`.

Modules: `flags` (the command line and each captioner's defaults),
`training_data` (the splits from the flags), `sources` and `layouts/`
(the built-in scenes, `captions.tsv`, COCO, Karpathy splits, Flickr8k,
Kaggle's `captions.txt`, `csv:` and tfds), `builtin_scenes`,
`builtin_objects`, `caption_files`, `image_size`, `vocabulary`, `batches`,
`recipe`, `evaluation`, `attention_on_objects` (how much attention falls on
the object a word names) and its report, `figures`.

>>> from keras_attention.tasks import captioning
>>> sorted(captioning.CaptioningTrainingRecipe.__dataclass_fields__)[:2]
['batch_size', 'earliest_decay_step']
"""

from keras_attention.tasks import lazy_exports

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "load_caption_dataset": "sources",
        "generate_shape_scenes": "builtin_scenes",
        "shape_scene_splits": "builtin_scenes",
        "builtin_test_objects": "builtin_objects",
        "native_caption_image_size": "image_size",
        "train_caption_vocabulary": "vocabulary",
        "caption_length": "vocabulary",
        "caption_token_ids": "vocabulary",
        "fits_in_memory": "batches",
        "training_and_validation_batches": "batches",
        "captioning_training_recipe": "recipe",
        "derived_image_size": "recipe",
        "CaptioningTrainingRecipe": "recipe",
        "caption_with_model": "evaluation",
        "caption_scores": "evaluation",
        "object_attention_fractions": "attention_on_objects",
        "attention_on_objects_summary": "attention_on_objects",
        "attention_on_mask": "attention_on_objects",
        "mask_coverage_on_grid": "attention_on_objects",
        "attention_peak_in_box": "attention_on_objects",
        "attention_on_objects_report": "attention_on_objects_report",
        "draw_caption_samples": "figures",
    },
)

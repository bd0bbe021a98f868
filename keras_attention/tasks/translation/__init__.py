"""Translation: the sentence pairs, recipe, batches, evaluation and figures of `train_nmt.py`.

Modules: `flags` (the command line), `model_from_flags`, `recipe` and
`recipe_from_flags` (training choices derived from the data),
`training_data` (vocabularies, recipe and batches from the flags),
`sources` (`builtin`, `tsv:`, `parallel:`, `hf:` and tfds pairs),
`builtin_corpus`, `parallel_text`, `batches`, `evaluation`, `figures`.

>>> from keras_attention.tasks import translation
>>> translation.translation_training_recipe(2000, 14, 11).max_length
16
"""

from keras_attention.tasks import lazy_exports

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "builtin_translation_pairs": "builtin_corpus",
        "builtin_translation_splits": "builtin_corpus",
        "split_translation_pairs": "builtin_corpus",
        "load_translation_pairs": "sources",
        "read_tsv_pairs": "sources",
        "read_parallel_pairs": "parallel_text",
        "make_translation_batches": "batches",
        "translation_training_recipe": "recipe",
        "TranslationTrainingRecipe": "recipe",
        "score_translations": "evaluation",
        "translate_pairs": "evaluation",
    },
)

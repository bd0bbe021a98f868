"""Captioning a split once per image, and scoring the captions against their references."""

import numpy as np
import pytest
import tensorflow as tf

from keras_attention.tasks.captioning.evaluation import bleu_references
from keras_attention.tasks.captioning.evaluation import caption_scores
from keras_attention.tasks.captioning.evaluation import caption_split
from keras_attention.tasks.captioning.evaluation import caption_with_model
from keras_attention.text.scores import corpus_bleu


def test_references_of_repeated_images_are_grouped():
    image_a, image_b = np.zeros((4, 4, 3), "float32"), np.ones((4, 4, 3), "float32")
    pairs = tf.data.Dataset.from_tensor_slices(
        (np.stack([image_a, image_a, image_b]), ["a red circle", "a circle", "a square"])
    )
    seen = []

    def caption(images):
        seen.append(images.shape[0])
        count = images.shape[0]
        return ["x"] * count, np.ones((count, 3, 2, 2), "float32"), [["x"]] * count

    images, references, hypotheses, outputs = caption_split(caption, pairs, None)
    assert references == [["a red circle", "a circle"], ["a square"]] and seen == [2]
    assert hypotheses == ["x", "x"]
    np.testing.assert_array_equal(images[1], image_b)
    assert outputs["attention"].shape == (2, 3, 2, 2) and outputs["words"] == [["x"], ["x"]]
    assert bleu_references(references) == [
        ["a red circle", "a circle"],
        ["a square", "a square"],
    ]
    # A limit counts pairs (captions), not images.
    _, references, _, _ = caption_split(caption, pairs, 1)
    assert references == [["a red circle"]]


def test_images_are_captioned_in_batches_in_order():
    images = np.arange(7, dtype="float32")[:, None, None, None] * np.ones((1, 2, 2, 3), "float32")
    pairs = tf.data.Dataset.from_tensor_slices((images, [str(i) for i in range(7)]))
    sizes = []

    def caption(batch):
        sizes.append(len(batch))
        names = [str(int(image[0, 0, 0])) for image in batch]
        return names, batch[:, None, :, :, 0], [[name] for name in names]

    _, references, hypotheses, outputs = caption_split(caption, pairs, batch_size=3)
    assert sizes == [3, 3, 1]
    assert hypotheses == [texts[0] for texts in references] == [str(i) for i in range(7)]
    assert outputs["attention"].shape == (7, 1, 2, 2)


class EchoCaptioner:
    """Stands for an ImageCaptioner: records how it was called."""

    def __init__(self):
        self.calls = []

    def caption(self, images, encoder, **options):
        self.calls.append((len(images), encoder, options))
        count = len(images)
        return ["a circle"] * count, np.zeros((count, 2, 1, 1)), [["a", " circle"]] * count


def test_caption_with_model_asks_for_attention_with_the_search_settings():
    pairs = tf.data.Dataset.from_tensor_slices((np.zeros((3, 2, 2, 3)), ["a", "b", "c"]))
    model = EchoCaptioner()
    _, references, hypotheses, _ = caption_with_model(model, "tokenizer", pairs, 9, 3, limit=2)
    assert references == [["a", "b"]] and hypotheses == ["a circle"]
    assert model.calls == [
        (
            1,
            "tokenizer",
            dict(max_length=9, beam_width=3, return_attention=True, decode_batch_size=50),
        )
    ]


def test_scores_are_corpus_bleu_and_exact_matches():
    hypotheses = ["a red circle left of a blue square", "a blue square"]
    references = [["a red circle left of a blue square"], ["a red square", "a blue circle"]]
    bleu, exact = caption_scores(hypotheses, references)
    assert exact == 0.5
    expected = corpus_bleu(hypotheses, [references[0] * 2, references[1]])
    assert bleu == pytest.approx(expected)
    assert caption_scores(["a b c d"], [["a b c d"]]) == (pytest.approx(100.0), 1.0)
    with pytest.raises(ValueError, match="1 hypotheses and 2 references"):
        caption_scores(["a"], [["a"], ["b"]])


def test_only_the_first_images_keep_their_attention_maps():
    images = np.arange(7, dtype=np.float32)[:, None, None, None] * np.ones((7, 2, 2, 3), np.float32)
    pairs = tf.data.Dataset.from_tensor_slices((images, [f"c{i}" for i in range(7)]))

    def caption(batch):
        count = len(batch)
        maps = np.stack([np.full((1, 2, 2), float(image[0, 0, 0])) for image in batch])
        return [f"c{int(image[0, 0, 0])}" for image in batch], maps, [["w"]] * count

    _, references, hypotheses, outputs = caption_split(
        caption, pairs, batch_size=3, keep_attention=4
    )
    assert hypotheses == [f"c{i}" for i in range(7)] and len(references) == 7
    assert outputs["attention"].shape == (4, 1, 2, 2)
    np.testing.assert_array_equal(outputs["attention"][:, 0, 0, 0], [0, 1, 2, 3])
    assert len(outputs["words"]) == 7

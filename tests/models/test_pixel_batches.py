"""What classify and caption take: a batch of raw pixels, refused otherwise, with one warning."""

import warnings

import numpy as np
import pytest
import tiny_models

from keras_attention.text.reversible_tokenizer import ReversibleTokenizer

PIXELS = np.random.default_rng(0).uniform(0, 255, (2, 20, 16, 3)).astype("float32")


def _captioner():
    tokenizer = ReversibleTokenizer.train(["a red circle", "a blue square"], 300)
    model = tiny_models.tiny_show_attend_tell_captioner(vocabulary_size=tokenizer.vocabulary_size)
    return model.attach_tokenizers(tokenizer)


@pytest.mark.parametrize("kind", ["classifier", "captioner"])
def test_images_scaled_to_0_1_are_named_in_a_warning_raw_pixels_are_not(kind):
    if kind == "classifier":
        model = tiny_models.tiny_vision_transformer(class_names=["a", "b", "c"])
        run, method = model.classify, "classify"
    else:
        run, method = _captioner().caption, "caption"
    with pytest.warns(UserWarning, match=rf"^{method}: every pixel of `images` is at most 1.0 "):
        run(PIXELS / 255)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run(PIXELS)  # 0..255: no warning
        run(PIXELS.astype("uint8"))  # integers are raw pixels whatever their values
        run(np.zeros_like(PIXELS))  # an all-black image: the range cannot tell


@pytest.mark.parametrize("kind", ["classifier", "captioner"])
@pytest.mark.parametrize(
    "images, message",
    [
        (PIXELS[0], r"must be a batch \(batch, height, width, 3\), one image as a batch of one"),
        (PIXELS[..., :1], r"must be \(batch, height, width, 3\) with at least one image"),
        (PIXELS[:0], r"must be \(batch, height, width, 3\) with at least one image"),
        ("cat.jpg", r"must be pixels .* decode them first .*Received: <U7 values \('cat.jpg'\)"),
        (np.where(PIXELS > 200, np.nan, PIXELS), r"must hold finite pixel values .* NaN or infin"),
        (PIXELS * 257, r"must hold pixel values in 0..255.*Received: images with values from"),
    ],
    ids=["one image", "grayscale", "empty", "file name", "nan", "16-bit"],
)
def test_what_is_no_batch_of_pixels_is_a_value_error_naming_images(kind, images, message):
    if kind == "classifier":
        run = tiny_models.tiny_vision_transformer(class_names=["a", "b", "c"]).classify
    else:
        run = _captioner().caption
    with pytest.raises(ValueError, match=r"^`images` " + message):
        run(images)


def test_generate_names_its_own_batch_size_argument():
    with pytest.raises(ValueError, match=r"^`batch_size` must be a positive integer. Received: b"):
        _captioner().generate(PIXELS, batch_size=0)

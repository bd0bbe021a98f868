"""Images divided by 255 given to a model of raw pixels: a warning, as nothing else fails."""

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

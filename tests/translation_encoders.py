"""Source and target tokenizers trained on a list of (source, target) sentence pairs.

source_encoder, target_encoder = translation_encoders(pairs, vocabulary_size=350)
"""

from keras_attention.text.reversible_tokenizer import ReversibleTokenizer


def translation_encoders(pairs, vocabulary_size):
    """[source tokenizer, target tokenizer], each trained on its side of `pairs`."""
    return [
        ReversibleTokenizer.train([pair[side] for pair in pairs], vocabulary_size=vocabulary_size)
        for side in (0, 1)
    ]

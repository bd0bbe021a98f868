"""What the image captioners share: the decoding protocol's attributes, `generate` and `caption`."""

import keras
import numpy as np
from keras import ops

from keras_attention.models.captioning.image_backbones import image_size_pair
from keras_attention.models.constructor_config import ConstructorConfig
from keras_attention.models.constructor_config import check_sizes_and_dropout
from keras_attention.models.default_compile import DefaultCompile
from keras_attention.models.held_tokenizers import HeldTokenizers
from keras_attention.models.pixel_batches import checked_pixel_batch
from keras_attention.text.word_pieces import group_pieces
from keras_attention.validation import check_positive_int

# The decoding protocol's entry for the encoder positions that exist (bool,
# `(B, h, w)` for a feature grid); see `keras_attention.generation.decoding_protocol`.
MEMORY_MASK = "memory_mask"


class ImageCaptioner(HeldTokenizers, DefaultCompile, ConstructorConfig, keras.Model):
    """Base class of the captioners: a functional model that decodes itself.

    A subclass builds its graph in `__init__` (image and caption ids in,
    next-token logits out) and implements the decoding protocol that greedy
    search, beam search, `export_captioner` and the attention plots use
    (`keras_attention.generation.decoding_protocol.DecoderAdapter`):

    - `vocabulary_size`, `max_length` (the longest decoding, or None);
    - `encode(images)` -> dict of batch-first tensors with a bool
      `"memory_mask"` `(B, h, w)`;
    - `initial_cache(encoder_state, batch_size, max_length)` -> dict;
    - `step(token_ids, index, cache, encoder_state)` ->
      `(logits (B, V), cache, attention (B, h, w))`;

    plus what serving needs, `image_shape` (the `(height, width)` images are
    resized to) and `grid_size` (the `(h, w)` of the attention maps), and
    `caption_attention(inputs)`, the teacher-forced logits and attention maps.

    One decoding step, as greedy and beam search run it:

    >>> import numpy as np
    >>> from keras_attention.models.captioning.transformer_captioner import TransformerCaptioner
    >>> model = TransformerCaptioner(
    ...     vocabulary_size=20, max_caption_length=8, image_size=16, hidden_dim=16,
    ...     num_layers=1, num_heads=2, intermediate_dim=32)
    >>> state = model.encode(np.zeros((2, 16, 16, 3), "float32"))
    >>> cache = model.initial_cache(state, batch_size=2, max_length=6)
    >>> logits, cache, attention = model.step(np.array([2, 2]), 0, cache, state)
    >>> tuple(logits.shape), tuple(attention.shape)  # attention over the 4x4 grid
    ((2, 20), (2, 4, 4))

    This class adds `generate(images)` and `caption(images, encoder)`,
    which caption raw images as the exported SavedModel does, and
    `export(path)`. The caption tokenizer is the one the model holds
    (`attach_tokenizers(tokenizer)`, kept in its `.keras` file; see
    `HeldTokenizers`) or the one given. Its config is its constructor's
    arguments (`ConstructorConfig`), `image_size` and the caption sizes
    among them.
    """

    tokenizer_roles = ("caption",)

    def tokenizer_vocabulary_sizes(self):
        """The caption vocabulary size, which the tokenizer must have."""
        return (self.vocabulary_size,)

    @staticmethod
    def _check_caption_arguments(arguments, sizes):
        """Checks `dropout`, the caption sizes and the other `sizes` named in `arguments`."""
        check_sizes_and_dropout(arguments, ("vocabulary_size", "max_caption_length", *sizes))

    def _build_functional(self, forward, name, **kwargs):
        """Makes the model the graph `forward(image, caption) -> logits` on symbolic inputs."""
        image = keras.Input((None, None, 3), dtype="float32", name="image")
        caption = keras.Input((None,), dtype="int32", name="caption")
        super().__init__(
            inputs={"image": image, "caption": caption},
            outputs=forward(image, caption),
            name=name,
            **kwargs,
        )

    def _keep_captioner_config(self, arguments, grid_size, max_length):
        """Keeps the config and sets the decoding protocol's sizes (once the model is built)."""
        self.keep_config(arguments)
        self.max_length = max_length
        self.image_shape = image_size_pair(arguments["image_size"])
        self.grid_size = grid_size

    @staticmethod
    def _cast_inputs(inputs):
        """`{"image", "caption"}` -> float32 images and int32 caption ids."""
        return ops.cast(inputs["image"], "float32"), ops.cast(inputs["caption"], "int32")

    def generate(
        self, inputs, max_length=None, *, beam_width=1, return_attention=False, batch_size=8
    ):
        """Captions images with the tokenizer the model holds, as keras-hub's `generate`.

        `caption(inputs, tokenizer, ...)` with the tokenizer of
        `attach_tokenizers` (the example scripts attach theirs, and the
        model's `.keras` files keep it).

        Args:
            inputs: `(B, H, W, 3)` pixels in 0..255, uint8 or float.
            max_length: the most tokens per caption, the end token
                included; default `max_caption_length`.
            beam_width: 1 for greedy search, more for beam search.
            return_attention: also return the attention maps and words
                (see `caption`).
            batch_size: images decoded together by one compiled search.

        Returns:
            a list of `B` captions; with `return_attention`, see `caption`.

        Raises:
            ValueError: the model holds no tokenizer.

        Example:

        >>> import numpy as np
        >>> import keras_attention as ka
        >>> tokenizer = ka.text.SubwordEncoder(["[PAD]", "[UNK]", "[START]", "[END]", "a"])
        >>> model = ka.models.ShowAttendTellCaptioner(vocabulary_size=5, max_caption_length=4,
        ...     image_size=16, embedding_dim=8, units=16, attention_units=8)
        >>> len(model.attach_tokenizers(tokenizer).generate(np.zeros((3, 16, 16, 3), "uint8")))
        3
        """
        check_positive_int("batch_size", batch_size)  # named as this method calls it
        (tokenizer,) = self.held_tokenizers("generate")
        return self.caption(
            inputs,
            tokenizer,
            max_length=max_length,
            beam_width=beam_width,
            return_attention=return_attention,
            decode_batch_size=batch_size,
        )

    def caption(
        self,
        images,
        encoder=None,
        *,
        max_length=None,
        beam_width=1,
        return_attention=False,
        decode_batch_size=8,
    ):
        """Captions raw images with greedy (`beam_width=1`) or beam search.

        The captions come from the graph `export_captioner` saves
        (`keras_attention.serving.captioning_export.make_caption_function`):
        the same resizing, XLA-compiled search and detokenization, so they
        are exactly what the exported SavedModel answers. The compiled graph
        is kept per encoder and settings, so later calls reuse it.

        Args:
            images: `(B, H, W, 3)` pixels in 0..255, uint8 or float, any
                `H` and `W`.
            encoder: the tokenizer the captions were encoded with (a
                `ReversibleTokenizer`, a `SubwordEncoder`, any object with
                `encode`, `decode`, `start_id`, `end_id`, `pad_id` (0) and
                `vocabulary_size`), or a WordPiece vocabulary (a list);
                default: the tokenizer the model holds.
            max_length: the most tokens per caption, the end token included;
                default `max_caption_length`.
            beam_width: 1 for greedy search, more for beam search.
            return_attention: also return the attention maps and the words
                they stand for.
            decode_batch_size: images decoded together by one compiled
                search.

        Returns:
            A list of `B` caption strings; with `return_attention`, a tuple
            `(captions, attention, words)`: `words` a list per image of its
            caption's whole words, as they stand in the caption (a word's
            subword pieces joined by the encoder's rule, see
            `keras_attention.text.word_pieces`), and `attention`
            `(B, max_length, h, w)` float32 NumPy, where
            `attention[i, :len(words[i])]` are the words' maps (a word's map
            is the mean of the maps of its pieces) and the rest is 0.

        Example:

        >>> import numpy as np
        >>> import keras_attention as ka
        >>> model = ka.models.ShowAttendTellCaptioner(vocabulary_size=7, max_caption_length=5,
        ...     image_size=16, embedding_dim=8, units=16, attention_units=8)
        >>> vocabulary = ["[PAD]", "[UNK]", "[START]", "[END]", "a", "red", "circle"]
        >>> captions, attention, words = model.caption(
        ...     np.zeros((2, 30, 20, 3), "uint8"), vocabulary, max_length=4,
        ...     return_attention=True, decode_batch_size=2)
        >>> len(captions), attention.shape  # a 4x4 grid per token
        (2, (2, 4, 4, 4))
        """
        if max_length is None:
            max_length = self.max_length or self.max_caption_length
        check_positive_int("decode_batch_size", decode_batch_size)
        images = checked_pixel_batch(images, 3, "caption")
        if encoder is None:
            (encoder,) = self.held_tokenizers("caption")
        tokenizer, function = self._caption_function(
            encoder, max_length, beam_width, decode_batch_size
        )
        outputs = function(keras.ops.cast(keras.ops.convert_to_tensor(images), "float32"))
        # An undertrained model may emit byte tokens that do not form UTF-8.
        captions = [
            text.decode("utf-8", errors="replace") for text in np.asarray(outputs["caption"])
        ]
        if not return_attention:
            return captions
        return (captions, *_whole_words(tokenizer, outputs["caption_tokens"], outputs["attention"]))

    def export(
        self,
        filepath,
        encoder=None,
        *,
        max_length=None,
        beam_width=1,
        teacher_forced=False,
        **kwargs,
    ):
        """Writes a SavedModel that captions raw images: `ka.serving.export_captioner`.

        `model.export(path)` (with the tokenizer the model holds) or
        `model.export(path, tokenizer)` writes `serving_default` (float32
        pixels), `serving_uint8` and `serving_bytes` (encoded JPEG/PNG), each
        returning `caption`, `attention` and `caption_tokens`. keras' own
        `export` of this model would serve the teacher-forced graph (images
        and caption ids in, logits out): `teacher_forced=True` writes that one,
        with `**kwargs` going to `keras.Model.export`.

        Args:
            filepath: folder to write the SavedModel to.
            encoder: the tokenizer the captions were encoded with, or a
                WordPiece vocabulary; default: the tokenizer the model holds.
            max_length: most tokens per caption; defaults to the model's.
            beam_width: 1 for greedy search, more for beam search.
            teacher_forced: write keras' export of the teacher-forced graph instead.

        Returns:
            `filepath` as a string (None with `teacher_forced`, as keras returns).
        """
        if teacher_forced:
            return keras.Model.export(self, filepath, **kwargs)
        if (encoder is None and not self.tokenizers) or kwargs:
            raise ValueError(
                f"{type(self).__name__}.export writes a captioner with the tokenizer of its "
                "captions: export(path) with the tokenizer it holds (attach_tokenizers), "
                "export(path, tokenizer) or ka.serving.export_captioner; "
                "export(path, teacher_forced=True) writes keras' ids-to-logits graph. "
                f"Received: encoder={encoder!r}, other arguments {sorted(kwargs)}"
            )
        # Serving sits above the models: imported here.
        from keras_attention.serving.captioning_export import export_captioner

        if max_length is None:  # as `caption` does
            max_length = self.max_length or self.max_caption_length
        if encoder is None:
            (encoder,) = self.held_tokenizers("export")
        return export_captioner(self, filepath, encoder, max_length, beam_width)

    def _caption_function(self, encoder, max_length, beam_width, decode_batch_size):
        """`(tokenizer, compiled caption function)` for `encoder` and these settings.

        Made once by `make_caption_function` and kept on the model, so that
        later calls with the same encoder object and settings reuse the graph.
        """
        # Serving sits above the models: imported here, so that `caption` runs
        # the very graph that `export_captioner` writes.
        from keras_attention.serving.captioning_export import as_caption_encoder
        from keras_attention.serving.captioning_export import make_caption_function

        key = (int(max_length), int(beam_width), int(decode_batch_size))
        # Kept per encoder object and settings: (encoder, key, tokenizer, function).
        functions = vars(self).setdefault("_caption_functions", [])
        found = next(((t, f) for e, k, t, f in functions if e is encoder and k == key), None)
        if found is not None:
            return found
        tokenizer = as_caption_encoder(encoder)  # a vocabulary list becomes its tokenizer
        function = make_caption_function(
            self, tokenizer, max_length, beam_width, decode_batch_size=decode_batch_size
        )
        functions.append((encoder, key, tokenizer, function))
        return tokenizer, function


def _whole_words(encoder, tokens, attention):
    """Each caption's words before its end token, and one map per word.

    A word is its pieces joined by the encoder's rule (`word_continuation`),
    and its map is the mean of its pieces' maps.

    Args:
        encoder: the caption tokenizer.
        tokens: `(B, T)` the generated pieces, UTF-8 bytes, "" after the end.
        attention: `(B, T, h, w)` the attention when each piece was chosen.

    Returns:
        `(attention (B, T, h, w) float32, words)`: row `i`'s first
        `len(words[i])` maps are its words' maps, the rest 0.
    """
    attention = keras.ops.convert_to_numpy(attention)
    continuation = getattr(encoder, "word_continuation", "leading_space")
    vocabulary = getattr(encoder, "vocabulary", None)
    # An encoder without a vocabulary decodes the end token alone to "".
    end_text = None if vocabulary is None else vocabulary[encoder.end_id].strip()
    # An undertrained model may choose the start or padding token: the caption's
    # text leaves them out, so its words do too (with their maps).
    unwritten = set()
    if vocabulary is not None:
        unwritten = {vocabulary[index].strip() for index in (0, encoder.start_id)}
    word_attention = np.zeros_like(attention)
    captions_words = []
    for row, pieces in enumerate(np.asarray(tokens)):
        pieces = [piece.decode("utf-8", errors="replace") for piece in pieces if piece]
        stripped = [piece.strip() for piece in pieces]
        if end_text in stripped:
            pieces = pieces[: stripped.index(end_text)]
        written = [index for index in range(len(pieces)) if stripped[index] not in unwritten]
        if not written:
            captions_words.append([])
            continue
        words, word_of_piece = group_pieces([pieces[index] for index in written], continuation)
        piece_maps = attention[row, written]  # (pieces written, h, w)
        for word in range(len(words)):
            word_attention[row, word] = piece_maps[word_of_piece == word].mean(0)
        captions_words.append(words)
    return word_attention, captions_words

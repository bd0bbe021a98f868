"""Export an image captioner as a TensorFlow SavedModel: pixels in, captions and attention out.

The exported graph holds the whole pipeline: resizing, XLA-compiled greedy or
beam-search decoding with the model's caches, and turning ids into text;
`make_caption_function` builds that graph for use in the same process. Loading
it needs only TensorFlow (the ids become text with graph ops, no tokenizer).
"""

import keras
import tensorflow as tf

from keras_attention.backend_support import require_tensorflow_backend
from keras_attention.generation.decoding_protocol import missing_captioner_members
from keras_attention.serving.grouped_decoding import decode_in_groups
from keras_attention.serving.image_classification_export import warm_up_images
from keras_attention.serving.image_inputs import checked_images
from keras_attention.serving.image_inputs import image_input_spec
from keras_attention.serving.image_signatures import add_image_endpoints
from keras_attention.serving.saved_model_kinds import CAPTIONER
from keras_attention.serving.serving_signature import load_serving_signature
from keras_attention.text.subword_encoder import SubwordEncoder
from keras_attention.validation import check_positive_int

# What decoding and detokenizing use of an encoder.
ENCODER_ATTRIBUTES = ("encode", "decode", "start_id", "end_id", "pad_id", "vocabulary_size")


def as_caption_encoder(encoder):
    """`encoder` checked as a caption tokenizer; a WordPiece vocabulary (a list) made one.

    Args:
        encoder: a tokenizer object (any with `ENCODER_ATTRIBUTES`, pad id 0),
            or a WordPiece vocabulary list.

    Returns:
        the tokenizer object.
    """
    if isinstance(encoder, (list, tuple)):
        return SubwordEncoder(list(encoder))
    missing = [name for name in ENCODER_ATTRIBUTES if not hasattr(encoder, name)]
    if missing:
        raise ValueError(
            "`encoder` must be a tokenizer with `encode`, `decode`, `start_id`, `end_id`, "
            "`pad_id` and `vocabulary_size` (such as a SubwordEncoder or a "
            "ReversibleTokenizer), or a WordPiece vocabulary (a list of tokens with '[PAD]', "
            f"'[UNK]', '[START]' and '[END]'). Received: encoder={encoder!r:.100} "
            f"without {missing}"
        )
    if encoder.pad_id != 0:
        raise ValueError(
            "`encoder` must use id 0 for padding, as the captioners do. "
            f"Received: encoder with pad_id={encoder.pad_id}"
        )
    return encoder


def _token_strings(encoder):
    """The text of every id, for the `caption_tokens` output."""
    vocabulary = getattr(encoder, "vocabulary", None)
    if vocabulary is None:
        # One id per row, decoded alone (start and end tokens come out empty).
        ids = tf.range(encoder.vocabulary_size)[:, None]  # (V, 1)
        return encoder.decode(ids)
    return tf.constant(list(vocabulary), dtype=tf.string)


def make_caption_function(model, encoder, max_length, beam_width=1, *, decode_batch_size=8):
    """A `tf.function` that captions raw images: the graph `export_captioner` saves.

    `caption(images)` takes float32 `(B, H, W, 3)` pixels in 0..255 of any
    `B`, `H` and `W` and returns a dict of

    - `caption`: `(B,)` string, the decoded captions;
    - `attention`: `(B, max_length, h, w)` float32, the attention over the
      `h x w` feature grid when each token was chosen (0 after the end);
    - `caption_tokens`: `(B, max_length)` string, the produced tokens the
      attention maps stand for (the end token included, "" after it).

    Images are resized to the model's `image_shape`, `(height, width)` (bilinear with
    antialiasing), then decoded by greedy search (`beam_width=1`) or beam search in one
    XLA-compiled program per group of `decode_batch_size` images (the last group padded), so
    one compiled program serves batches of every size.

    Each request is checked before decoding (outside the XLA-compiled part,
    where the checks would be dropped): `images` that are not a batch (one
    `(H, W, 3)` image included: send it as `images[None]`), with other than
    3 channels or a height or width of 0, with a NaN or infinite pixel or
    with a pixel outside 0..255 (such as 16-bit values, or pixels scaled to
    -1..1) fail with a `tf.errors.InvalidArgumentError` whose message names
    `images`, what it expects and what it received.

    Args:
        model: a `ShowAttendTellCaptioner` or a `TransformerCaptioner` (also
            re-loaded from a `.keras` file), or any model that implements the
            decoding protocol (`encode`, `initial_cache`, `step`,
            `vocabulary_size`, `max_length`, see `DecoderAdapter`) and has
            `image_shape`, the `(height, width)` images are resized to, and
            `grid_size`, the `(h, w)` of the attention maps.
        encoder: the tokenizer the captions were encoded with: any object
            with `encode`, `decode`, `start_id`, `end_id`, `pad_id` (0) and
            `vocabulary_size` (a `ReversibleTokenizer`, a `SubwordEncoder`),
            or a WordPiece vocabulary (a list of tokens); its start and end
            tokens start and stop decoding, its `decode` runs inside the
            graph.
        max_length: the most tokens produced per caption, the end token
            included (at most the Transformer's `max_caption_length`).
        beam_width: 1 for greedy search, more for beam search.
        decode_batch_size: images decoded together by one compiled search.

    Returns:
        A `tf.function` with input signature `images`: tf.float32 of unknown
        shape, so that it can check the rank itself.

    Example:

    >>> import numpy as np
    >>> import keras_attention as ka
    >>> model = ka.models.ShowAttendTellCaptioner(
    ...     vocabulary_size=7, max_caption_length=5, image_size=16, embedding_dim=8,
    ...     units=16, attention_units=8)
    >>> vocabulary = ["[PAD]", "[UNK]", "[START]", "[END]", "a", "red", "circle"]
    >>> caption = make_caption_function(model, vocabulary, max_length=4, decode_batch_size=2)
    >>> outputs = caption(np.zeros((3, 40, 50, 3), "float32"))
    >>> outputs["caption"].shape, tuple(outputs["attention"].shape)  # a 4x4 grid
    (TensorShape([3]), (3, 4, 4, 4))
    """
    require_tensorflow_backend("SavedModel export (make_caption_function)")
    encoder = _checked_arguments(model, encoder, max_length, beam_width, decode_batch_size)
    image_shape = tuple(int(size) for size in model.image_shape)
    group_size, length = int(decode_batch_size), int(max_length)
    grid = tuple(int(size) for size in model.grid_size)
    start_id, end_id = encoder.start_id, encoder.end_id
    token_strings = _token_strings(encoder)

    def caption(images):
        # Checked here, ahead of the XLA-compiled decoding, which would drop the checks.
        images = checked_images(images, 3)
        # Resized here, outside XLA, which has no antialiased resize.
        images = tf.image.resize(images, image_shape, antialias=True)
        tokens, attention = decode_in_groups(
            model, images, start_id, end_id, length, grid, group_size, beam_width
        )  # (B, L), (B, L, h, w)
        pieces = tf.where(tf.equal(tokens, 0), "", tf.gather(token_strings, tokens))  # (B, L)
        return {"caption": encoder.decode(tokens), "attention": attention, "caption_tokens": pieces}

    return tf.function(caption, input_signature=[image_input_spec()], autograph=False)


def _checked_arguments(model, encoder, max_length, beam_width, decode_batch_size):
    """The caption tokenizer of `encoder`, after a ValueError for any argument that cannot work."""
    missing = missing_captioner_members(model)
    if missing:
        raise ValueError(
            "`model` must be a captioner that implements the decoding protocol "
            "(`encode`, `initial_cache`, `step`, `vocabulary_size`, `max_length`) and has "
            "`image_shape` and `grid_size`, as ShowAttendTellCaptioner and TransformerCaptioner "
            f"do. Received: model={getattr(model, 'name', model)!r} without {missing}"
        )
    encoder = as_caption_encoder(encoder)
    check_positive_int("max_length", max_length)
    check_positive_int("beam_width", beam_width)
    check_positive_int("decode_batch_size", decode_batch_size)
    if model.max_length is not None and max_length > model.max_length:
        raise ValueError(
            f"`max_length` must be at most {model.max_length}, the longest caption the model "
            f"reads. Received: max_length={max_length}"
        )
    if model.vocabulary_size != encoder.vocabulary_size:
        raise ValueError(
            f"`encoder` must have one token per model output ({model.vocabulary_size}). "
            f"Received: encoder with {encoder.vocabulary_size} tokens"
        )
    return encoder


def export_captioner(model, path, encoder, max_length, beam_width=1, *, decode_batch_size=8):
    """Writes a SavedModel that captions raw images and returns where it looked.

    The `serving_default` signature takes `images`, float32 `(B, H, W, 3)`
    with pixel values in 0..255 and any `B`, `H` and `W`, and returns
    `caption` `(B,)` string, `attention` `(B, max_length, h, w)` float32 and
    `caption_tokens` `(B, max_length)` string: the graph of
    `make_caption_function`, whose input checks, resizing, XLA-compiled
    decoding and detokenization all run inside the SavedModel. `serving_uint8`
    (uint8 pixels) and `serving_bytes` (`image_bytes`, encoded JPEG/PNG files
    `(B,)` string) answer alike (`keras_attention.serving.image_signatures`).
    It needs only TensorFlow
    to run (`tf.saved_model.load(path).signatures["serving_default"]
    (images=...)`), and `saved_model_cli show --all --dir path` describes it.

    Args:
        model: a captioner that implements the decoding protocol (see
            `make_caption_function`).
        path: folder to write the SavedModel to.
        encoder: the tokenizer the captions were encoded with (see
            `make_caption_function`), or a WordPiece vocabulary.
        max_length: the most tokens produced per caption, the end token
            included.
        beam_width: 1 for greedy search, more for beam search.
        decode_batch_size: images decoded together by one compiled search.

    Returns `path` as a string.

    Example:

    >>> import os, tempfile
    >>> import tensorflow as tf
    >>> from keras_attention.models.captioning.transformer_captioner import transformer_captioner
    >>> vocabulary = ["[PAD]", "[UNK]", "[START]", "[END]", "a", "red", "circle"]
    >>> model = transformer_captioner(
    ...     vocabulary_size=7, max_caption_length=5, image_size=16, hidden_dim=16,
    ...     num_layers=1, num_heads=2, intermediate_dim=32)
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = export_captioner(model, os.path.join(folder, "captioner"), vocabulary,
    ...                             max_length=4, decode_batch_size=2)
    ...     serve = tf.saved_model.load(path).signatures["serving_default"]
    ...     outputs = serve(images=tf.zeros((3, 50, 40, 3)))
    >>> outputs["caption"].shape, tuple(outputs["attention"].shape)
    (TensorShape([3]), (3, 4, 4, 4))
    """
    require_tensorflow_backend("SavedModel export (export_captioner)")
    caption = make_caption_function(
        model, encoder, max_length, beam_width, decode_batch_size=decode_batch_size
    )
    archive = keras.export.ExportArchive()
    archive.track(model)
    # Decoded bytes are resized as `caption` resizes pixels: antialiased, to the model's size.
    size = tuple(int(side) for side in model.image_shape)
    add_image_endpoints(archive, caption, 3, size, antialias=True)
    path = str(path)
    archive.write_out(path, verbose=False)
    return path


def load_captioner(path, warm_up=True):
    """Loads the `serving_default` function of an exported captioner, warmed up.

    Plain TensorFlow: `tf.saved_model.load(path).signatures["serving_default"]`,
    keeping the loaded object alive. With `warm_up` it captions one blank
    image before returning: the first call of a loaded SavedModel optimizes
    the graph and compiles the XLA decoding loop, which a SavedModel cannot
    store, so this moves that cost from the first request to the load.

    Args:
        path: a folder written by `export_captioner`.
        warm_up: caption one image at load time.

    Returns:
        A callable `caption(images)` taking `(B, H, W, 3)` pixels 0..255
        (uint8 or float) and returning the dict of `caption`, `attention`
        and `caption_tokens`.

    Raises:
        ValueError: when `path` is not a SavedModel folder, or holds another
            kind of export (an image classifier, a translator); the message
            names the path, what it holds and the function that loads it.
    """
    loaded, serve = load_serving_signature(path, CAPTIONER)

    def call(images):
        return serve(images=tf.cast(tf.convert_to_tensor(images), tf.float32))

    if warm_up:
        warm_up_images(serve)
    call.saved_model = loaded  # keeps the variables alive
    return call

"""The three signatures of an image SavedModel: float pixels, uint8 pixels, encoded bytes.

A signature takes one dtype per input, so one name cannot take both uint8
and float32 pixels. Image exports therefore serve:

- `serving_default`: `images` float32 `(B, H, W, C)`, pixel values 0..255;
- `serving_uint8`: `images` uint8 `(B, H, W, C)`, as decoders and image
  files give them;
- `serving_bytes`: `image_bytes` string `(B,)`, encoded JPEG, PNG, GIF or
  BMP files as TF Serving clients send them (the `_bytes` suffix lets TF
  Serving's REST API take them base64-encoded: `{"b64": "..."}`); each image
  is decoded and resized to the model's size, then answered as pixels.

All three return the same outputs and run the same checks.
"""

import tensorflow as tf

from keras_attention.data.image_decoding import decode_image_data
from keras_attention.serving.image_inputs import image_input_spec
from keras_attention.serving.serving_signature import SERVING_SIGNATURE

UINT8_SIGNATURE = "serving_uint8"
BYTES_SIGNATURE = "serving_bytes"
BYTES_INPUT = "image_bytes"


def decode_images(image_bytes, channels, size=None, antialias=False):
    """Encoded images `(B,)` string -> float32 pixels `(B, height, width, channels)`, 0..255.

    Args:
        image_bytes: a `(B,)` string tensor of JPEG, PNG, GIF (first frame)
            or BMP files.
        channels: channels to decode to (1 or 3; an RGBA PNG loses alpha).
        size: `(height, width)` to resize every image to, bilinearly (a
            JPEG much larger is first decoded at a reduced size, as the
            training pipeline decodes it: `decode_image_data`); None keeps
            each image's size, and the images of one call must then share it.
        antialias: resize with an antialiasing filter (as the captioners do).

    Example:

    >>> import tensorflow as tf
    >>> png = tf.io.encode_png(tf.fill((4, 6, 3), tf.constant(200, tf.uint8)))
    >>> pixels = decode_images(tf.stack([png, png]), 3, (2, 3))
    >>> pixels.shape, float(pixels[0, 0, 0, 0])
    (TensorShape([2, 2, 3, 3]), 200.0)
    """
    shape = (None, None, channels) if size is None else (*size, channels)

    def decode(one):
        image = tf.cast(decode_image_data(one, channels, size), tf.float32)  # (H, W, C)
        if size is None:
            return image
        return tf.image.resize(image, size, antialias=antialias)

    return tf.map_fn(
        decode, image_bytes, fn_output_signature=tf.TensorSpec(shape, tf.float32)
    )  # (B, height, width, channels)


def add_image_endpoints(archive, serve, channels, size=None, antialias=False):
    """Adds the three image signatures to a `keras.export.ExportArchive`.

    Args:
        archive: the archive being written (the model already tracked).
        serve: `images` float32 `(B, H, W, C)` 0..255 -> dict of outputs; a
            plain function or a `tf.function` that takes any shape.
        channels: the model's channel count.
        size: `(height, width)` the bytes are resized to (the model's own
            size), or None to keep each image's size.
        antialias: resize the decoded images with antialiasing.
    """

    def serve_uint8(images):
        return serve(tf.cast(images, tf.float32))

    def serve_bytes(image_bytes):
        return serve(decode_images(image_bytes, channels, size, antialias))

    archive.add_endpoint(name=SERVING_SIGNATURE, fn=serve, input_signature=[image_input_spec()])
    archive.add_endpoint(
        name=UINT8_SIGNATURE, fn=serve_uint8, input_signature=[image_input_spec(tf.uint8)]
    )
    archive.add_endpoint(
        name=BYTES_SIGNATURE,
        fn=serve_bytes,
        input_signature=[tf.TensorSpec((None,), tf.string, name=BYTES_INPUT)],
    )

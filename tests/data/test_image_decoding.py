"""decoded_images: images decoded inside tf.data, a file that cannot be decoded skipped and named."""

import io

import numpy as np
import pytest
import tensorflow as tf
from PIL import Image

from keras_attention.data.image_decoding import decode_image_data
from keras_attention.data.image_decoding import decoded_images
from keras_attention.data.image_decoding import resize_image
from keras_attention.data.skipped_items import SkippedItems
from keras_attention.data.skipped_items import strict_stop_message

WHAT = "image files that cannot be decoded"


def pixels(seed, height=5, width=7):
    return np.random.default_rng(seed).integers(0, 256, (height, width, 3), dtype=np.uint8)


def encoded(image, form, **options):
    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, form, **options)
    return buffer.getvalue()


def write(folder, name, data):
    path = folder / name
    path.write_bytes(data)
    return str(path)


def decode_paths(paths, skipped, image_size=None, deterministic=True):
    items = tf.data.Dataset.from_tensor_slices((paths, np.arange(len(paths), dtype=np.int64)))
    dataset = decoded_images(items, skipped, image_size, deterministic=deterministic)
    return dataset, [(image, int(label)) for image, label in dataset.as_numpy_iterator()]


def log_lines(path):
    with open(path, encoding="utf-8") as file:
        return file.read().splitlines()


@pytest.fixture
def images(tmp_path):
    """`{form: (path, expected pixels)}` of small images in each format."""
    image = pixels(0)
    found = {}
    found["png"] = tf.io.encode_png(image).numpy(), image
    rgba = np.concatenate([pixels(1), np.full((5, 7, 1), 9, np.uint8)], axis=-1)
    found["rgba.png"] = encoded(rgba, "PNG"), rgba[..., :3]
    gray = pixels(2)[..., 0]
    found["gray.png"] = encoded(gray, "PNG"), np.repeat(gray[..., None], 3, axis=-1)
    # One colour per 8x8 block, no chroma subsampling: JPEG keeps it within its rounding.
    blocks = np.repeat(np.repeat(pixels(3, 2, 3), 8, axis=0), 8, axis=1)
    found["jpg"] = encoded(blocks, "JPEG", quality=95, subsampling=0), blocks
    # Two frames: the first is decoded. Few colours, so that the palette keeps them exactly.
    first = np.repeat(np.repeat(pixels(4, 2, 2), 3, axis=0), 3, axis=1)
    gif = encoded(first, "GIF", save_all=True, append_images=[Image.fromarray(255 - first)])
    found["gif"] = gif, first
    found["bmp"] = encoded(pixels(5, 6, 9), "BMP"), pixels(5, 6, 9)
    return {
        form: (write(tmp_path, f"image.{form}", data), expected)
        for form, (data, expected) in found.items()
    }


def test_png_jpeg_gif_and_bmp_decode_to_their_pixels(images, tmp_path):
    log = tmp_path / "skipped.txt"
    skipped = SkippedItems(WHAT, log)
    forms = list(images)
    dataset, decoded = decode_paths([images[form][0] for form in forms], skipped)
    assert [label for _, label in decoded] == list(range(len(forms)))
    assert dataset.element_spec[0].shape.as_list() == [None, None, 3]
    assert dataset.element_spec[0].dtype == tf.float32
    for form, (image, _) in zip(forms, decoded):
        expected = images[form][1].astype(np.float32)
        assert image.dtype == np.float32
        assert image.shape == expected.shape, form
        # JPEG rounds each block's colour; the others are exact.
        tolerance = 3 if form == "jpg" else 0
        assert np.abs(image - expected).max() <= tolerance, form
    assert skipped.take_count() == 0
    assert not log.exists() or log_lines(log) == []


@pytest.fixture
def bad_files(tmp_path):
    jpeg = encoded(pixels(6, 32, 32), "JPEG", quality=90)
    folder = tmp_path / "a folder.jpg"
    folder.mkdir()
    return {
        "truncated jpeg": write(tmp_path, "truncated.jpg", jpeg[: len(jpeg) // 2]),
        "garbage bytes": write(tmp_path, "garbage.png", b"this is not an image at all"),
        "empty file": write(tmp_path, "empty.jpg", b""),
        "missing path": str(tmp_path / "missing.png"),
        "directory path": str(folder),
    }


@pytest.mark.parametrize(
    "kind", ["truncated jpeg", "garbage bytes", "empty file", "missing path", "directory path"]
)
def test_a_file_that_cannot_be_decoded_is_skipped_and_named(kind, images, bad_files, tmp_path):
    log = tmp_path / "skipped.txt"
    skipped = SkippedItems(WHAT, log)
    bad = bad_files[kind]
    paths = [images["png"][0], bad, images["bmp"][0]]
    _, decoded = decode_paths(paths, skipped, (4, 4))
    assert [label for _, label in decoded] == [0, 2]
    assert skipped.take_count() == 1
    assert log_lines(log) == [bad]


def test_every_bad_file_at_once_keeps_the_order_of_the_good_ones(images, bad_files, tmp_path):
    log = tmp_path / "skipped.txt"
    skipped = SkippedItems(WHAT, log)
    bad = [bad_files[kind] for kind in ("truncated jpeg", "garbage bytes", "empty file")]
    good = [images[form][0] for form in ("png", "jpg", "gif", "bmp")]
    rng = np.random.default_rng(0)
    paths = [str(path) for path in rng.choice(good + bad, 60)]
    _, decoded = decode_paths(paths, skipped, (6, 5))
    expected = [index for index, path in enumerate(paths) if path in good]
    assert [label for _, label in decoded] == expected
    assert skipped.take_count() == len(paths) - len(expected)
    assert log_lines(log) == [path for path in paths if path in bad]


def test_without_deterministic_order_every_good_image_still_comes_once(images, bad_files):
    skipped = SkippedItems(WHAT)
    paths = [images["png"][0], bad_files["garbage bytes"]] * 20
    _, decoded = decode_paths(paths, skipped, (3, 3), deterministic=False)
    assert sorted(label for _, label in decoded) == list(range(0, 40, 2))
    assert skipped.take_count() == 20


def test_resized_images_are_float32_in_0_255_with_a_static_shape(images):
    skipped = SkippedItems(WHAT)
    paths = [path for path, _ in images.values()]
    dataset, decoded = decode_paths(paths, skipped, (8, 6))
    assert dataset.element_spec[0].shape.as_list() == [8, 6, 3]
    assert dataset.element_spec[0].dtype == tf.float32
    for image, _ in decoded:
        assert image.shape == (8, 6, 3) and image.dtype == np.float32
        assert image.min() >= 0.0 and image.max() <= 255.0
    # One colour stays that colour at any size; white stays 255, not above.
    for colour in ((255, 255, 255), (0, 128, 17)):
        image = np.broadcast_to(np.array(colour, np.uint8), (9, 13, 3))
        resized = resize_image(image, (4, 31)).numpy()
        assert resized.shape == (4, 31, 3)
        assert np.abs(resized - np.array(colour, np.float32)).max() < 1e-3
    same = resize_image(pixels(8), (5, 7)).numpy()
    assert np.abs(same - pixels(8)).max() < 1e-3


def test_image_size_none_keeps_each_images_size(tmp_path):
    sizes = [(5, 7), (12, 3), (1, 1), (20, 20)]
    paths = [
        write(tmp_path, f"{index}.png", tf.io.encode_png(pixels(index, *size)).numpy())
        for index, size in enumerate(sizes)
    ]
    _, decoded = decode_paths(paths, SkippedItems(WHAT), None)
    assert [image.shape for image, _ in decoded] == [(*size, 3) for size in sizes]
    for (image, index), size in zip(decoded, sizes):
        np.testing.assert_array_equal(image, pixels(index, *size).astype(np.float32))
    assert resize_image(pixels(9), None).dtype == tf.float32


def test_encoded_items_are_bytes_a_name_and_the_rest(tmp_path):
    log = tmp_path / "skipped.txt"
    skipped = SkippedItems(WHAT, log)
    good = tf.io.encode_png(pixels(10)).numpy()
    data = [good, b"\x89PNG broken", good, b""]
    names = ["shard-0/a", "shard-0/b", "shard-1/c", "shard-1/d"]
    labels = [3, 1, 4, 1]
    items = tf.data.Dataset.from_tensor_slices((data, names, labels))
    dataset = decoded_images(items, skipped, (5, 7), encoded=True)
    assert len(dataset.element_spec) == 2  # the name is not passed on
    decoded = list(dataset.as_numpy_iterator())
    assert [int(label) for _, label in decoded] == [3, 4]
    for image, _ in decoded:
        assert np.abs(image - pixels(10)).max() < 1e-3
    assert skipped.take_count() == 2
    assert log_lines(log) == ["shard-0/b", "shard-1/d"]


def test_strict_stops_at_the_first_bad_file_naming_it(images, bad_files):
    skipped = SkippedItems(WHAT, strict=True)
    paths = [images["png"][0], bad_files["garbage bytes"], bad_files["empty file"]]
    with pytest.raises(tf.errors.InvalidArgumentError) as error:
        decode_paths(paths, skipped, (4, 4))
    expected = f"{WHAT}: {bad_files['garbage bytes']} (--strict: without it, skipped and named)"
    assert strict_stop_message(error.value) == expected


def _smooth_picture(height, width):
    rows, cols = np.mgrid[0:height, 0:width]
    red = 127 + 120 * np.sin(rows / 17.0)
    green = 127 + 120 * np.cos(cols / 23.0)
    blue = (rows + cols) % 256
    return np.stack([red, green, blue], axis=-1).astype(np.uint8)  # (h, w, 3)


@pytest.mark.parametrize(
    "size, decoded",
    [((24, 32), (30, 40)), ((60, 80), (60, 80)), ((61, 80), (120, 160)), ((240, 320), (240, 320))],
)
def test_a_large_jpeg_is_decoded_at_the_largest_reduction_that_keeps_the_size(size, decoded):
    jpeg = tf.io.encode_jpeg(_smooth_picture(240, 320), quality=95)
    assert tuple(decode_image_data(jpeg, size=size).shape) == (*decoded, 3)


def test_a_reduced_jpeg_resizes_to_nearly_the_pixels_of_the_whole_one():
    jpeg = tf.io.encode_jpeg(_smooth_picture(240, 320), quality=95)
    whole = tf.image.resize(tf.io.decode_jpeg(jpeg, channels=3), (24, 32), antialias=True)
    reduced = resize_image(decode_image_data(jpeg, size=(24, 32)), (24, 32))
    assert float(tf.reduce_mean(tf.abs(whole - reduced))) < 3.0


def test_a_png_is_decoded_whole_whatever_the_size():
    png = tf.io.encode_png(_smooth_picture(240, 320))
    assert tuple(decode_image_data(png, size=(24, 32)).shape) == (240, 320, 3)


@pytest.mark.parametrize("mode", ["RGB", "RGBA", "L", "LA"])
@pytest.mark.parametrize("size", [None, (4, 6)])
def test_webp_decodes_to_three_channels_with_or_without_alpha(mode, size):
    pixels = np.random.default_rng(3).integers(0, 256, (8, 12, 4)).astype("uint8")
    pixels[..., 3] = 128  # translucent: an opaque image would be written without alpha
    image = Image.fromarray(pixels, "RGBA").convert(mode)
    encoded = io.BytesIO()
    image.save(encoded, "WEBP", lossless=True, exact=True)  # every colour kept as it is
    assert Image.open(io.BytesIO(encoded.getvalue())).mode == ("RGBA" if "A" in mode else "RGB")
    decoded = decode_image_data(tf.constant(encoded.getvalue()), size=size)
    assert decoded.shape == (8, 12, 3) and decoded.dtype == tf.uint8
    # PIL's own reading of the file, as RGB: the alpha dropped, a gray level repeated.
    expected = np.asarray(Image.open(io.BytesIO(encoded.getvalue())).convert("RGB"))
    np.testing.assert_array_equal(decoded.numpy(), expected)

"""The ViT command line, the recipe resolved from it, the data and the model it describes."""

import os

import numpy as np
import pytest
import tensorflow as tf
from optimizer_steps import learning_rates_at

from keras_attention.models.image_classification.swin_transformer import SwinTransformer
from keras_attention.models.image_classification.vision_transformer import VisionTransformer
from keras_attention.tasks.image_classification import model_from_flags as models
from keras_attention.tasks.image_classification.flags import DEFAULT_LEARNING_RATES
from keras_attention.tasks.image_classification.flags import PAPER_VIT_IMAGE_SIZE
from keras_attention.tasks.image_classification.flags import SMALL_VIT_ARCHITECTURE
from keras_attention.tasks.image_classification.flags import build_vit_parser
from keras_attention.tasks.image_classification.flags import check_model_preset
from keras_attention.tasks.image_classification.flags import vit_augmentation
from keras_attention.tasks.image_classification.flags import vit_image_size
from keras_attention.tasks.image_classification.recipe_from_flags import parse_vit_arguments
from keras_attention.tasks.image_classification.recipe_from_flags import resolve_vit_recipe
from keras_attention.tasks.image_classification.recipe_from_flags import vit_model_input_shape
from keras_attention.tasks.image_classification.recipe_from_flags import vit_patch_size_flag
from keras_attention.tasks.image_classification.training_data import prepare_vit_data
from keras_attention.tasks.learning_rate_schedule import warmup_cosine_decay


def test_train_vit_flags():
    args = parse_vit_arguments([])
    assert (args.dataset, args.preset, args.output_dir, args.strategy) == (
        "builtin",
        "small",
        "runs/vit",
        "default",
    )
    assert args.export is None and not args.mixed_precision
    # The built-in set's size is known from the flags: 6144 training images, 16 epochs
    # in batches of 32 (3072 steps; batches of 128 would be 768).
    assert (args.patch_size, args.batch_size, args.epochs) == (4, 32, 16)
    assert args.recipe.reasons["epochs"].startswith("about 100,000 images seen")
    assert vit_augmentation(args) == "none"  # labels say where the shape is
    args = parse_vit_arguments(["--epochs", "3", "--batch-size", "8", "--patch-size", "8"])
    assert (args.patch_size, args.batch_size, args.epochs) == (8, 8, 3)
    args = parse_vit_arguments(["--dataset", "folder:somewhere"])
    assert (args.patch_size, args.batch_size, args.epochs, args.recipe) == (None, None, None, None)
    assert vit_augmentation(args) == "geometric"
    args = parse_vit_arguments(
        ["--preset", "B/16", "--patch-size", "32", "--image-size", "64", "--label-smoothing", "0.2"]
    )
    model = models.vision_transformer_from_arguments(args, num_classes=5, class_names=list("abcde"))
    assert model.patch_embedding.hidden_dim == 768
    assert model.patch_embedding.patch_size == 32
    assert model.output_shape == (None, 5) and args.label_smoothing == 0.2
    with pytest.raises(SystemExit):
        parse_vit_arguments(["--preset", "Z/16"])


def test_the_parser_keeps_the_description_and_its_defaults():
    parser = build_vit_parser(description="Train a ViT.")
    assert "Train a ViT." in parser.format_help()
    assert str(SMALL_VIT_ARCHITECTURE) in " ".join(parser.format_help().split())
    args = parser.parse_args([])
    assert (args.pooling, args.learning_rate, args.weight_decay) == ("token", None, 0.05)
    assert (args.label_smoothing, args.dropout, args.stochastic_depth) == (0.1, 0.0, 0.1)
    assert (args.augmentation, args.builtin_sizes, args.seed) == ("auto", (6144, 512, 1024), 0)
    assert vit_augmentation(parser.parse_args(["--augmentation", "flip"])) == "flip"


def test_learning_rate_left_out_is_the_models_own():
    assert parse_vit_arguments([]).learning_rate == VisionTransformer.DEFAULT_LEARNING_RATE == 2e-3
    swin = parse_vit_arguments(["--model", "swin"])
    assert swin.learning_rate == SwinTransformer.DEFAULT_LEARNING_RATE == 5e-4
    assert DEFAULT_LEARNING_RATES == {
        "vit": VisionTransformer.DEFAULT_LEARNING_RATE,
        "swin": SwinTransformer.DEFAULT_LEARNING_RATE,
    }
    given = parse_vit_arguments(["--model", "swin", "--learning-rate", "0.003"])
    assert given.learning_rate == 0.003
    assert "vit 0.002, swin 0.0005" in " ".join(build_vit_parser().format_help().split())


def test_image_and_patch_size_follow_the_preset_unless_set():
    parser = build_vit_parser()
    assert vit_image_size(parser.parse_args([])) == 32
    assert vit_image_size(parser.parse_args(["--preset", "S/16"])) == PAPER_VIT_IMAGE_SIZE
    assert vit_image_size(parser.parse_args(["--preset", "S/16", "--image-size", "48"])) == 48
    assert vit_patch_size_flag(parser.parse_args([])) is None  # derived: about 8 a side
    assert vit_patch_size_flag(parser.parse_args(["--preset", "S/16"])) == 16
    assert vit_patch_size_flag(parser.parse_args(["--preset", "S/16", "--patch-size", "4"])) == 4
    # 480 x 640 images at a longer side of 32: 24 x 32, patches of 4 (6 x 8 patches).
    assert vit_model_input_shape(parser.parse_args([]), (480, 640)) == (24, 32)
    assert vit_model_input_shape(parser.parse_args([]), None) == (32, 32)


def test_resolve_vit_recipe_writes_its_numbers_into_the_flags():
    args = build_vit_parser().parse_args(["--image-size", "64", "--epochs", "30"])
    recipe = resolve_vit_recipe(args, num_train_images=45000, native_size=(300, 600))
    assert args.recipe is recipe
    assert (args.patch_size, args.batch_size, args.epochs) == (4, 128, 30)
    assert recipe.image_size == (32, 64) and recipe.reasons["epochs"] == "set by the user"


def test_prepare_vit_data_batches_the_builtin_images():
    args = parse_vit_arguments(["--builtin-sizes", "40", "8", "6", "--batch-size", "16"])
    data = prepare_vit_data(args)
    assert data.image_shape == (32, 32) and data.num_classes == len(data.class_names) == 12
    assert data.augmentation == "none" and data.recipe is args.recipe
    assert data.split_sizes == {"train": 40, "validation": 8, "test": 6}
    source_lines = data.summary_lines()[:5]
    assert source_lines[:2] == [
        "data: built-in shapes",
        "  12 classes: " + ", ".join(data.class_names[:10]) + ", ... (2 more)",
    ]
    assert source_lines[2].startswith("  train: 40 images (") and source_lines[4].startswith(
        "  test: 6 images ("
    )
    assert data.summary_lines()[5:-1] == args.recipe.summary_lines()
    assert data.summary_lines()[-1] == (
        "augmentation none: training batches only, never at evaluation or export"
    )
    train_shapes = [tuple(labels.shape) for _, labels in data.train]
    assert train_shapes == [(16, 12), (16, 12)]  # 40 images: the partial batch is dropped
    test_sizes = [int(labels.shape[0]) for _, labels in data.test]
    assert test_sizes == [6] and len(data.test) == 1  # in full, of known length


def test_compile_vision_transformer_schedule_and_weight_decay():
    args = parse_vit_arguments(["--epochs", "200", "--learning-rate", "0.004"])
    model = models.vision_transformer_from_arguments(args, num_classes=3, class_names=list("abc"))
    models.compile_vision_transformer(model, args, steps_per_epoch=1, jit_compile=False)
    # 200 steps: a tenth would be 20, but the warm-up lasts at most 10 epochs (10 steps).
    expected = warmup_cosine_decay(0.004, total_steps=200, warmup_steps=10)
    steps = (0, 4, 10, 105, 200)
    np.testing.assert_allclose(learning_rates_at(model, steps), [expected(s) for s in steps])
    assert float(expected(10)) == pytest.approx(0.004) and float(expected(200)) == 0.0
    assert model.optimizer.weight_decay == 0.05
    assert model.loss.get_config()["label_smoothing"] == 0.1
    assert model.loss.get_config()["from_logits"]


def test_model_swin_builds_the_small_swin_or_swin_t():
    from keras_attention.models.image_classification.swin_sizes import SWIN_PRESETS
    from keras_attention.models.image_classification.swin_transformer import SwinTransformer
    from keras_attention.tasks.image_classification.flags import SMALL_SWIN_PRESET
    from keras_attention.tasks.image_classification.flags import SWIN_PRESET_NAMES

    assert set(SWIN_PRESET_NAMES) | {SMALL_SWIN_PRESET} == set(SWIN_PRESETS)
    args = parse_vit_arguments(["--model", "swin", "--builtin-sizes", "64", "8", "8"])
    assert (args.model, args.patch_size) == ("swin", 4)
    model = models.image_classifier_from_arguments(args, 4, list("abcd"), (32, 32))
    assert isinstance(model, SwinTransformer) and model.class_names == list("abcd")
    assert (model.embed_dim, model.depths, model.window_size) == (64, (2, 2), 4)
    args = parse_vit_arguments(["--model", "swin", "--preset", "swin_tiny_224", "--epochs", "1"])
    assert (vit_image_size(args), vit_patch_size_flag(args)) == (PAPER_VIT_IMAGE_SIZE, 4)
    vit = models.image_classifier_from_arguments(parse_vit_arguments([]), 4, list("abcd"))
    assert not isinstance(vit, SwinTransformer) and vit.patch_embedding.patch_size == 4


@pytest.mark.parametrize(
    "argv", [["--model", "swin", "--preset", "B/16"], ["--preset", "swin_tiny_224"]]
)
def test_a_preset_of_the_other_model_is_a_usage_error(argv, capsys):
    with pytest.raises(SystemExit):
        parse_vit_arguments(argv)
    assert "is not a --model" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--image-size", "30", "--patch-size", "4"], "--patch-size must divide --image-size"),
        (["--preset", "B/16", "--image-size", "100"], "patch size of --preset B/16 must divide"),
        (["--patch-size", "5"], "must divide the default image size of --preset small"),
        (["--model", "swin", "--patch-size", "3"], "Received: image size 32, patch size 3"),
        # Both given: the checkpoint's sizes are replaced, and must still fit.
        (["--init-from", ".", "--image-size", "30", "--patch-size", "4"], "size 30, patch"),
    ],
)
def test_a_patch_size_that_does_not_divide_the_image_size_is_a_usage_error(argv, message, capsys):
    with pytest.raises(SystemExit):
        parse_vit_arguments(argv)
    assert message in capsys.readouterr().err


def test_patch_sizes_that_divide_the_image_size_or_come_from_elsewhere_pass():
    parser = build_vit_parser()
    for argv in (
        ["--preset", "B/16", "--image-size", "384"],
        ["--image-size", "30"],  # the patch size is derived from it
        ["--patch-size", "8"],
        ["--init-from", ".", "--image-size", "30"],  # the checkpoint's patch size
    ):
        check_model_preset(parser, parser.parse_args(argv))


def test_allow_outside_links_reaches_the_folder_listing(tmp_path):
    root = tmp_path / "data"
    for name in ("cat", "dog"):
        (root / name).mkdir(parents=True)
        for number in range(4):
            (root / name / f"{number}.png").write_bytes(
                tf.io.encode_png(np.full((6, 6, 3), number, np.uint8)).numpy()
            )
    (tmp_path / "elsewhere.png").write_bytes((root / "cat" / "0.png").read_bytes())
    os.symlink(tmp_path / "elsewhere.png", root / "dog" / "4.png")
    argv = ["--dataset", f"folder:{root}", "--epochs", "1", "--batch-size", "2"]
    argv += ["--output-dir", str(tmp_path / "run")]
    with pytest.raises(
        ValueError, match=r"dog/4\.png -> .*elsewhere\.png\. .*--allow-outside-links"
    ):
        prepare_vit_data(parse_vit_arguments(argv))
    data = prepare_vit_data(parse_vit_arguments(argv + ["--allow-outside-links"]))
    assert sum(data.split_sizes.values()) == 9

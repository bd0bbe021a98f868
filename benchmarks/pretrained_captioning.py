"""Does a pretrained ViT image encoder caption a small folder better than one from scratch?

Usage:

    python -m benchmarks.pretrained_captioning                     # about 35 min, 2-core CPU
    python -m benchmarks.pretrained_captioning --arms scratch      # the from-scratch arm only
    python -m benchmarks.pretrained_captioning \
        --arms pretrained,pretrained_finetuned,pretrained_top_block
    python -m benchmarks.pretrained_captioning --pretrain-data strip_cells

The steps, each skipped when what it writes under `--output-dir` is there
already and was made from the same inputs (a run killed part way resumes;
the example scripts resume their own runs; a step whose command or input
changed is run again from the start):

1. data (`benchmarks.learning_datasets`): a large class folder for
   pretraining, as a user with many labelled images of the same kind
   would have it: by default (`--pretrain-data strip_position`,
   `make_strip_position_folder`) images of the strips' own size, each with
   one glyph drawn as the caption strips draw theirs in one of the strip's
   cells chosen at random, the other cells empty background, its class the
   glyph (a ViT trained 16 epochs on it, 20 minutes on a shared 2-core
   CPU, classifies 0.49 of its test images); with `strip_cells`
   (`make_strip_cell_folder`, from
   `make_glyph_caption_folder`) the same glyphs on images of one cell's
   size; with `glyphs`, `make_glyph_classification_folder`'s, which fill
   their image (a ViT trained on those named only 0.39 of the strips'
   glyphs, one cell each); a SMALL glyph caption folder for training the
   captioners (`make_glyph_caption_folder`, seed 0) and a held-out caption
   folder (seed 1);
2. pretraining: `examples/train_vit.py --dataset folder:PRETRAIN` at the
   pretraining images' size (`--image-size`, their longer side) (its
   'small' ViT: 64 wide, 4 blocks of 4 heads, MLP 128, 4-pixel patches, a
   class token); each pretraining data has its own folders
   (`vit_pretrain_DATA`, `hf_vit_DATA`, `captioner_ARM_DATA`);
3. its last checkpoint (`checkpoints/epoch_NNN.keras`) written as a Hugging
   Face `ViTForImageClassification` folder
   (`benchmarks.huggingface_vit_folders`), read back and checked against
   it, and scored on the held-out strips' glyphs, one cell each (a
   checkpoint of the strips' size sees the strip with its other cells
   painted over; `held_out_cell_accuracy`: what pretraining taught before
   captioning);
4. arm "scratch": `examples/train_captioning.py --model vit --dataset
   folder:TRAIN --export DIR`, its encoder of the checkpoint's architecture
   (`--encoder-layers`, `--patch-size` of its config and `--patch-stem
   linear`) with random weights;
5. arm "pretrained": the same command with `--init-from HF_FOLDER` in place
   of the encoder flags (with a pretrained encoder, `--encoder-layers`
   counts new blocks on top of it): the encoder frozen, as the script has
   it. The captioner works at the checkpoint's image size; a checkpoint of
   another size than the strips' (`strip_cells`, `glyphs`) gets
   `--image-size` of the strips (the checkpoint's square would squeeze
   three glyphs into one glyph's cell; at the strips' size its position
   table is stretched and the glyphs keep their pretraining scale). Arm
   "pretrained_finetuned" (`--arms`) adds `--train-encoder`, arm
   "pretrained_top_block" `--encoder-layers 1` (one new block, trained, on
   the frozen encoder). Run only when `examples/train_captioning.py --help`
   lists `--init-from` (else recorded as not run); `--pretrained-flags`
   adds flags to these arms alone;
6. every arm's exported SavedModel captions the held-out folder through its
   serving signature (`benchmarks.learning_scores.score_captioner`): exact
   captions, BLEU, attention on the named glyph (`score_captioner`), words
   right at their position (`word_accuracy`), and the wrong captions.

The arms share the decoder (`--hidden-dim` and `--num-heads` of the
checkpoint's config, the script's two blocks), the image size (the strips'
own: the scratch arm's script derives it from the median training image),
`--train-steps` (the script's own aim of 5000 optimizer steps is too many
for this CPU budget) and `--seed`. An optional arm "scratch_defaults"
(`--arms`) trains the captioner with all the script's defaults (one encoder
block, a convolutional patch stem, two heads), for reference. The payload
goes to `benchmarks/results/pretrained_captioning.json`, with the results
of arms not run this time kept from its earlier runs on the same folders
(`merge_earlier`): pretrained arms are told apart by their
`pretrain_data`.

Example (the commands, without running them):

>>> from benchmarks.pretrained_captioning import captioner_command, parse_args
>>> args = parse_args(["--output-dir", "runs/x"])
>>> config = {"hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4,
...     "patch_size": 4}
>>> pretrained = captioner_command(args, "pretrained", config)
>>> pretrained[pretrained.index("--init-from") + 1].endswith("hf_vit_strip_position")
True
>>> "--image-size" in captioner_command(args, "pretrained", dict(config, image_size=[32, 96]))
False
>>> captioner_command(args, "scratch", config)[-6:]  # in place of --init-from
['--encoder-layers', '4', '--patch-size', '4', '--patch-stem', 'linear']
"""

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import time

from benchmarks import learning
from benchmarks import learning_datasets as datasets

REPOSITORY = learning.REPOSITORY
RESULTS_DIR = os.path.join(REPOSITORY, "benchmarks", "results")
NAME = "pretrained_captioning"
TITLE = (
    "Pretrained ViT encoder vs from scratch: held-out exact captions of a ViT captioner "
    "trained on a small glyph caption folder"
)
VIT_SCRIPT = learning.SCRIPTS["vit"]
CAPTIONING_SCRIPT = learning.SCRIPTS["captioning"]
ARMS = (
    "scratch",
    "pretrained",
    "pretrained_finetuned",
    "pretrained_top_block",
    "scratch_defaults",
)
PRETRAINED_ARMS = ("pretrained", "pretrained_finetuned", "pretrained_top_block")
INIT_FROM = "--init-from"
# What the pretraining folder's images are (see `make_folders`).
PRETRAIN_DATA = ("strip_position", "strip_cells", "glyphs")
# Epochs of each pretraining by default: a step on whole strips (three times the patches)
# costs about three times a step on cells, hence fewer.
PRETRAIN_EPOCHS = {"strip_position": 16, "strip_cells": 25, "glyphs": 25}
WRONG_CAPTIONS_KEPT = 10
# Bumped when score_export reports something new: earlier scores are then made again.
SCORES_VERSION = 2
READBACK_IMAGES = 32


def parse_args(argv=None):
    """The command line: sizes, epochs, arms and where to write."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--output-dir", default=os.path.join("runs", NAME))
    parser.add_argument(
        "--results-dir",
        default=RESULTS_DIR,
        help="folder of pretrained_captioning.json (default: benchmarks/results)",
    )
    parser.add_argument(
        "--arms",
        default="scratch,pretrained",
        help=f"comma-separated arms among {', '.join(ARMS)} (default: scratch,pretrained)",
    )
    parser.add_argument(
        "--pretrain-data",
        choices=PRETRAIN_DATA,
        default="strip_position",
        help="'strip_position': images of the caption strips' size, one glyph drawn as "
        "the strips draw theirs in one of their cells chosen at random, the others "
        "empty background, sorted into class folders; 'strip_cells': the same glyphs "
        "on one cell's image (make_glyph_caption_folder at one cell's size); 'glyphs': "
        "make_glyph_classification_folder's glyphs, which fill their image "
        "(default: strip_position)",
    )
    parser.add_argument("--pretrain-per-class", type=int, default=300)
    parser.add_argument("--pretrain-classes", default="0123456789")
    parser.add_argument(
        "--pretrain-epochs",
        type=int,
        default=None,
        help="train_vit.py --epochs of the pretraining (default: 16 for strip_position, else 25)",
    )
    parser.add_argument(
        "--pretrain-image-size",
        type=int,
        default=None,
        help="'glyphs': side of the pretraining images (default: the caption strips' "
        "height, one glyph cell of them); 'strip_cells' are one cell of a strip and "
        "'strip_position' a whole strip",
    )
    parser.add_argument("--train-images", type=int, default=150)
    parser.add_argument("--held-out-images", type=int, default=300)
    parser.add_argument("--caption-height", type=int, default=32)
    parser.add_argument("--caption-width", type=int, default=96)
    parser.add_argument("--glyphs-per-image", type=int, default=3)
    parser.add_argument(
        "--train-steps",
        type=int,
        default=600,
        help="--train-steps of every captioner arm (the most optimizer steps; default 600)",
    )
    parser.add_argument("--seed", type=int, default=0, help="--seed of every training run")
    parser.add_argument(
        "--pretrained-flags",
        default="",
        help="more flags of the pretrained arm's command, one string (e.g. "
        '--pretrained-flags="--encoder-layers 1")',
    )
    parser.add_argument("--timeout", type=int, default=None, help="seconds per training run")
    args = parser.parse_args(argv)
    args.arms = [arm.strip() for arm in args.arms.split(",") if arm.strip()]
    unknown = [arm for arm in args.arms if arm not in ARMS]
    if unknown:
        parser.error(f"--arms must name arms among {ARMS}. Received: {unknown}")
    cell = (args.caption_height, args.caption_width // args.glyphs_per_image)
    strip = (args.caption_height, args.caption_width)
    fixed = {"strip_cells": ("strip cells", cell), "strip_position": ("strips", strip)}
    if args.pretrain_data in fixed:
        what, (height, width) = fixed[args.pretrain_data]
        if args.pretrain_image_size not in (None, max(height, width)):
            parser.error(f"--pretrain-image-size: {what} are {height}x{width} pixels; leave it out")
        # train_vit.py's --image-size is the longer side; the images keep their aspect ratio.
        args.pretrain_image_size = max(height, width)
    elif args.pretrain_image_size is None:
        args.pretrain_image_size = args.caption_height
    if args.pretrain_epochs is None:
        args.pretrain_epochs = PRETRAIN_EPOCHS[args.pretrain_data]
    args.output_dir = os.path.abspath(args.output_dir)
    return args


def _log(message):
    print(f"[{NAME}] {message}", file=sys.stderr, flush=True)


def _paths(args):
    """The folders the steps write, under `args.output_dir`; one pretraining per data."""
    root = args.output_dir
    return {
        "data": os.path.join(root, "data"),
        "pretrain_run": os.path.join(root, f"vit_pretrain_{args.pretrain_data}"),
        "hf_vit": os.path.join(root, f"hf_vit_{args.pretrain_data}"),
        "steps": os.path.join(root, "steps"),
    }


def _arm_name(args, arm):
    """An arm's name for its folders and step records: pretrained arms name their data."""
    return f"{arm}_{args.pretrain_data}" if arm in PRETRAINED_ARMS else arm


def _arm_paths(args, arm):
    """`(run folder, export folder)` of a captioner arm."""
    run = os.path.join(args.output_dir, f"captioner_{_arm_name(args, arm)}")
    return run, run + "_export"


# ---------------------------------------------------------------------------
# Step records: what each step ran, from which inputs, and how long it took


def _step_record(args, name):
    path = os.path.join(_paths(args)["steps"], name + ".json")
    if not os.path.exists(path):
        return None
    with open(path) as handle:
        return json.load(handle)


def _save_step_record(args, name, record):
    folder = _paths(args)["steps"]
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name + ".json"), "w") as handle:
        json.dump(record, handle, indent=1)


def _flag_pairs(command):
    """The command's flags as sorted `(flag, value)` pairs: its meaning, whatever the order."""
    pairs, index = [], 0
    while index < len(command):
        token = command[index]
        takes_value = index + 1 < len(command) and not command[index + 1].startswith("--")
        if token.startswith("--") and takes_value:
            pairs.append((token, command[index + 1]))
            index += 2
        else:
            pairs.append((token, None))
            index += 1
    return sorted(pairs, key=lambda pair: (pair[0], pair[1] or ""))


def _key(command, **inputs):
    """What a step's output depends on, as JSON: its command's flags and its inputs."""
    return json.loads(json.dumps({"flags": _flag_pairs(command), **inputs}))


def _run(args, name, command, run_dir, outputs, key):
    """Runs `command` unless its record holds the same `key`, exit 0, and `outputs` exist.

    A run begun with another key (other flags or inputs) is removed first,
    with `outputs`; one begun with this key and interrupted is resumed by
    the script itself.

    Returns:
        the step record: command, key, return code, wall and CPU seconds,
        when it finished, and the log's tail on failure.
    """
    record = _step_record(args, name)
    if record is not None and record.get("key") == key:
        if record.get("code") == 0 and all(os.path.exists(path) for path in outputs):
            _log(f"{name}: done already ({record['wall_s']:.0f} s), skipped")
            return record
    else:
        for path in (run_dir, run_dir + ".log", *outputs):
            if os.path.isdir(path):
                shutil.rmtree(path)
            elif os.path.exists(path):
                os.remove(path)
    _save_step_record(args, name, {"command": shlex.join(command), "key": key, "code": None})
    _log(f"{name}: {shlex.join(command)}")
    # The log sits beside the run folder: the scripts refuse a folder of files they did not write.
    code, wall, cpu, tail = learning.run_command(command, run_dir + ".log", args.timeout)
    record = {
        "command": shlex.join(command),
        "key": key,
        "code": code,
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "finished_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
        "log_tail": tail if code != 0 else [],
    }
    _save_step_record(args, name, record)
    _log(f"{name}: exit {code} after {wall:.0f} s ({cpu:.0f} CPU s)")
    return record


# ---------------------------------------------------------------------------
# 1. Data


def _made(target, maker, kwargs):
    """`maker(target, **kwargs)`'s description, reused when a stamp of the same kwargs exists."""
    stamp = target + ".json"
    kwargs = json.loads(json.dumps(kwargs))
    if os.path.exists(stamp):
        with open(stamp) as handle:
            previous = json.load(handle)
        if previous["kwargs"] == kwargs:
            return previous
    if os.path.isdir(target):
        shutil.rmtree(target)
    _log(f"making {target} ...")
    made = {"kwargs": kwargs, "info": json.loads(json.dumps(maker(target, **kwargs)))}
    with open(stamp, "w") as handle:
        json.dump(made, handle)
    return made


def make_strip_cell_folder(directory, num_per_class, height, width, classes, seed):
    """A class folder of glyphs drawn as `make_glyph_caption_folder` draws those of its strips.

    One glyph per `(height, width)` image (a strip's cell): at 55-100% of
    the height, narrower than tall, at a random place, dark on light grey.
    `make_glyph_caption_folder` writes the images with each glyph's
    character as its caption; they are then moved into one folder per
    character. The classes are drawn at random, so their counts are about
    `num_per_class` each.

    Returns:
        dict with "directory", "class_names", "class_counts", "num_images"
        and "image_size", as `make_glyph_classification_folder` returns.
    """
    staging = os.path.join(directory, "_strips")
    datasets.make_glyph_caption_folder(
        staging,
        num_images=num_per_class * len(classes),
        height=height,
        width=width,
        glyphs_per_image=1,
        words=tuple(classes),
        glyphs=classes,
        seed=seed,
    )
    counts = {name: 0 for name in classes}
    with open(os.path.join(staging, datasets.CAPTIONS_FILE), encoding="utf-8") as handle:
        for line in handle:
            name, caption = line.rstrip("\n").split("\t")
            os.makedirs(os.path.join(directory, caption), exist_ok=True)
            os.replace(os.path.join(staging, name), os.path.join(directory, caption, name))
            counts[caption] += 1
    shutil.rmtree(staging)
    return {
        "directory": directory,
        "class_names": sorted(classes),
        "class_counts": counts,
        "num_images": sum(counts.values()),
        "image_size": [height, width],
    }


def make_strip_position_folder(directory, num_per_class, height, width, cells, classes, seed):
    """A class folder of strips of `(height, width)`, each with one glyph in one of its cells.

    The glyph is drawn as `make_glyph_caption_folder` draws a strip's glyph
    in its cell (`make_strip_cell_folder`'s image of one cell, `width //
    cells` wide), and pasted into one of the strip's `cells` cells chosen at
    random, where the caption strips would draw their glyph of that slot;
    the other cells are the strips' empty background. A classifier of these
    has to name a glyph wherever along the strip it stands.

    Returns:
        `make_strip_cell_folder`'s description, with "image_size" `(height,
        width)` and "cell_counts", the images with their glyph in each cell.

    Example:

    >>> import tempfile
    >>> import numpy as np
    >>> from PIL import Image
    >>> from benchmarks.pretrained_captioning import make_strip_position_folder
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     info = make_strip_position_folder(folder, 4, 32, 96, 3, "01", seed=0)
    ...     first = os.path.join(folder, "0", sorted(os.listdir(os.path.join(folder, "0")))[0])
    ...     pixels = np.asarray(Image.open(first))
    >>> info["num_images"], pixels.shape, sum(info["cell_counts"])
    (8, (32, 96, 3), 8)
    >>> sum(bool((pixels[:, i * 32 : (i + 1) * 32] != 235).any()) for i in range(3))
    1
    """
    import numpy as np
    from PIL import Image

    if width % cells:
        raise ValueError(f"`width` must be a multiple of `cells`. Received: {width}, {cells}")
    cell_width = width // cells
    info = make_strip_cell_folder(directory, num_per_class, height, cell_width, classes, seed)
    # Its own stream: the glyphs are those make_strip_cell_folder draws with `seed`.
    rng = np.random.default_rng([seed, 1])
    cell_counts = [0] * cells
    for name in sorted(info["class_names"]):
        folder = os.path.join(directory, name)
        for file in sorted(os.listdir(folder)):
            path = os.path.join(folder, file)
            glyph = np.asarray(Image.open(path).convert("RGB"))
            # The strips' background: the most common colour of the cell, where no ink is.
            colours, counts = np.unique(glyph.reshape(-1, 3), axis=0, return_counts=True)
            strip = np.empty((height, width, 3), np.uint8)
            strip[:] = colours[np.argmax(counts)]
            cell = int(rng.integers(cells))
            strip[:, cell * cell_width : (cell + 1) * cell_width] = glyph
            Image.fromarray(strip).save(path)
            cell_counts[cell] += 1
    return dict(info, image_size=[height, width], cell_counts=cell_counts)


def _cell_width(args):
    return args.caption_width // args.glyphs_per_image


def make_folders(args):
    """Step 1: `{"pretrain", "train", "held_out"}` -> `{"kwargs": ..., "info": ...}`."""
    root = _paths(args)["data"]
    os.makedirs(root, exist_ok=True)
    caption = dict(
        height=args.caption_height,
        width=args.caption_width,
        glyphs_per_image=args.glyphs_per_image,
    )
    if args.pretrain_data == "strip_position":
        pretrain = _made(
            os.path.join(root, "pretrain_strip_position"),
            make_strip_position_folder,
            dict(
                num_per_class=args.pretrain_per_class,
                height=args.caption_height,
                width=args.caption_width,
                cells=args.glyphs_per_image,
                classes=args.pretrain_classes,
                seed=0,
            ),
        )
    elif args.pretrain_data == "strip_cells":
        pretrain = _made(
            os.path.join(root, "pretrain_strip_cells"),
            make_strip_cell_folder,
            dict(
                num_per_class=args.pretrain_per_class,
                height=args.caption_height,
                width=_cell_width(args),
                classes=args.pretrain_classes,
                seed=0,
            ),
        )
    else:
        pretrain = _made(
            os.path.join(root, "pretrain"),
            datasets.make_glyph_classification_folder,
            dict(
                num_per_class=args.pretrain_per_class,
                size=args.pretrain_image_size,
                classes=args.pretrain_classes,
                seed=0,
            ),
        )
    return {
        "pretrain": pretrain,
        "train": _made(
            os.path.join(root, "train"),
            datasets.make_glyph_caption_folder,
            dict(caption, num_images=args.train_images, seed=0),
        ),
        "held_out": _made(
            os.path.join(root, "held_out"),
            datasets.make_glyph_caption_folder,
            dict(caption, num_images=args.held_out_images, seed=1),
        ),
    }


# ---------------------------------------------------------------------------
# 2-3. Pretraining, and its checkpoint as a Hugging Face folder


def pretrain_command(args, made):
    """Step 2's command: the 'small' ViT on the pretraining folder, at one glyph cell's size."""
    return [
        sys.executable,
        VIT_SCRIPT,
        "--dataset",
        f"folder:{made['pretrain']['info']['directory']}",
        "--image-size",
        str(args.pretrain_image_size),
        "--epochs",
        str(args.pretrain_epochs),
        "--seed",
        str(args.seed),
        "--output-dir",
        _paths(args)["pretrain_run"],
        "--no-html",
        "--quiet",
    ]


def pretrain(args, made):
    """Step 2: trains the ViT; its step record with the run's metrics."""
    run_dir = _paths(args)["pretrain_run"]
    command = pretrain_command(args, made)
    key = _key(command, data=made["pretrain"]["kwargs"])
    outputs = [os.path.join(run_dir, "metrics.json")]
    record = _run(args, f"pretrain_{args.pretrain_data}", command, run_dir, outputs, key)
    return dict(record, metrics=learning.read_run_metrics(run_dir))


def _last_checkpoint(run_dir):
    folder = os.path.join(run_dir, "checkpoints")
    names = sorted(n for n in os.listdir(folder) if n.startswith("epoch_") and n.endswith(".keras"))
    if not names:
        raise RuntimeError(f"{folder} holds no epoch_NNN.keras checkpoint")
    return os.path.join(folder, names[-1])


def write_checkpoint_folder(args, made, pretraining):
    """Step 3: the pretrained ViT as a Hugging Face folder; `(its config.json, step record)`.

    The folder is read back with `VisionTransformer.from_preset` and its
    logits compared with the checkpoint's on pretraining images: the
    record's "readback_max_abs_logit_difference".
    """
    folder = _paths(args)["hf_vit"]
    record = _step_record(args, f"hf_vit_{args.pretrain_data}")
    key = {"pretrained_utc": pretraining["finished_utc"]}
    weights = os.path.join(folder, "model.safetensors")
    if record is None or record.get("key") != key or not os.path.exists(weights):
        checkpoint = _last_checkpoint(_paths(args)["pretrain_run"])
        record = dict(_write_and_check(checkpoint, folder, made), key=key)
        record["held_out_cell_accuracy"] = held_out_cell_accuracy(args, folder, made)
        record["written_utc"] = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
        _save_step_record(args, f"hf_vit_{args.pretrain_data}", record)
    with open(os.path.join(folder, "config.json")) as handle:
        return json.load(handle), record


def held_out_cell_accuracy(args, folder, made):
    """How many glyphs of the held-out strips the pretrained classifier names, one cell each.

    Every strip is cut into its `glyphs_per_image` slots (the caption
    maker draws glyph `i` inside slot `i`), each classified by the
    checkpoint read back from `folder`: what the pretraining taught about
    the strips' glyphs before any captioning. A checkpoint of the strips'
    own size ('strip_position') sees the whole strip with the other slots
    painted over in its background colour. None where the slots are not
    whole pixels or the classes are not digits.
    """
    import numpy as np

    from keras_attention.models import VisionTransformer

    classes = args.pretrain_classes
    if args.caption_width % args.glyphs_per_image or not classes.isdigit():
        return None
    images, references, _ = learning.held_out_captions(made["held_out"]["info"])
    width = _cell_width(args)
    model = VisionTransformer.from_preset(folder)
    if tuple(model.image_size) == (args.caption_height, args.caption_width):
        # A classifier of whole strips: each glyph alone, the other cells the background.
        background = np.median(images, axis=(1, 2), keepdims=True).astype(images.dtype)
        cells = []
        for index in range(args.glyphs_per_image):
            alone = np.broadcast_to(background, images.shape).copy()
            alone[:, :, index * width : (index + 1) * width] = images[
                :, :, index * width : (index + 1) * width
            ]
            cells.append(alone)
        cells = np.concatenate(cells)
    else:
        cells = np.concatenate(
            [
                images[:, :, index * width : (index + 1) * width]
                for index in range(args.glyphs_per_image)
            ]
        )
    truth = [
        reference.split()[index]
        for index in range(args.glyphs_per_image)
        for reference in references
    ]
    labels = model.classify(cells)
    named = [datasets.DIGIT_WORDS[int(label)] for label in labels]
    accuracy = float(np.mean([name == word for name, word in zip(named, truth)]))
    _log(f"the pretrained classifier names {accuracy:.3f} of the held-out strips' glyphs")
    return accuracy


def _write_and_check(checkpoint, folder, made):
    import keras
    import numpy as np

    from benchmarks.huggingface_vit_folders import write_huggingface_vit_folder
    from keras_attention.models import VisionTransformer

    _log(f"writing {checkpoint} as a Hugging Face ViT folder in {folder}")
    model = keras.saving.load_model(checkpoint, compile=False)
    write_huggingface_vit_folder(model, folder + ".partial")
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    os.replace(folder + ".partial", folder)
    images, _ = learning.held_out_classes(made["pretrain"]["info"])
    chosen = np.random.default_rng(0).permutation(len(images))[:READBACK_IMAGES]
    images = images[chosen]
    read_back = VisionTransformer.from_preset(folder)
    difference = float(np.abs(np.asarray(read_back(images)) - np.asarray(model(images))).max())
    _log(f"read back from {folder}: logits within {difference:.2e} of the checkpoint's")
    return {"checkpoint": checkpoint, "readback_max_abs_logit_difference": difference}


# ---------------------------------------------------------------------------
# 4-6. The captioner arms and their held-out scores


def captioner_command(args, arm, config):
    """Steps 4 and 5: the command of one captioner arm.

    Every arm: the training folder, `--train-steps`, `--seed`, its run and
    export folders. "scratch" and "pretrained" also share the decoder's
    `--hidden-dim` and `--num-heads` (the checkpoint's width and heads);
    "scratch" gives its own encoder the checkpoint's blocks, patch size and
    linear patch projection; "pretrained" passes `--init-from` instead (and `--image-size` of the
    strips where the checkpoint's is another), and `--pretrained-flags`;
    "pretrained_finetuned" adds `--train-encoder`, "pretrained_top_block"
    `--encoder-layers 1`; "scratch_defaults" leaves every size to the script.
    """
    run_dir, export = _arm_paths(args, arm)
    train = os.path.join(_paths(args)["data"], "train")
    command = [
        sys.executable,
        CAPTIONING_SCRIPT,
        "--model",
        "vit",
        "--dataset",
        f"folder:{train}",
        "--train-steps",
        str(args.train_steps),
        "--seed",
        str(args.seed),
        "--output-dir",
        run_dir,
        "--export",
        export,
        "--no-html",
        "--quiet",
    ]
    if arm == "scratch_defaults":
        return command
    command += [
        "--hidden-dim",
        str(config["hidden_size"]),
        "--num-heads",
        str(config["num_attention_heads"]),
    ]
    if arm == "scratch":
        return command + [
            "--encoder-layers",
            str(config["num_hidden_layers"]),
            "--patch-size",
            str(config["patch_size"]),
            "--patch-stem",
            "linear",
        ]
    # The strips' own size: the checkpoint's position table is resized to their patch grid,
    # and glyphs keep the scale they were pretrained at (the script's default, the
    # checkpoint's square, would squeeze three glyphs into one glyph's cell).
    # A checkpoint pretrained at the strips' size ('strip_position') keeps its own, the same.
    if tuple(_as_pair(config.get("image_size"))) != (args.caption_height, args.caption_width):
        command += ["--image-size", f"{args.caption_height}x{args.caption_width}"]
    command += [INIT_FROM, _paths(args)["hf_vit"]]
    if arm == "pretrained_finetuned":
        command.append("--train-encoder")
    if arm == "pretrained_top_block":
        command += ["--encoder-layers", "1"]  # one new block on top of the frozen encoder
    return command + shlex.split(args.pretrained_flags)


def _as_pair(size):
    """A Hugging Face config's `image_size`, an int or `[height, width]`, as a tuple."""
    if size is None:
        return ()
    return (size, size) if isinstance(size, int) else tuple(size)


def captioning_script_takes_init_from():
    """Whether `examples/train_captioning.py --help` lists `--init-from`."""
    result = subprocess.run(
        [sys.executable, CAPTIONING_SCRIPT, "--help"],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        check=False,
    )
    return INIT_FROM in result.stdout


def _caption_text(value):
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _recording(serve):
    """`serve` that also keeps every caption it answers, in order (`.captions`)."""
    captions = []

    def call(**inputs):
        outputs = serve(**inputs)
        captions.extend(_caption_text(caption) for caption in outputs["caption"].numpy())
        return outputs

    call.captions = captions
    return call


def score_export(export, made):
    """Step 6: held-out scores of an exported captioner, with its wrong captions."""
    from benchmarks import learning_scores

    images, references, boxes = learning.held_out_captions(made["held_out"]["info"])
    serve = _recording(learning_scores.load_serving(export))
    words = made["train"]["info"]["words"]
    scores = learning_scores.score_captioner(serve, images, references, boxes, words)
    wrong = [
        {"reference": reference, "caption": caption}
        for reference, caption in zip(references, serve.captions)
        if reference != caption
    ]
    scores["word_accuracy"] = word_accuracy(serve.captions, references)
    scores["wrong_count"] = len(wrong)
    scores["wrong"] = wrong[:WRONG_CAPTIONS_KEPT]
    return scores


def word_accuracy(captions, references):
    """Share of the references' words that the caption has at the same position.

    A finer score than exact captions where few are exact: "one two
    three" for "one five three" has 2 of 3 words right.

    Example:

    >>> from benchmarks.pretrained_captioning import word_accuracy
    >>> word_accuracy(["one two three", "four"], ["one five three", "four six"])
    0.6
    """
    right = total = 0
    for caption, reference in zip(captions, references):
        words, expected = caption.split(), reference.split()
        total += len(expected)
        right += sum(word == other for word, other in zip(words, expected))
    return right / total if total else None


def run_arm(args, arm, made, config, checkpoint_record, takes_init_from):
    """Steps 4-6 for one arm; its JSON record."""
    run_dir, export = _arm_paths(args, arm)
    command = captioner_command(args, arm, config)
    name = _arm_name(args, arm)
    record = {"arm": arm, "command": shlex.join(command), "run": True, "error": None}
    if arm in PRETRAINED_ARMS:
        record.update(pretrain_data=args.pretrain_data, pretrained_flags=args.pretrained_flags)
    if arm in PRETRAINED_ARMS and not takes_init_from:
        record.update(run=False, error=f"{CAPTIONING_SCRIPT} --help lists no {INIT_FROM}")
        _log(f"{arm}: not run ({record['error']})")
        return record
    inputs = {"data": made["train"]["kwargs"]}
    if arm in PRETRAINED_ARMS:
        inputs["checkpoint_written_utc"] = checkpoint_record["written_utc"]
    saved = os.path.join(export, "saved_model.pb")
    step = _run(args, f"captioner_{name}", command, run_dir, [saved], _key(command, **inputs))
    record.update(wall_s=step["wall_s"], cpu_s=step["cpu_s"], trained_utc=step["finished_utc"])
    record["script_metrics"] = learning.read_run_metrics(run_dir)
    if step["code"] != 0 or not os.path.exists(saved):
        record["error"] = f"exit {step['code']}: " + "\n".join(step["log_tail"])
        _log(f"{arm}: failed: {record['error']}")
        return record
    score_key = {
        "trained_utc": step["finished_utc"],
        "held_out": made["held_out"]["kwargs"],
        "version": SCORES_VERSION,
    }
    scores = _step_record(args, f"scores_{name}")
    if scores is None or scores.get("key") != score_key:
        _log(f"{arm}: scoring {export} on the held-out folder ...")
        scores = dict(score_export(export, made), key=score_key)
        _save_step_record(args, f"scores_{name}", scores)
    record["scores"] = {name: value for name, value in scores.items() if name != "key"}
    _log(
        f"{arm}: held-out exact {scores['exact_match']:.3f}, BLEU {scores['bleu']:.1f} "
        f"({step['wall_s']:.0f} s of training)"
    )
    return record


def _pretraining_summary(args, made, pretraining, config, checkpoint_record):
    """What one pretraining was and how well it classified: `settings["pretrainings"][data]`."""
    return {
        "folder": dict(made["pretrain"]["kwargs"]),
        "folder_images": made["pretrain"]["info"]["num_images"],
        "command": pretraining["command"],
        "epochs": args.pretrain_epochs,
        "wall_s": pretraining["wall_s"],
        "cpu_s": pretraining["cpu_s"],
        "test_accuracy": pretraining["metrics"].get("test_accuracy"),
        "split_sizes": pretraining["metrics"].get("split_sizes"),
        "batch_size": pretraining["metrics"].get("batch_size"),
        "checkpoint": checkpoint_record["checkpoint"],
        "readback_max_abs_logit_difference": checkpoint_record["readback_max_abs_logit_difference"],
        "held_out_cell_accuracy": checkpoint_record.get("held_out_cell_accuracy"),
        "checkpoint_config": {
            key: config[key]
            for key in (
                "hidden_size",
                "num_hidden_layers",
                "num_attention_heads",
                "intermediate_size",
                "patch_size",
                "image_size",
            )
        },
    }


def _settings(args, made, pretraining, config, checkpoint_record, takes_init_from):
    """The payload's settings: folder sizes and seeds, the pretraining, the shared flags."""
    summary = _pretraining_summary(args, made, pretraining, config, checkpoint_record)
    return {
        "output_dir": args.output_dir,
        "seed": args.seed,
        "arms": args.arms,
        "folders": {split: dict(made[split]["kwargs"]) for split in ("train", "held_out")},
        "folder_images": {
            split: made[split]["info"]["num_images"] for split in ("train", "held_out")
        },
        "pretrain_data": args.pretrain_data,
        "pretrainings": {args.pretrain_data: summary},
        "captioner_train_steps": args.train_steps,
        "captioning_script_takes_init_from": takes_init_from,
    }


def _earlier_pretrainings(settings):
    """An earlier payload's pretrainings by data (one written before there were several too)."""
    if "pretrainings" in settings:
        return dict(settings["pretrainings"])
    if "pretraining" not in settings:
        return {}
    summary = dict(
        settings["pretraining"],
        folder=settings["folders"].get("pretrain"),
        folder_images=settings.get("folder_images", {}).get("pretrain"),
    )
    return {settings.get("pretrain_data", "strip_cells"): summary}


def _identity(record):
    """What tells one result apart: its arm, and for a pretrained arm its pretraining data."""
    return record["arm"], record.get("pretrain_data")


def merge_earlier(previous, records, settings):
    """This run's records and settings, with the earlier payload's results not measured again.

    Earlier results are kept when they were measured on the same training
    and held-out folders, captioner steps and seed; a pretrained arm keeps
    its `pretrain_data` (and flags), whose pretraining stays in
    `settings["pretrainings"]`.

    Example:

    >>> from benchmarks.pretrained_captioning import merge_earlier
    >>> same = {"folders": {"train": 1, "held_out": 2}, "captioner_train_steps": 600,
    ...     "seed": 0}
    >>> old = {"settings": dict(same, pretrain_data="strip_cells", pretrained_flags="",
    ...     pretraining={"test_accuracy": 0.9}, folder_images={}),
    ...     "results": [{"arm": "scratch"}, {"arm": "pretrained"}]}
    >>> new = [{"arm": "pretrained", "pretrain_data": "strip_position"}]
    >>> records, settings = merge_earlier(old, new, dict(same,
    ...     pretrainings={"strip_position": {"test_accuracy": 0.8}}))
    >>> [(r["arm"], r.get("pretrain_data")) for r in records]
    [('scratch', None), ('pretrained', 'strip_position'), ('pretrained', 'strip_cells')]
    >>> sorted(settings["pretrainings"])
    ['strip_cells', 'strip_position']
    """
    if not previous:
        return records, settings
    earlier = previous.get("settings", {})
    if _comparable(earlier) != _comparable(settings):
        _log("earlier results were measured on other folders or steps: not kept")
        return records, settings
    measured = {_identity(record) for record in records}
    kept = []
    for record in previous.get("results", []):
        record = dict(record)
        if record["arm"] in PRETRAINED_ARMS and "pretrain_data" not in record:
            record["pretrain_data"] = earlier.get("pretrain_data", "strip_cells")
            record["pretrained_flags"] = earlier.get("pretrained_flags", "")
        if _identity(record) not in measured:
            kept.append(record)
    pretrainings = _earlier_pretrainings(earlier)
    pretrainings.update(settings["pretrainings"])
    used = {record.get("pretrain_data") for record in kept + list(records)}
    settings = dict(
        settings,
        pretrainings={data: pretrainings[data] for data in PRETRAIN_DATA if data in used},
    )
    order = {arm: index for index, arm in enumerate(ARMS)}
    data_order = {data: index for index, data in enumerate(PRETRAIN_DATA)}
    merged = sorted(
        list(records) + kept,
        key=lambda r: (order[r["arm"]], data_order.get(r.get("pretrain_data"), -1)),
    )
    if kept:
        _log(f"kept {len(kept)} earlier results: {[_identity(r) for r in kept]}")
    return merged, settings


def _comparable(settings):
    """What earlier results must share with this run's to be kept in its payload."""
    folders = settings.get("folders", {})
    return (
        folders.get("train"),
        folders.get("held_out"),
        settings.get("captioner_train_steps"),
        settings.get("seed"),
    )


def _read_payload(path):
    if not os.path.exists(path):
        return None
    with open(path) as handle:
        return json.load(handle)


def main(argv=None):
    """Runs the steps; returns the path of the JSON written."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from benchmarks import timing

    made = make_folders(args)
    pretraining = pretrain(args, made)
    if pretraining["code"] != 0:
        raise SystemExit(
            f"pretraining failed: exit {pretraining['code']}\n" + "\n".join(pretraining["log_tail"])
        )
    config, checkpoint_record = write_checkpoint_folder(args, made, pretraining)
    takes_init_from = captioning_script_takes_init_from()
    records = [
        run_arm(args, arm, made, config, checkpoint_record, takes_init_from) for arm in args.arms
    ]
    settings = _settings(args, made, pretraining, config, checkpoint_record, takes_init_from)
    previous = _read_payload(os.path.join(args.results_dir, NAME + ".json"))
    records, settings = merge_earlier(previous, records, settings)
    notes = [
        "exact = the served caption string equals the reference; the held-out folder "
        "(seed 1) is never seen in training",
        "the captioning script splits the training folder itself into train, validation "
        "and test at random (--seed); its own test scores are in script_metrics",
        "wall_s: the training command's wall time (start-up, training, its own test "
        "captions and the export included), on a shared 2-core CPU",
        "the results of arms not run this time are kept from earlier runs on the same "
        "folders, steps and seed (trained_utc says when); a pretrained arm names its "
        "pretrain_data, whose pretraining is settings.pretrainings[pretrain_data]",
    ]
    payload = timing.make_payload(NAME, TITLE, records, False, "cpu", settings, notes=notes)
    path = timing.write_json(payload, args.results_dir)
    _log(f"wrote {path}")
    for record in records:
        scores = record.get("scores") or {}
        _log(
            f"{record['arm']} ({record.get('pretrain_data')}): held-out exact "
            f"{scores.get('exact_match')}, "
            f"wall {record.get('wall_s')} s, error {record['error']}"
        )
    return path


if __name__ == "__main__":
    main()

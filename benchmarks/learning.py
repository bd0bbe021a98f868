"""What the example models learn on data sets they were not written for.

Usage:

    python -m benchmarks.learning                    # every case: hours on a 2-core CPU
    python -m benchmarks.learning --quick            # tiny sizes, 1 epoch, one set per model
    python -m benchmarks.learning --only vit         # a family, model, data set or case name
    python -m benchmarks.learning --only captioning/transformer/glyph_digits
    python -m benchmarks.learning --missing          # the cases not yet run (or failed)

For every model (captioning: Show, Attend and Tell and Transformer; ViT;
translation: Transformer and RNN) and each of its data sets (made by
`benchmarks.learning_datasets` and `benchmarks.learning_digit_folders`:
training data with seed 0, held-out data with seed 1), the run writes the
data under `--output-dir`, trains with the example script as a user would
(`--dataset folder:DIR` or `tsv:PATH`, `--output-dir`, `--export`, and
`--image-size` for the ViT; no other hyperparameter: the scripts derive
their own; data sets with `user_epochs` run a second time with the
`--epochs` a user passes, as case ".../epochs_N"), takes the process CPU time of
the run, loads the exported SavedModel with `tf.saved_model.load` and scores
it on the held-out items (`benchmarks.learning_scores`). Data sets are
marked "tune" (look at these while changing the models) or "report" (only
report them). A keras-hub ViT trained from scratch on the same split, for
the same epochs and batch size as ours (`benchmarks.keras_hub_vit_peer`),
is scored beside our ViT on the glyph digits.

Results go to `benchmarks/results/learning.json` (cases of an earlier run
that this one did not run are kept) and to the "Learning quality" table of
benchmarks/README.md; a quick run writes `learning.json` under
`--output-dir` and leaves the README alone. A failed run is recorded with
its command and the end of its log, and the others go on.

Example (the cases, without running them):

>>> from benchmarks.learning import select_cases
>>> [case.name for case in select_cases(["nmt/rnn"], quick=False)][:4]
['nmt/rnn/dates', 'nmt/rnn/titlecase', 'nmt/rnn/numbers', 'nmt/rnn/transliterate']
"""

import argparse
import dataclasses
import json
import os
import resource
import shutil
import subprocess
import sys
import time

import numpy as np

from benchmarks import learning_datasets as datasets
from benchmarks import learning_digit_folders as digit_folders

REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS_PATH = os.path.join(REPOSITORY, "benchmarks", "results", "learning.json")
README = os.path.join(REPOSITORY, "benchmarks", "README.md")
SECTION = "## Learning quality"
BEGIN, END = "<!-- learning:begin -->", "<!-- learning:end -->"
TITLE = "Learning quality: held-out scores of the example models on data sets made in code"
LOG_TAIL_LINES = 25


@dataclasses.dataclass(frozen=True)
class DataSet:
    """One data set of the benchmark: how to make it and what it is for.

    `maker` names a function of `benchmarks.learning_datasets` or
    `benchmarks.learning_digit_folders`; `params` are its keyword arguments,
    `train` and `held_out` its sizes for the two seeds (and `quick_*` in a
    quick run); `role` is "tune" or "report". `user_epochs` (None or an int)
    adds, for every model of the family, a second case that passes
    `--epochs` as a user does instead of letting the script choose.
    """

    name: str
    family: str
    role: str
    maker: str
    params: dict
    train: int
    held_out: int
    quick_train: int
    quick_held_out: int
    peer: bool = False
    user_epochs: int = None


# The size argument of each maker: images, images per class, or pairs.
_COUNT_ARGUMENT = {
    "make_glyph_caption_folder": "num_images",
    "make_object_scene_caption_folder": "num_images",
    "make_glyph_classification_folder": "num_per_class",
    "make_text_task_tsv": "num_pairs",
    "make_compound_tsv": "num_pairs",
    "make_number_word_tsv": "num_pairs",
}

DATA_SETS = (
    DataSet(
        "glyph_digits",
        "captioning",
        "tune",
        "make_glyph_caption_folder",
        dict(height=32, width=96, glyphs_per_image=3),
        3000,
        300,
        48,
        8,
        user_epochs=20,
    ),
    DataSet(
        "object_relations",
        "captioning",
        "tune",
        "make_object_scene_caption_folder",
        dict(height=64, width=96, objects_per_image=(2, 3)),
        2000,
        300,
        48,
        8,
    ),
    DataSet(
        "glyph_colour_varlen",
        "captioning",
        "report",
        "make_glyph_caption_folder",
        dict(height=40, width=128, glyphs_per_image=(2, 4), colour=True, noise=0.03),
        3000,
        300,
        48,
        8,
    ),
    DataSet(
        "object_relations_tall",
        "captioning",
        "report",
        "make_object_scene_caption_folder",
        dict(height=80, width=60, objects_per_image=(2, 3)),
        2000,
        300,
        48,
        8,
    ),
    DataSet(
        "glyph_digits",
        "vit",
        "tune",
        "make_glyph_classification_folder",
        dict(size=32, classes="0123456789"),
        135,
        50,
        6,
        2,
        peer=True,
    ),
    DataSet(
        "glyph_letters_noisy",
        "vit",
        "report",
        "make_glyph_classification_folder",
        dict(size=32, classes="ACEFHKLMNTVXYZ", noise=0.08),
        100,
        40,
        6,
        2,
    ),
    DataSet(
        "glyph_digits_tall",
        "vit",
        "report",
        "make_glyph_classification_folder",
        dict(size=(40, 24), classes="0123456789"),
        135,
        50,
        6,
        2,
    ),
    DataSet("dates", "nmt", "tune", "make_text_task_tsv", dict(task="dates"), 5000, 500, 160, 16),
    DataSet(
        "titlecase", "nmt", "tune", "make_text_task_tsv", dict(task="titlecase"), 5000, 500, 160, 16
    ),
    DataSet(
        "numbers", "nmt", "report", "make_text_task_tsv", dict(task="numbers"), 5000, 500, 160, 16
    ),
    DataSet(
        "transliterate",
        "nmt",
        "report",
        "make_text_task_tsv",
        dict(task="transliterate"),
        5000,
        500,
        160,
        16,
    ),
    # Long compounds: one target word of 20-60 characters, spelled in as many
    # pieces, its parts in the reverse order of the source's.
    DataSet(
        "compounds_german",
        "nmt",
        "tune",
        "make_compound_tsv",
        dict(language="german", parts=(3, 6)),
        20000,
        500,
        160,
        16,
    ),
    DataSet(
        "compounds_dutch",
        "nmt",
        "report",
        "make_compound_tsv",
        dict(language="dutch", parts=(2, 7), separators=(" ", "-")),
        20000,
        500,
        160,
        16,
    ),
    # Numbers 0..999,999 in English words -> their name as one word: up to 90
    # characters, assembled from a dozen parts, units before tens in Dutch; a
    # small file (3,000 pairs), where an RNN that loses its place shows it.
    DataSet(
        "number_words_dutch",
        "nmt",
        "tune",
        "make_number_word_tsv",
        dict(language="dutch", spread="values"),
        3000,
        1000,
        160,
        16,
    ),
    DataSet(
        "number_words_finnish",
        "nmt",
        "report",
        "make_number_word_tsv",
        dict(language="finnish", spread="values"),
        3000,
        1000,
        160,
        16,
    ),
)

# Digit folders as users bring them: pixel-art digits (8 x 8 bitmaps of 16 grey levels
# enlarged 4 times, as scikit-learn's digits written to PNGs) and 1-bit digits drawn on a
# 16 x 16 grid enlarged twice; for the captioners, strips of three of them. The ViTs and
# captioners also run with the epochs a user passes.
_COUNT_ARGUMENT.update(
    make_pixel_digit_folder="num_per_class",
    make_pixel_digit_strip_folder="num_images",
    make_handwritten_digit_folder="num_per_class",
)
_ONE_BIT_DIGITS = dict(grid=16, scale=2, levels=1, dark_ink=True)
DIGIT_FOLDER_SETS = (
    DataSet(
        "pixel_digits",
        "vit",
        "tune",
        "make_pixel_digit_folder",
        dict(grid=8, scale=4),
        135,
        50,
        6,
        2,
        user_epochs=40,
    ),
    DataSet(
        "bitmap_digits",
        "vit",
        "report",
        "make_pixel_digit_folder",
        _ONE_BIT_DIGITS,
        135,
        50,
        6,
        2,
        user_epochs=40,
    ),
    DataSet(
        "pixel_digit_strips",
        "captioning",
        "tune",
        "make_pixel_digit_strip_folder",
        dict(digits_per_image=3, grid=8, scale=4),
        3000,
        300,
        48,
        8,
        user_epochs=20,
    ),
    DataSet(
        "bitmap_digit_strips",
        "captioning",
        "report",
        "make_pixel_digit_strip_folder",
        dict(digits_per_image=3, **_ONE_BIT_DIGITS),
        3000,
        300,
        48,
        8,
        user_epochs=20,
    ),
)
# Handwritten-like digits as 8 x 8 cells of 16 ink levels enlarged to 32 x 32: writer
# variation (slant, pen width, broken strokes), a small folder where Swin underfits.
HANDWRITTEN_DIGIT_SETS = (
    DataSet(
        "handwritten_digits",
        "vit",
        "tune",
        "make_handwritten_digit_folder",
        dict(grid=8, scale=4),
        135,
        50,
        6,
        2,
        user_epochs=40,
    ),
    DataSet(
        "handwritten_digits_dark",
        "vit",
        "report",
        "make_handwritten_digit_folder",
        dict(grid=8, scale=4, dark_ink=True, broken=0.3, wobble=0.04),
        135,
        50,
        6,
        2,
        user_epochs=40,
    ),
)
DATA_SETS += DIGIT_FOLDER_SETS + HANDWRITTEN_DIGIT_SETS


def _maker(name):
    """The data set maker called `name`, from the module that defines it."""
    for module in (datasets, digit_folders):
        if hasattr(module, name):
            return getattr(module, name)
    raise ValueError(f"`maker` must name a data set maker. Received: maker={name!r}")


MODELS = {
    "captioning": ("show_attend_tell", "transformer", "vit"),
    "vit": ("ours", "swin"),
    "nmt": ("transformer", "rnn"),
}
SCRIPTS = {
    "captioning": "examples/train_captioning.py",
    "vit": "examples/train_vit.py",
    "nmt": "examples/train_nmt.py",
}
PEER_MODEL = "keras_hub"


@dataclasses.dataclass(frozen=True)
class Case:
    """One model trained and scored on one data set."""

    family: str
    model: str
    data: DataSet
    epochs: int = None  # `--epochs` as a user passes it; None: the script chooses

    @property
    def name(self):
        name = f"{self.family}/{self.model}/{self.data.name}"
        return name + (f"/epochs_{self.epochs}" if self.epochs else "")


def all_cases():
    """Every case, in running order (a ViT peer right after our ViT on its data)."""
    cases = []
    for family, models in MODELS.items():
        for model in models:
            for data in DATA_SETS:
                if data.family != family:
                    continue
                cases.append(Case(family, model, data))
                if data.peer and model == "ours":
                    cases.append(Case(family, PEER_MODEL, data))
                if data.user_epochs:
                    cases.append(Case(family, model, data, data.user_epochs))
    return cases


def select_cases(only, quick):
    """The cases named by `--only`: a family, model, data set, case name or its leading parts.

    Without `only`, every case, or in a quick run the first data set of each
    model (and the peer).
    """
    cases = all_cases()
    if only:
        # Whole parts only: "object_relations" does not pick "object_relations_tall".
        def named(case, name):
            return name in case.name.split("/") or (case.name + "/").startswith(
                name.rstrip("/") + "/"
            )

        chosen = [case for case in cases if any(named(case, name) for name in only)]
        unknown = [name for name in only if not any(named(c, name) for c in cases)]
        if unknown:
            raise ValueError(
                "`only` must name families, models, data sets or cases such as "
                f"{cases[0].name!r}. Received: only={unknown!r}"
            )
        return chosen
    if not quick:
        return cases
    first = {}
    for case in cases:
        first.setdefault((case.family, case.model), case)
    return list(first.values())


# ---------------------------------------------------------------------------
# Data


def _count(data, quick, held_out):
    if quick:
        return data.quick_held_out if held_out else data.quick_train
    return data.held_out if held_out else data.train


def make_data(data, root, quick):
    """Writes the training and held-out sets of `data` under `root` (reused when made already).

    Returns:
        dict "train" and "held_out" -> the maker's metadata dict.
    """
    made = {}
    for split, seed in (("train", 0), ("held_out", 1)):
        target = os.path.join(root, data.family, data.name, split)
        kwargs = dict(data.params, seed=seed)
        kwargs[_COUNT_ARGUMENT[data.maker]] = _count(data, quick, split == "held_out")
        stamp = os.path.join(root, data.family, data.name, f"{split}.json")
        if os.path.exists(stamp):
            with open(stamp) as handle:
                previous = json.load(handle)
            if previous["kwargs"] == json.loads(json.dumps(kwargs)):
                made[split] = previous["info"]
                continue
        if data.maker.endswith("_tsv"):
            target += ".tsv"
            if os.path.exists(target):
                os.remove(target)
        elif os.path.isdir(target):
            shutil.rmtree(target)
        info = _maker(data.maker)(target, **kwargs)
        with open(stamp, "w") as handle:
            json.dump({"kwargs": kwargs, "info": info}, handle)
        made[split] = json.loads(json.dumps(info))
    return made


def _read_images(paths):
    from PIL import Image

    return np.stack(
        [np.asarray(Image.open(path).convert("RGB"), dtype=np.float32) for path in paths]
    )


def held_out_captions(info):
    """Images `(N, H, W, 3)`, captions and boxes of a held-out caption folder."""
    with open(info["captions_path"], encoding="utf-8") as handle:
        lines = [line.rstrip("\n").split("\t") for line in handle if line.strip()]
    with open(info["boxes_path"], encoding="utf-8") as handle:
        boxes = json.load(handle)
    images = _read_images([os.path.join(info["directory"], name) for name, _ in lines])
    return images, [caption for _, caption in lines], [boxes[name] for name, _ in lines]


def held_out_classes(info):
    """Images `(N, H, W, 3)` and label strings of a held-out class folder."""
    paths, labels = [], []
    for name in info["class_names"]:
        folder = os.path.join(info["directory"], name)
        for file in sorted(os.listdir(folder)):
            paths.append(os.path.join(folder, file))
            labels.append(name)
    return _read_images(paths), labels


def held_out_pairs(train_info, held_info):
    """Held-out `(sources, targets)` whose source is not in the training file."""

    def read(path):
        with open(path, encoding="utf-8") as handle:
            return [line.rstrip("\n").split("\t") for line in handle if line.strip()]

    seen = {source for source, _ in read(train_info["path"])}
    pairs = [(s, t) for s, t in read(held_info["path"]) if s not in seen]
    return [s for s, _ in pairs], [t for _, t in pairs]


# ---------------------------------------------------------------------------
# Runs


def command_for(case, made, run_dir, quick, ours_metrics=None):
    """The command line a user would type for `case` (plus `--epochs 1` when quick)."""
    train = made["train"]
    export = os.path.join(run_dir, "export")
    if case.model == PEER_MODEL:
        size = train["image_size"]
        command = [
            sys.executable,
            "-m",
            "benchmarks.keras_hub_vit_peer",
            "--dataset",
            f"folder:{train['directory']}",
            "--image-size",
            str(size[0]),
            str(size[1]),
            "--epochs",
            str((ours_metrics or {}).get("epochs") or 1),
            "--batch-size",
            str((ours_metrics or {}).get("batch_size") or 64),
        ]
    elif case.family == "vit":
        command = [
            sys.executable,
            SCRIPTS["vit"],
            "--dataset",
            f"folder:{train['directory']}",
            "--image-size",
            str(max(train["image_size"])),
        ] + (["--model", "swin"] if case.model == "swin" else [])
    elif case.family == "captioning":
        command = [
            sys.executable,
            SCRIPTS["captioning"],
            "--model",
            case.model,
            "--dataset",
            f"folder:{train['directory']}",
        ]
    else:
        command = [
            sys.executable,
            SCRIPTS["nmt"],
            "--model",
            case.model,
            "--dataset",
            f"tsv:{train['path']}",
        ]
    command += ["--output-dir", run_dir, "--export", export]
    if quick and case.model != PEER_MODEL:
        command += ["--epochs", "1"]
    elif case.epochs:
        command += ["--epochs", str(case.epochs)]
    return command


def _children_cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_command(command, log_path, timeout):
    """Runs `command` in the repository; returns (return code, wall s, CPU s, log tail)."""
    env = dict(os.environ, KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="2")
    cpu_before, start = _children_cpu_seconds(), time.time()
    with open(log_path, "w") as log:
        log.write(" ".join(command) + "\n\n")
        log.flush()
        try:
            code = subprocess.run(
                command,
                cwd=REPOSITORY,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                timeout=timeout,
                check=False,
            ).returncode
        except subprocess.TimeoutExpired:
            code = "timeout"
    wall, cpu = time.time() - start, _children_cpu_seconds() - cpu_before
    with open(log_path, errors="replace") as log:
        tail = log.read().splitlines()[-LOG_TAIL_LINES:]
    return code, wall, cpu, tail


def score_case(case, made, export):
    """Held-out scores of the SavedModel in `export`."""
    from benchmarks import learning_scores

    serve = learning_scores.load_serving(export)
    if case.family == "captioning":
        images, captions, boxes = held_out_captions(made["held_out"])
        object_words = (
            datasets.OBJECT_NAMES if "object" in case.data.maker else made["train"]["words"]
        )
        return learning_scores.score_captioner(serve, images, captions, boxes, object_words)
    if case.family == "vit":
        images, labels = held_out_classes(made["held_out"])
        return learning_scores.score_classifier(serve, images, labels)
    sources, targets = held_out_pairs(made["train"], made["held_out"])
    return learning_scores.score_translator(serve, sources, targets)


def read_run_metrics(run_dir):
    """The `metrics.json` a finished run of an example script wrote, or {}."""
    path = os.path.join(run_dir, "metrics.json")
    if not os.path.exists(path):
        return {}
    with open(path) as handle:
        return json.load(handle)


def _examples(made, held_out):
    info = made["held_out" if held_out else "train"]
    return info.get("num_images", info.get("num_pairs"))


def run_case(case, output_dir, quick, timeout, ours_metrics=None, previous=None):
    """Makes the data, trains, exports and scores one case; returns its JSON record.

    With a `previous` record of the case, nothing is trained: the export its
    run left is scored again, and its command and times are kept.
    """
    made = make_data(case.data, os.path.join(output_dir, "data"), quick)
    run_dir = os.path.join(output_dir, "runs", case.name.replace("/", "_"))
    if previous is not None:
        command = previous["command"].split(" ")
        code, wall, cpu, tail = 0, previous["wall_s"], previous["cpu_s"], []
        trained_utc = previous.get("trained_utc")
    else:
        if os.path.isdir(run_dir):
            shutil.rmtree(run_dir)  # a leftover backup would resume an old run
        os.makedirs(os.path.dirname(run_dir), exist_ok=True)
        command = command_for(case, made, run_dir, quick, ours_metrics)
        _log(f"{case.name}: {' '.join(command)}")
        # The log sits beside the run folder: the script refuses an output folder
        # that holds files it did not write.
        code, wall, cpu, tail = run_command(command, run_dir + ".log", timeout)
        trained_utc = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    record = {
        "case": case.name,
        "family": case.family,
        "model": case.model,
        "dataset": case.data.name,
        "role": case.data.role,
        "user_epochs": case.epochs,
        "train_examples": _examples(made, False),
        "held_out_examples": _examples(made, True),
        "command": " ".join(command),
        "cpu_s": round(cpu, 1),
        "wall_s": round(wall, 1),
        "trained_utc": trained_utc,  # rows of one table may come from several runs
        "script_metrics": read_run_metrics(run_dir),
        "scores": None,
        "error": None,
    }
    export = os.path.join(run_dir, "export")
    if code != 0:
        record["error"] = f"exit {code}: " + "\n".join(tail)
    elif not os.path.isdir(export):
        record["error"] = "no SavedModel was exported: " + "\n".join(tail)
    else:
        try:
            record["scores"] = score_case(case, made, export)
        except Exception as error:  # the export loads or runs wrongly: record it
            record["error"] = f"scoring failed: {type(error).__name__}: {error}"[:2000]
    _log(f"{case.name}: {summary_cell(record)} ({cpu:.0f} CPU s, {wall:.0f} s)")
    return record


# ---------------------------------------------------------------------------
# Output


def _fmt(value, digits):
    return "" if value is None else f"{value:.{digits}f}"


def summary_cell(record):
    """The score(s) of one record as table text."""
    if record.get("error"):
        first = record["error"].splitlines()[0] if record["error"] else ""
        last = record["error"].splitlines()[-1] if record["error"] else ""
        return f"failed ({first[:40]} ... {last[:80]})".replace("|", "/")
    scores = record["scores"]
    if record["family"] == "vit":
        return f"accuracy {_fmt(scores['accuracy'], 3)}"
    text = f"exact {_fmt(scores['exact_match'], 3)}, BLEU {_fmt(scores['bleu'], 1)}"
    if record["family"] == "nmt":
        return text + f", chrF {_fmt(scores['chrf'], 1)}"
    if scores.get("attention_on_object") is not None:
        text += (
            f", attention on object {_fmt(scores['attention_on_object'], 3)} "
            f"(chance {_fmt(scores['attention_chance'], 3)}, {scores['attention_words']} words)"
        )
    return text


_MODEL_LABELS = {
    ("captioning", "show_attend_tell"): "captioner show_attend_tell",
    ("captioning", "transformer"): "captioner transformer",
    ("captioning", "vit"): "captioner vit (ViT patch tokens, conv stem)",
    ("vit", "ours"): "ViT (train_vit.py)",
    ("vit", PEER_MODEL): "keras-hub ViTBackbone, 4 layers",
    ("vit", "swin"): "Swin (train_vit.py --model swin)",
    ("nmt", "transformer"): "translator transformer",
    ("nmt", "rnn"): "translator rnn",
}
_UNITS = {"captioning": "images", "vit": "images", "nmt": "pairs"}


def _model_label(record):
    """The model column: the model, and the `--epochs` a user passed where one was."""
    label = _MODEL_LABELS.get((record["family"], record["model"]), record["model"])
    epochs = record.get("user_epochs")
    return label + (f", --epochs {epochs}" if epochs else "")


def markdown_table(payload):
    """The Markdown table of a `learning.json` payload."""
    machine = payload["machine"]
    lines = [
        f"Measured {machine.get('date_utc', '')} UTC: {machine.get('cpu', '')}, "
        f"{machine.get('usable_cores', '?')} usable cores, load average "
        f"{machine.get('load_average')}; TensorFlow {machine.get('tensorflow')}, "
        f"Keras {machine.get('keras')}, keras-hub {machine.get('keras_hub')}.",
        "",
        "| model | data set | tune/report | train | held out | score(s) on held out | "
        "CPU s | epochs | trained (UTC) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for record in payload["results"]:
        unit = _UNITS[record["family"]]
        lines.append(
            "| "
            + " | ".join(
                [
                    _model_label(record),
                    record["dataset"],
                    record["role"],
                    f"{record['train_examples']} {unit}",
                    str((record.get("scores") or {}).get("count", record["held_out_examples"])),
                    summary_cell(record),
                    f"{record['cpu_s']:.0f}",
                    str(_epochs(record)),
                    record.get("trained_utc") or "?",
                ]
            )
            + " |"
        )
    for note in payload.get("notes", []):
        lines.append(f"\nNote: {note}")
    return "\n".join(lines) + "\n"


def _epochs(record):
    """Epochs of a run: as the script reports them, else as its command gave them."""
    epochs = (record.get("script_metrics") or {}).get("epochs")
    if epochs is None:
        parts = record.get("command", "").split()
        epochs = parts[parts.index("--epochs") + 1] if "--epochs" in parts else ""
    return epochs


NOTES = (
    "train: images or sentence pairs written for training; the "
    "scripts hold out their own validation and test share of them. held out: items made "
    "with another seed (translation pairs whose source is also a training source are "
    "dropped), scored on the exported SavedModel.",
    "captioning: exact = caption string equal to the reference; attention on object = "
    "share of generated object words whose attention peak (argmax cell, at its centre in "
    "image coordinates) lies in that object's box; chance = share of cells in the box.",
    "CPU s: user + system CPU time of the training process (data loading, training, "
    "evaluation and export), on a machine shared with other work.",
)


def update_readme(payload, readme=README):
    """Writes the table of `payload` into the "Learning quality" section of `readme`."""
    with open(readme, encoding="utf-8") as handle:
        text = handle.read()
    block = f"{BEGIN}\n\n{markdown_table(payload)}\n{END}"
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        text = head + block + tail
    else:
        text = text.rstrip("\n") + f"\n\n{SECTION}\n\n{block}\n"
    with open(readme, "w", encoding="utf-8") as handle:
        handle.write(text)


def _previous_records(path):
    """Case name -> record of the JSON file at `path` (none when missing)."""
    if not os.path.exists(path):
        return {}
    with open(path) as handle:
        previous = json.load(handle)
    return {record["case"]: record for record in previous["results"]}


def _merge(previous_path, records):
    """Earlier records of cases not in `records`, in `all_cases` order, with `records`."""
    by_case = {}
    if os.path.exists(previous_path):
        with open(previous_path) as handle:
            quick = json.load(handle).get("quick")
        if not quick:
            by_case = _previous_records(previous_path)
    by_case.update({record["case"]: record for record in records})
    order = {case.name: index for index, case in enumerate(all_cases())}
    return sorted(by_case.values(), key=lambda record: order.get(record["case"], len(order)))


def _settings(output_dir, only, records, merged):
    """The run's settings; in a merged file `--only` and the cases run speak of this run alone.

    The results of a merged file come from several runs (each record keeps its own
    `command` and `trained_utc`), so this run's `--only` is named as this run's.
    """
    if not merged:
        return {"output_dir": output_dir, "only": only}
    return {
        "output_dir": output_dir,
        "last_run_only": only,
        "last_run_cases": [record["case"] for record in records],
    }


def _notes(previous_path, quick):
    """`NOTES`, then the notes written by hand into the previous JSON file (kept across runs)."""
    kept = []
    if not quick and os.path.exists(previous_path):
        with open(previous_path) as handle:
            kept = [note for note in json.load(handle).get("notes", []) if note not in NOTES]
    return [*NOTES, *kept]


def _log(message):
    print(message, file=sys.stderr, flush=True)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="tiny data, 1 epoch, the first data set of each model"
    )
    parser.add_argument(
        "--only", nargs="+", metavar="NAME", help="families, models, data sets or case names to run"
    )
    parser.add_argument(
        "--output-dir",
        default=os.path.join(REPOSITORY, "runs", "learning"),
        help="data, runs and exports (and learning.json when --quick)",
    )
    parser.add_argument(
        "--results",
        default=None,
        help=f"JSON file to write (default: {RESULTS_PATH}, or "
        "OUTPUT_DIR/learning.json when --quick)",
    )
    parser.add_argument("--no-readme", action="store_true", help="leave README.md unchanged")
    parser.add_argument(
        "--score-only",
        action="store_true",
        help="train nothing: score again the exports of the runs recorded in "
        "the JSON file (after a change of the scores)",
    )
    parser.add_argument(
        "--missing",
        action="store_true",
        help="of the selected cases, only those with no successful run in the JSON file "
        "(to finish a long benchmark that stopped)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="seconds per training run (default: none; 900 when --quick)",
    )
    return parser.parse_args(argv)


def main(argv=None):
    """Runs the selected cases; returns the path of the JSON written."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from benchmarks import timing

    output_dir = os.path.abspath(args.output_dir)
    results_path = args.results or (
        os.path.join(output_dir, "learning.json") if args.quick else RESULTS_PATH
    )
    timeout = args.timeout or (900 if args.quick else None)
    records, ours = [], {}
    if args.score_only:
        for case in select_cases(args.only, args.quick):
            previous = _previous_records(results_path).get(case.name)
            if previous is None or previous.get("error"):
                _log(f"{case.name}: no successful run recorded in {results_path}; skipped")
                continue
            records.append(run_case(case, output_dir, args.quick, timeout, previous=previous))
    selected = select_cases(args.only, args.quick)
    if args.missing:
        recorded = _previous_records(results_path)
        selected = [
            case
            for case in selected
            if case.name not in recorded or recorded[case.name].get("error")
        ]
    for case in [] if args.score_only else selected:
        if case.model == PEER_MODEL and case.data.name not in ours:
            # The peer trains for our ViT's epochs: run ours first when it was not selected.
            ours_case = Case(case.family, "ours", case.data)
            records.append(run_case(ours_case, output_dir, args.quick, timeout))
            ours[case.data.name] = records[-1]["script_metrics"]
        record = run_case(case, output_dir, args.quick, timeout, ours.get(case.data.name))
        if case.family == "vit" and case.model == "ours":
            ours[case.data.name] = record["script_metrics"]
        records.append(record)
    results = records if args.quick else _merge(results_path, records)
    payload = timing.make_payload(
        "learning",
        TITLE,
        results,
        args.quick,
        "cpu",
        settings=_settings(output_dir, args.only, records, merged=not args.quick),
        notes=_notes(results_path, args.quick),
    )
    path = timing.write_json(payload, os.path.dirname(results_path))
    if os.path.basename(results_path) != "learning.json":
        os.replace(path, results_path)
        path = results_path
    _log(f"wrote {path}")
    print(markdown_table(payload))
    if not args.quick and not args.no_readme:
        update_readme(payload)
    return path


if __name__ == "__main__":
    main()

"""What `--dataset` and its companion flags name is checked before TensorFlow loads.

A typo in a prefix or a path, a language left out, a CSV column that is not
there: one `PROG: error:` line, exit status 2, no traceback, no run folder
claimed, and no TensorFlow imported (`check_*_data` of each family's `flags`).
"""

import pathlib
import subprocess
import sys

import pytest
from huggingface_hub import constants

from keras_attention.tasks.captioning.flags import build_captioning_parser
from keras_attention.tasks.captioning.flags import check_captioning_data
from keras_attention.tasks.image_classification.flags import build_vit_parser
from keras_attention.tasks.image_classification.flags import check_vit_data
from keras_attention.tasks.translation.flags import DATASET_CHOICES
from keras_attention.tasks.translation.flags import build_translation_parser
from keras_attention.tasks.translation.flags import check_translation_data
from keras_attention.tasks.translation.flags import parse_translation_arguments

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"

# The script run as `python examples/SCRIPT.py ARGS`, then whether TensorFlow was loaded.
_RUN_SCRIPT = """
import runpy, sys
sys.argv = [{script!r}, *{argv!r}]
try:
    runpy.run_path({script!r}, run_name="__main__")
except SystemExit as stop:
    print("EXIT", stop.code)
print("TENSORFLOW", "tensorflow" in sys.modules)
"""


def _run_script(name, argv):
    script = str(EXAMPLES / f"{name}.py")
    code = _RUN_SCRIPT.format(script=script, argv=[str(arg) for arg in argv])
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def _refusal(check, parser, args, capsys):
    """The one line `check(parser, args)` stops with (exit status 2)."""
    with pytest.raises(SystemExit) as stop:
        check(parser, args)
    assert stop.value.code == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def _csv(path, text="image,caption\na.png,a cat\n"):
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "name, argv, expected",
    [
        (
            "train_vit",
            ["--dataset", "foldr:~/glyphs"],
            "train_vit.py: error: --dataset must be 'builtin', 'folder:PATH', 'hf:PATH', "
            "'cifar10', 'cifar100' or 'imagenette'; 'foldr:' is not a source (did you mean "
            "'folder:'?). Received: --dataset foldr:~/glyphs",
        ),
        (
            "train_captioning",
            ["--dataset", "csv:{tmp}/list.csv", "--caption-column", "text"],
            "train_captioning.py: error: --caption-column must name a column of "
            "{tmp}/list.csv, whose header line names 'image', 'caption'. "
            "Received: --caption-column text",
        ),
        (
            "train_nmt",
            ["--dataset", "parallel:{tmp}"],
            "train_nmt.py: error: --dataset parallel: needs two different languages, "
            "--source-lang and --target-lang (e.g. en and de); {tmp} has train files for de, "
            "en. Received: --source-lang None, --target-lang None",
        ),
        (
            "train_nmt",
            ["--dataset", "buitin", "--data-dir", "{tmp}/tfds"],
            "train_nmt.py: error: --dataset must be 'builtin', 'tsv:PATH', 'parallel:DIR', "
            "'hf:PATH' or a tensorflow-datasets name such as 'ted_hrlr_translate/pt_to_en'; "
            "'buitin' is neither a tensorflow-datasets set nor prepared in {tmp}/tfds (did you "
            "mean 'builtin'?). Received: --dataset buitin",
        ),
    ],
)
def test_a_data_mistake_is_one_error_line_before_tensorflow_and_before_the_run(
    tmp_path, name, argv, expected
):
    _csv(tmp_path / "list.csv")
    (tmp_path / "train.en").write_text("hello\n")
    (tmp_path / "train.de").write_text("hallo\n")
    output_dir = tmp_path / "run"
    argv = [arg.format(tmp=tmp_path) for arg in argv] + ["--output-dir", output_dir]
    result = _run_script(name, argv)
    assert result.stderr.splitlines() == [expected.format(tmp=tmp_path)]  # no traceback
    assert result.stdout.split() == ["EXIT", "2", "TENSORFLOW", "False"]
    assert not output_dir.exists()  # no folder claimed: the corrected command runs there


def test_translation_sources_and_their_languages(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    parser = build_translation_parser()

    def refusal(*argv):
        return _refusal(check_translation_data, parser, parse_translation_arguments(argv), capsys)

    (tmp_path / "train.en.gz").write_bytes(b"")
    (tmp_path / "train.es").write_text("hola\n")
    (tmp_path / "pairs.tsv").write_text("hello\thola\n")
    (tmp_path / "private_pairs" / "1.0.0").mkdir(parents=True)
    for argv in (
        [],
        ["--dataset", "ted_hrlr_translate/pt_to_en"],  # a tfds set and config tfds knows
        ["--dataset", "private_pairs", "--data-dir", str(tmp_path)],  # prepared, no builder
        ["--dataset", f"tsv:{tmp_path / 'pairs.tsv'}"],
        ["--dataset", f"parallel:{tmp_path}", "--source-lang", "en", "--target-lang", "es"],
    ):
        check_translation_data(parser, parse_translation_arguments(argv))
    assert refusal("--dataset", "foldr:x").endswith(
        "'foldr:' is not a source. Received: --dataset foldr:x"
    )
    assert refusal("--dataset", "ted_hrlr_translate/pt_to_xx").endswith(
        "'ted_hrlr_translate' has no config 'pt_to_xx' (did you mean 'pt_to_en'?). "
        "Received: --dataset ted_hrlr_translate/pt_to_xx"
    )
    assert refusal("--dataset", "private_pairs", "--data-dir", str(tmp_path / "elsewhere")) == (
        f"{parser.prog}: error: --dataset must be {DATASET_CHOICES}; 'private_pairs' is neither "
        f"a tensorflow-datasets set nor prepared in {tmp_path / 'elsewhere'}. "
        "Received: --dataset private_pairs"
    )
    assert refusal("--dataset", f"tsv:{tmp_path / 'missing.tsv'}") == (
        f"{parser.prog}: error: --dataset tsv: must be followed by the path of a file; "
        f"{tmp_path / 'missing.tsv'} does not exist. Received: --dataset tsv:{tmp_path}"
        "/missing.tsv"
    )
    (tmp_path / "empty.tsv").write_bytes(b"")
    assert refusal("--dataset", f"tsv:{tmp_path / 'empty.tsv'}") == (
        f"{parser.prog}: error: --dataset tsv: must be followed by the path of a file with "
        f"data; {tmp_path / 'empty.tsv'} is empty. "
        f"Received: --dataset tsv:{tmp_path / 'empty.tsv'}"
    )
    assert refusal("--dataset", f"tsv:{tmp_path}").endswith(
        f"{tmp_path} is a folder. Received: --dataset tsv:{tmp_path}"
    )
    # "Unicode text" as a spreadsheet saves it: refused before TensorFlow, with the fix.
    (tmp_path / "excel.tsv").write_bytes("hello\thola\n".encode("utf-16"))
    assert refusal("--dataset", f"tsv:{tmp_path / 'excel.tsv'}") == (
        f"{parser.prog}: error: --dataset tsv:{tmp_path / 'excel.tsv'}: {tmp_path / 'excel.tsv'} "
        "is UTF-16 text (it starts with the byte-order mark FF FE); data files must be UTF-8: "
        f"convert it, e.g. `iconv -f UTF-16 -t UTF-8 {tmp_path / 'excel.tsv'} > utf8.tsv`."
    )
    assert "must be followed by the path of a folder" in refusal("--dataset", "hf:")
    assert f"e.g. tsv:{tmp_path / 'pairs.tsv'}" in refusal("--dataset", str(tmp_path / "pairs.tsv"))
    parallel = ["--dataset", f"parallel:{tmp_path}", "--source-lang", "en"]
    assert refusal(*parallel, "--target-lang", "en").endswith(
        f"{tmp_path} has train files for en, es. Received: --source-lang en, --target-lang en"
    )
    assert refusal(*parallel, "--target-lang", "de").endswith(
        f"there is no train.de; {tmp_path} has train files for en, es. Received: --target-lang de"
    )
    assert refusal("--dataset", f"hf:{tmp_path}", "--target-lang", "de").endswith(
        "Received: --source-lang None, --target-lang de"
    )
    assert refusal("--init-from", str(tmp_path / "opus-mt")).endswith(
        f"is neither. Received: --init-from {tmp_path / 'opus-mt'}"
    )
    # A handle the offline cache lacks is refused as early, naming the command that fetches it.
    with pytest.raises(SystemExit):
        refusal("--init-from", "hf://acme/opus-mt-xx")
    assert "`hf download acme/opus-mt-xx`" in capsys.readouterr().err


def test_captioning_sources_and_csv_columns(tmp_path, capsys):
    parser = build_captioning_parser()

    def refusal(*argv):
        return _refusal(check_captioning_data, parser, parser.parse_args(argv), capsys)

    listing = _csv(tmp_path / "list.csv", "\ufeff\npath , text\nphotos/a.png,a cat\n")
    for argv in (
        [],
        ["--dataset", "coco_captions/2014"],
        ["--dataset", f"folder:{tmp_path}"],
        ["--dataset", f"folder:{listing}"],  # a layout's file, to choose among several
        ["--dataset", f"csv:{listing}", "--image-column", "path", "--caption-column", "text"],
    ):
        check_captioning_data(parser, parser.parse_args(argv))
    assert refusal("--dataset", "coco_captions/2017").endswith(
        "'coco_captions' has no config '2017' (did you mean '2014'?). "
        "Received: --dataset coco_captions/2017"
    )
    assert "(did you mean 'builtin'?). Received: --dataset buitin" in refusal("--dataset", "buitin")
    assert refusal("--dataset", "flickr8k") == (
        f"{parser.prog}: error: --dataset must be 'builtin', 'folder:PATH', 'csv:FILE' or "
        "'coco_captions[/CONFIG]'. Received: --dataset flickr8k"
    )
    assert "(did you mean 'csv:'?)" in refusal("--dataset", f"cvs:{listing}")
    assert refusal("--dataset", f"csv:{listing}", "--image-column", "path") == (
        f"{parser.prog}: error: --caption-column must name a column of {listing}, whose header "
        "line names 'path', 'text'. Received: --caption-column caption"
    )
    assert refusal("--dataset", f"csv:{listing}").endswith(
        "--image-column and --caption-column must name a column of "
        f"{listing}, whose header line names 'path', 'text'. "
        "Received: --image-column image, --caption-column caption"
    )
    (tmp_path / "wide.csv").write_bytes("image,caption\na.png,a cat\n".encode("utf-16"))
    assert "wide.csv is UTF-16 text" in refusal("--dataset", f"csv:{tmp_path / 'wide.csv'}")
    empty = _csv(tmp_path / "empty.csv", "\n \n")
    assert refusal("--dataset", f"csv:{empty}").endswith(
        "must start with a header line naming its columns; it is empty"
    )
    assert refusal("--dataset", f"folder:{tmp_path / 'missing'}").endswith(
        f"the path of a file or a folder; {tmp_path / 'missing'} does not exist. "
        f"Received: --dataset folder:{tmp_path / 'missing'}"
    )


def test_image_classification_sources(tmp_path, capsys):
    parser = build_vit_parser()

    def refusal(*argv):
        return _refusal(check_vit_data, parser, parser.parse_args(argv), capsys)

    for argv in (
        [],
        ["--dataset", "cifar100"],
        ["--dataset", "imagenette/160px-v2"],
        ["--dataset", f"folder:{tmp_path}"],
        ["--dataset", f"hf:{tmp_path}"],
        ["--init-from", str(tmp_path / "vit")],
    ):
        (tmp_path / "vit").mkdir(exist_ok=True)
        (tmp_path / "vit" / "config.json").write_text('{"model_type": "vit"}')
        check_vit_data(parser, parser.parse_args(argv))
    assert "'hf :' is not a source" in refusal("--dataset", "hf :x")
    file = _csv(tmp_path / "list.csv")
    assert refusal("--dataset", f"folder:{file}").endswith(
        f"the path of a folder; {file} is not a folder. Received: --dataset folder:{file}"
    )
    assert refusal("--dataset", "cifar-10").endswith(
        "(did you mean 'cifar10'?). Received: --dataset cifar-10"
    )
    assert refusal("--dataset", "imagenette/160px-v3").endswith(
        "'imagenette' has no config '160px-v3' (did you mean '160px-v2' or '160px'?). "
        "Received: --dataset imagenette/160px-v3"
    )
    assert "is neither. Received: --init-from" in refusal("--init-from", str(tmp_path / "missing"))
    # A folder without a checkpoint's file: refused before TensorFlow, naming what it holds.
    (tmp_path / "weights").mkdir()
    (tmp_path / "weights" / "model.safetensors").write_bytes(b"")
    assert refusal("--init-from", str(tmp_path / "weights")) == (
        f"{parser.prog}: error: --init-from must be a checkpoint folder, holding a Hugging Face "
        f"model's config.json or a keras-hub preset's metadata.json; {tmp_path / 'weights'} "
        f"holds neither (its files: model.safetensors). Received: --init-from "
        f"{tmp_path / 'weights'}"
    )
    (tmp_path / "empty").mkdir()
    assert "holds neither (it is empty)" in refusal("--init-from", str(tmp_path / "empty"))


@pytest.mark.parametrize(
    "build, check, languages",
    [
        (build_translation_parser, check_translation_data, ["--source-lang", "en"]),
        (build_vit_parser, check_vit_data, []),
    ],
)
def test_hf_without_the_datasets_package_is_one_line(
    tmp_path, capsys, monkeypatch, build, check, languages
):
    import importlib.util

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name: None if name == "datasets" else find_spec(name)
    )
    parser = build()
    args = parser.parse_args(["--dataset", f"hf:{tmp_path}", *languages])
    assert _refusal(check, parser, args, capsys).endswith(
        'error: --dataset hf: needs the `datasets` package: pip install "keras-attention[hf]" '
        f"(or pip install datasets). Received: --dataset hf:{tmp_path}"
    )


def test_test_prefix_names_a_set_of_the_parallel_folder(tmp_path, capsys):
    parser = build_translation_parser()
    for name in ("train.en", "train.de", "test_2016_flickr.en", "test_2016_flickr.de.gz"):
        (tmp_path / name).write_text("a\n")
    languages = ["--source-lang", "en", "--target-lang", "de"]

    def refusal(*argv):
        args = parse_translation_arguments([*argv, *languages])
        return _refusal(check_translation_data, parser, args, capsys)

    good = ["--dataset", f"parallel:{tmp_path}", "--test-prefix", "test_2016_flickr", *languages]
    check_translation_data(parser, parse_translation_arguments(good))
    assert refusal("--dataset", f"parallel:{tmp_path}", "--test-prefix", "test_2017").endswith(
        f"{tmp_path} has no test_2017.* files, its test sets are test_2016_flickr. "
        "Received: --test-prefix test_2017"
    )
    assert refusal("--dataset", f"hf:{tmp_path}", "--test-prefix", "test_2017").endswith(
        "an hf: folder has its own test split. Received: --test-prefix test_2017"
    )

"""The data-at-scale benchmark: its data sets' layouts, its projection, and a tiny run's JSON."""

import json
import math
import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import data_at_scale  # noqa: E402
from benchmarks import scale_datasets  # noqa: E402


def _positive(value):
    return isinstance(value, (int, float)) and math.isfinite(value) and value > 0


def test_the_data_sets_have_the_layouts_users_download(tmp_path):
    root = str(tmp_path)
    images = scale_datasets.ensure_dataset("imagenet", 60, root, pool=20)
    folder = pathlib.Path(images["path"])
    jpegs = sorted(folder.glob("*/*/*.JPEG"))
    assert len(jpegs) == 60 and len(list(folder.glob("val/*/*.JPEG"))) == 3  # 5% in val/
    assert sorted(p.name for p in folder.glob("val/*")) == sorted(
        p.name for p in folder.glob("train/*")
    )
    assert images["hard_links"] == 40 and all(not p.is_symlink() for p in jpegs)
    assert 25_000 < images["mean_image_bytes"] < 50_000

    coco = scale_datasets.ensure_dataset("coco", 12, root, pool=4)
    annotations = json.loads(
        (pathlib.Path(coco["path"]) / "annotations" / "captions_train2014.json").read_text()
    )
    assert {"id", "file_name", "height", "width"} <= set(annotations["images"][0])
    assert {"id", "image_id", "caption"} <= set(annotations["annotations"][0])
    assert len(annotations["annotations"]) == 5 * len(annotations["images"])
    for image in annotations["images"]:
        assert (pathlib.Path(coco["path"]) / "train2014" / image["file_name"]).is_file()
    words = [len(note["caption"].split()) for note in annotations["annotations"]]
    assert 8 <= min(words) and max(words) <= 16  # 8-15 words, " ." counted as one

    pairs = scale_datasets.ensure_dataset("parallel", 300, root)
    lines = {
        name: (pathlib.Path(pairs["path"]) / name).read_text(encoding="utf-8").split("\n")[:-1]
        for name in ("train.en", "train.de", "valid.en", "valid.de", "test.en", "test.de")
    }
    assert len(lines["train.en"]) == len(lines["train.de"]) == 300
    assert len(lines["valid.en"]) == len(lines["valid.de"]) > 0
    assert max(len(line.split()) for line in lines["train.en"]) == 1000
    assert "" in lines["train.en"] and lines["train.en"][:5] != lines["train.de"][:5]

    # Reused while its recipe holds, rebuilt when it changes.
    assert scale_datasets.ensure_dataset("parallel", 300, root)["reused"]
    assert not scale_datasets.ensure_dataset("imagenet", 60, root, pool=30)["reused"]
    assert not os.path.exists(images["path"] + ".incomplete")


def test_projection_is_linear_in_items_and_a_timed_out_rung_fails_it():
    def row(size, seconds, reached=True):
        return {
            "config": {"size": size},
            "reached": reached,
            "seconds_before_training": seconds,
            "peak_rss_gib": 1.0 + size / 1e6,
            "not_reached": None if reached else "timed out after 900 s",
        }

    rows = [row(2_000, 10.0), row(20_000, 19.0), row(100_000, 59.0)]
    projected = data_at_scale.project(rows, "imagenet", "train_vit")
    assert projected["from_sizes"] == [20_000, 100_000]
    assert math.isclose(projected["projected_seconds"], 59.0 + 0.0005 * (1_331_167 - 100_000))
    assert projected["passes_time"] is False and projected["passes_memory"] is True
    failed = data_at_scale.project(rows[:2] + [row(100_000, None, False)], "imagenet", "x")
    assert failed["passes_time"] is False and "not reached at 100,000" in failed["reason"]


def test_a_tiny_run_writes_the_documented_json(tmp_path):
    payload = data_at_scale.main(
        [
            "--quick",
            "--scripts",
            "train_nmt_tsv",
            "--sizes",
            "tsv=30",
            "--wait-for-first-step",
            "no",
            "--pipeline-models",
            "transformer_translator",
            "--pipeline-sizes",
            "parallel=60",
            # A tiny model, trained without XLA: its compilation would take most of a minute.
            "--pipeline-flag=--hidden-dim=16",
            "--pipeline-flag=--num-layers=1",
            "--pipeline-flag=--max-length=64",
            "--pipeline-without-xla",
            "--batches",
            "3",
            "--warmup-batches",
            "1",
            "--budget",
            "5",
            "--timeout",
            "300",
            "--data-root",
            str(tmp_path / "data"),
            "--results-dir",
            str(tmp_path / "results"),
        ]
    )
    written = json.loads((tmp_path / "results" / "data_at_scale.json").read_text())
    assert written == json.loads(json.dumps(payload))
    for key in ("benchmark", "machine", "settings", "commit", "datasets", "results"):
        assert key in written, key
    assert {"projections", "pipeline", "passed", "task_api", "targets"} <= set(written)
    assert written["machine"]["load_average"]
    assert [(d["recipe"]["layout"], d["files"]) for d in written["datasets"]] == [
        ("parallel", 6),
        ("tsv", 1),
    ]

    (first_step,) = written["results"]
    assert first_step["reached"], first_step.get("output")
    assert _positive(first_step["seconds_to_epoch"]) and _positive(first_step["peak_rss_gib"])
    assert first_step["seconds_before_training"] == first_step["seconds_to_epoch"]
    (projection,) = written["projections"]
    assert projection["projected_seconds"] is None  # one rung: nothing to draw a line through

    (pipeline,) = written["pipeline"]
    assert pipeline["measured"], pipeline.get("tail")
    assert pipeline["task_api"] == data_at_scale.TASK_API["translator"]
    assert pipeline["jit_compile"] is False and pipeline["config"]["flags"][-1] == "--max-length=64"
    for rate in (pipeline["delivered"], pipeline["consumed"]):
        assert _positive(rate["examples_per_s"])
    assert _positive(pipeline["ratio"]) and pipeline["batch_size"] >= 1
    assert written["passed"]["transformer_translator pipeline ratio"] == (pipeline["ratio"] >= 2)

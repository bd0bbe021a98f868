"""The GPU section of benchmarks/README.md, rendered from `benchmarks/gpu_jax.py`'s JSON.

python -m benchmarks.gpu_jax --readme-only   # rewrites the section between the markers
"""

import json
import os

SECTIONS = ("peaks", "vit_b16", "attention", "decoding", "models", "long_sequences")
RESULTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "gpu")
README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "README.md")
BEGIN, END = "<!-- gpu:begin -->", "<!-- gpu:end -->"


def _ms(timing):
    return f"{1000 * timing['median_s']:.2f}"


def _table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def _machine_line(payloads):
    machine = next(iter(payloads.values()))["machine"]
    peaks = payloads.get("peaks", {}).get("results", {})
    return (
        f"Measured {machine['date_utc']} UTC on {machine['nvidia_smi'] or machine['device_kind']} "
        f"(nvidia-smi: name, driver, memory); JAX {machine['jax']}, Keras {machine['keras']}, "
        f"keras-hub {machine['keras_hub']}, policy {machine['policy']}. Measured ceilings: "
        f"bf16 matrix product {peaks.get('bf16_matmul_tflops', float('nan')):.0f} TFLOP/s "
        f"(8192^3, random data; datasheet dense {machine['datasheet_bf16_tflops']}), "
        f"device copy {peaks.get('copy_gb_per_s', float('nan')):.0f} GB/s (read + write)."
    )


def _models_table(results):
    rows = []
    for name, row in results["rows"].items():
        if not row.get("compiled"):
            rows.append([name, "", "", "", "", row.get("error") or row.get("skipped"), ""])
            continue
        rows.append(
            [
                name,
                f"{row['parameters'] / 1e6:.1f} M",
                row["batch"],
                f"{row['first_epoch_s']:.0f}",
                row["compiles_in_second_epoch"],
                f"{row['examples_per_second']:.0f}",
                f"{row['final_loss']:.2f}",
            ]
        )
    header = [
        "model",
        "parameters",
        "batch",
        "epoch 1 s (compile)",
        "compiles in epoch 2",
        "examples/s",
        "loss",
    ]
    return _table(header, rows)


def _vit_table(results):
    rows = []
    for label, row in results["rows"].items():
        ratio = results["ratios"].get(f"time {label}/keras_hub", 1.0)
        datasheet = row["mfu_vs_datasheet"]
        rows.append(
            [
                label,
                _ms(row["timing"]),
                f"{row['images_per_second']:.0f}",
                f"{row['model_tflops_per_second']:.0f}",
                f"{100 * row['mfu_vs_measured_matmul']:.1f}",
                "" if datasheet is None else f"{100 * datasheet:.1f}",
                f"{ratio:.3f}",
            ]
        )
    header = [
        "candidate",
        "ms/step",
        "images/s",
        "TFLOP/s",
        "MFU % (measured)",
        "MFU % (datasheet)",
        "time / keras-hub",
    ]
    return _table(header, rows)


def _attention_table(results):
    rows = []
    for case, row in results["rows"].items():
        timings = row["timings"]
        peer = next(label for label in timings if label not in ("ours", "ours_xla"))
        ratio = row[f"time ours/{peer}"]
        xla = _ms(timings["ours_xla"]) if "ours_xla" in timings else ""
        rows.append(
            [
                case,
                _ms(timings["ours"]),
                xla,
                f"{_ms(timings[peer])} ({peer})",
                f"{ratio:.3f}",
                f"<= {row['target']}",
            ]
        )
    header = ["case", "ours ms", "ours, xla kernel ms", "peer ms", "ours / peer", "target"]
    return _table(header, rows)


def _decoding_table(results):
    rows = []
    for case in results["cases"]:
        config, timings = case["config"], case["timings"]
        size = (
            f"batch {config['batch']}, {config['tokens']} tokens, "
            f"{config['num_layers']} x {config['hidden_dim']}"
        )
        rows.append(
            [
                size,
                _ms(timings["cached"]),
                _ms(timings["rerun"]),
                _ms(timings["beam4"]),
                f"{case['speedup rerun/cached']:.1f}",
                f"{case['time beam4/cached']:.2f}",
                f"{100 * case['equal_token_fraction']:.1f}",
            ]
        )
    header = [
        "translator",
        "cached ms",
        "re-run ms",
        "beam 4 ms",
        "re-run / cached",
        "beam 4 / cached",
        "equal tokens %",
    ]
    return _table(header, rows)


def _long_table(results):
    rows = [
        [
            row["length"],
            row["kernel"] + (f", window {row['window']}" if row["window"] else ""),
            _ms(row["timing"]),
            "" if row["temp_gib"] is None else f"{row['temp_gib']:.3f}",
            f"{row['tflops_per_second']:.1f}",
        ]
        for row in results["rows"]
    ]
    table = _table(["tokens", "kernel", "ms", "temporaries GiB", "TFLOP/s"], rows)
    for skipped in results["skipped"]:
        table += f"\n\nSkipped: {skipped['case']}: {skipped['reason']}."
    agreement = ", ".join(f"{k} {v:.1e}" for k, v in results["agreement"].items())
    return table + f"\n\nRelative error of the outputs: {agreement}."


RENDERERS = {
    "models": (
        "Every model family: `fit` with `jit_compile=True` under mixed_bfloat16",
        _models_table,
    ),
    "vit_b16": ("ViT-B/16 at 224 px, training step, batch 128", _vit_table),
    "attention": ("Attention layers, training step (forward and backward)", _attention_table),
    "decoding": (
        "Decoding (float32): key/value caches against re-running the model",
        _decoding_table,
    ),
    "long_sequences": (
        "Long sequences: causal attention, 8 heads of 64, forward and backward",
        _long_table,
    ),
}


def gpu_markdown(directory=RESULTS_DIR):
    """Markdown tables of the section JSON files in `directory`."""
    payloads = {}
    for name in SECTIONS:
        path = os.path.join(directory, f"{name}.json")
        if os.path.exists(path):
            with open(path) as handle:
                payloads[name] = json.load(handle)
    if not payloads:
        raise ValueError(f"`directory` holds no section JSON. Received: directory={directory!r}")
    parts = [_machine_line(payloads)]
    for name, (title, render) in RENDERERS.items():
        payload = payloads.get(name, {})
        if "results" in payload:
            parts.append(f"#### {title}\n\n{render(payload['results'])}")
        elif payload:
            reason = payload.get("error") or payload.get("skipped")
            parts.append(f"#### {title}\n\nNot measured: {reason}")
    return "\n\n".join(parts) + "\n"


def update_readme(directory=RESULTS_DIR, readme=README):
    """Rewrite the part of `readme` between the GPU markers from `directory`'s JSON."""
    with open(readme) as handle:
        text = handle.read()
    if BEGIN not in text or END not in text:
        raise ValueError(f"`readme` must contain {BEGIN} and {END}. Received: readme={readme!r}")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(readme, "w") as handle:
        handle.write(head + BEGIN + "\n\n" + gpu_markdown(directory) + "\n" + END + tail)

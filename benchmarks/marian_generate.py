"""A converted Marian (opus-mt) SavedModel against transformers' PyTorch `generate`.

A checkpoint of opus-mt-en-de's sizes (`SIZES`: width 512, 6 + 6 layers, 8
heads, MLP 2048, 58,101 tokens; random weights, as no checkpoint can be
downloaded here) is written with transformers' `save_pretrained`, with
SentencePiece models trained on the built-in corpus and a `vocab.json` of
that size. `python -m keras_attention.convert` turns it into SavedModels
(greedy, and beam search with 4 beams); each translates the same batch of
English sentences as `MarianMTModel.generate(num_beams=1 or 4,
max_new_tokens=N)` on the same CPU threads (`--threads`, default 2). The
table gives the time per sentence (median of the timed calls over the batch)
and ours over theirs; the strings of both are compared too. A first row times
the tokenizers alone (ours: the SentencePiece op and lookup in a TensorFlow
graph; theirs: `MarianTokenizer`) on 256 sentences, and compares their ids. Needs
torch and transformers (the `references` extra); without them the benchmark
says so and writes nothing measured.

    python -m benchmarks.marian_generate        # results/marian_generate.json
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from benchmarks.marian_folders import write_tokenizer_files

SIZES = dict(d_model=512, layers=6, heads=8, ffn=2048, vocab=58101, positions=512)
QUICK_SIZES = dict(d_model=32, layers=1, heads=2, ffn=64, vocab=500, positions=64)


def parse_args(argv=None):
    """The benchmark's flags (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a tiny model: checks that it works")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch", type=int, default=8, help="sentences translated at once")
    parser.add_argument("--max-length", type=int, default=32, help="N, tokens produced")
    parser.add_argument("--repeats", type=int, default=5, help="timed calls per setting")
    parser.add_argument("--results-dir", default=None)
    return parser.parse_args(argv)


def write_checkpoint(folder, sizes, pairs):
    """A random `MarianMTModel` of `sizes` with its tokenizer files, as save_pretrained writes."""
    import torch
    import transformers

    # SentencePiece's default character coverage: the benchmark's tokenizers as first measured.
    vocabulary = write_tokenizer_files(
        folder, pairs, pieces=400, vocab_size=sizes["vocab"], character_coverage=0.9995
    )
    size = len(vocabulary)
    config = transformers.MarianConfig(
        vocab_size=size,
        decoder_vocab_size=size,
        d_model=sizes["d_model"],
        encoder_layers=sizes["layers"],
        decoder_layers=sizes["layers"],
        encoder_attention_heads=sizes["heads"],
        decoder_attention_heads=sizes["heads"],
        encoder_ffn_dim=sizes["ffn"],
        decoder_ffn_dim=sizes["ffn"],
        max_position_embeddings=sizes["positions"],
        pad_token_id=size - 1,
        eos_token_id=0,
        decoder_start_token_id=size - 1,
        forced_eos_token_id=None,
    )
    torch.manual_seed(0)
    model = transformers.MarianMTModel(config).eval()
    model.save_pretrained(folder)
    tokenizer = transformers.MarianTokenizer(
        *(os.path.join(folder, name) for name in ("source.spm", "target.spm", "vocab.json"))
    )
    tokenizer.save_pretrained(folder)
    return model, tokenizer


def median_call_seconds(call, repeats):
    """The median of `repeats` timed calls of `call`, after 2 untimed ones (tracing, warming)."""
    for _ in range(2):
        call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def _tokenizer_row(checkpoint, tokenizer, pairs, max_length, settings):
    """Our SentencePiece tokenizer (a TensorFlow graph) against transformers', 256 sentences.

    `same_strings` counts the sentences whose ids are Marian's (ours reordered back).
    """
    import tensorflow as tf

    from keras_attention.models.checkpoints.marian_checkpoints import marian_config
    from keras_attention.models.checkpoints.marian_checkpoints import marian_token_order
    from keras_attention.models.checkpoints.marian_checkpoints import marian_tokenizers

    source, _ = marian_tokenizers(checkpoint)
    texts = [text for text, _ in pairs[:256]]
    encode = tf.function(lambda batch: source.encode(batch, max_length))
    batch = tf.constant(texts)
    ours = median_call_seconds(lambda: encode(batch), settings["repeats"])
    theirs = median_call_seconds(
        lambda: tokenizer(texts, padding="max_length", truncation=True, max_length=max_length),
        settings["repeats"],
    )
    order = marian_token_order(marian_config(checkpoint))  # our id -> Marian's
    ids = encode(batch).numpy()
    expected = tokenizer(texts, truncation=True, max_length=max_length)["input_ids"]
    same = sum(
        list(order[row[row != 0]]) == list(reference)
        for row, reference in zip(ids, expected, strict=True)
    )
    return {
        "search": "tokenize only",
        "ours_ms_per_sentence": 1000 * ours / len(texts),
        "transformers_ms_per_sentence": 1000 * theirs / len(texts),
        "ours_over_transformers": ours / theirs,
        "same_strings": int(same),
        "sentences": len(texts),
    }


def run(quick=False, threads=2, batch=8, max_length=32, repeats=5):
    """Measures every setting; returns the JSON payload."""
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    from benchmarks import timing

    sizes = QUICK_SIZES if quick else SIZES
    settings = {"threads": threads, "batch": batch, "max_new_tokens": max_length}
    settings.update(repeats=2 if quick else repeats, **sizes)
    try:
        import torch
        import transformers  # noqa: F401
    except ImportError as error:
        return timing.make_payload(
            "marian_generate", "Marian SavedModel against transformers", [], quick, "cpu",
            settings, skipped=[f"needs torch and transformers: {error}"],
        )  # fmt: skip
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (the SavedModels' SentencePiece op)

    from keras_attention.tasks.translation.builtin_corpus import builtin_translation_pairs

    settings["tensorflow_threads"] = timing.set_tensorflow_threads(threads)
    torch.set_num_threads(threads)
    pairs = builtin_translation_pairs(num_pairs=2000, seed=0)
    texts = [source for source, _ in pairs[:batch]]
    results, skipped = [], []
    with tempfile.TemporaryDirectory() as folder:
        checkpoint = os.path.join(folder, "opus-mt-sized")
        reference, tokenizer = write_checkpoint(checkpoint, sizes, pairs)
        results.append(_tokenizer_row(checkpoint, tokenizer, pairs, max_length, settings))
        encoded = tokenizer(texts, return_tensors="pt", padding=True)
        pad = reference.config.pad_token_id
        for beams in (1, 4):
            export = os.path.join(folder, f"served_{beams}")
            command = [sys.executable, "-m", "keras_attention.convert", checkpoint]
            command += ["--export", export, "--max-length", str(max_length)]
            command += ["--beam-width", str(beams)]
            subprocess.run(command, check=True, capture_output=True)
            serve = tf.saved_model.load(export).signatures["serving_default"]
            text = tf.constant(texts)
            ours = median_call_seconds(
                lambda serve=serve, text=text: serve(text=text), settings["repeats"]
            )

            def generate(beams=beams):
                with torch.no_grad():
                    # No length penalty: ours and theirs rank beams by the sum of log-probabilities.
                    penalty = {"length_penalty": 0.0} if beams > 1 else {}
                    return reference.generate(
                        **encoded, num_beams=beams, do_sample=False,
                        max_new_tokens=max_length, bad_words_ids=[[pad]], **penalty,
                    )  # fmt: skip

            theirs = median_call_seconds(generate, settings["repeats"])
            served = [t.decode("utf-8") for t in serve(text=text)["translation"].numpy()]
            expected = tokenizer.batch_decode(generate(), skip_special_tokens=True)
            results.append(
                {
                    "search": "greedy" if beams == 1 else f"beam {beams}",
                    "ours_ms_per_sentence": 1000 * ours / batch,
                    "transformers_ms_per_sentence": 1000 * theirs / batch,
                    "ours_over_transformers": ours / theirs,
                    "same_strings": sum(a == b for a, b in zip(served, expected)),
                    "sentences": batch,
                }
            )
    return timing.make_payload(
        "marian_generate", "Marian SavedModel against transformers' generate", results, quick,
        "cpu", settings, skipped=skipped,
    )  # fmt: skip


def main(argv=None):
    """Runs the benchmark, writes its JSON, prints the table."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from benchmarks import timing

    payload = run(args.quick, args.threads, args.batch, args.max_length, args.repeats)
    path = timing.write_json(payload, timing.results_directory(args.results_dir, args.quick))
    print("| search | ours ms/sentence | transformers ms/sentence | ours / theirs | same strings |")
    print("|---|---|---|---|---|")
    for row in payload["results"]:
        print(
            f"| {row['search']} | {row['ours_ms_per_sentence']:.3g} | "
            f"{row['transformers_ms_per_sentence']:.3g} | {row['ours_over_transformers']:.2f} | "
            f"{row['same_strings']}/{row['sentences']} |"
        )
    for reason in payload["skipped"]:
        print("skipped:", reason)
    timing.log(f"wrote {path}")
    return path


if __name__ == "__main__":
    main()

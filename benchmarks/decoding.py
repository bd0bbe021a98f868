"""Decoding: key/value caches against re-running the model on the whole prefix.

A `transformer_translator` (random weights) decodes a batch of 8 sources for
64 tokens:

- "cached": `keras_attention.generation.greedy_search`, one XLA program
  whose loop feeds one token per step to the decoder blocks' key/value
  caches (the encoder runs once);
- "rerun": the naive loop, also one XLA program, that runs the whole model
  on the sources and the (padded) prefix at every step and takes the logits
  of the newest position;
- "beam 4": `keras_attention.generation.beam_search` with 4 hypotheses.

The bias of the end token in the output layer is set very low so that every
sequence runs the full 64 steps in every method. Cached and re-run greedy
decoding must produce the same tokens. The compiled-once check counts how
often the search is traced over three calls with new sources of the same
shape (1 means it was compiled once and reused).
"""

import numpy as np

from benchmarks import timing
from benchmarks.decoding_setup import END_ID
from benchmarks.decoding_setup import SMALL_TRANSLATOR
from benchmarks.decoding_setup import START_ID
from benchmarks.decoding_setup import TINY_TRANSLATOR
from benchmarks.decoding_setup import decoding_sources
from benchmarks.decoding_setup import rerun_greedy as rerun_greedy_function
from benchmarks.decoding_setup import translator_that_never_ends

TITLE = "Greedy decoding: cached vs re-running the model each step"
FULL = {**SMALL_TRANSLATOR, "beam_width": 4, "warmup": 1, "repeats": 7}
QUICK = {**TINY_TRANSLATOR, "beam_width": 2, "warmup": 0, "repeats": 2}


def rerun_greedy(model, tokens_to_produce):
    """Greedy decoding that runs the whole model on the prefix at every step (XLA)."""
    import tensorflow as tf

    return tf.function(
        rerun_greedy_function(model, tokens_to_produce), jit_compile=True, autograph=False
    )


def _count_encodes(decoder):
    """Wrap `decoder.encode` to count its calls: one per trace of a search."""
    calls = {"count": 0}
    encode = decoder.encode

    def counting_encode(inputs):
        calls["count"] += 1
        return encode(inputs)

    decoder.encode = counting_encode
    return calls


def run(quick=False, device="cpu"):
    """Times cached, re-run and beam decoding (`quick`: tiny sizes) on "cpu" or "gpu".

    Returns the JSON payload of results/decoding.json (see benchmarks/README.md).
    """
    settings = QUICK if quick else FULL
    try:
        from keras_attention.generation.beam_search import beam_search
        from keras_attention.generation.greedy_search import greedy_search
    except ImportError as error:
        return timing.make_payload(
            "decoding",
            TITLE,
            [],
            quick,
            device,
            settings,
            skipped=[{"case": "all", "reason": f"keras_attention.generation: {error}"}],
        )
    steps = settings["tokens"]
    with timing.tf_device(device):
        model = translator_that_never_ends(settings)
        decoder = model  # a translator implements the decoding protocol itself
        encodes = _count_encodes(decoder)
        sources = decoding_sources(settings, 0)
        rerun = rerun_greedy(model, steps)

        def cached():
            return greedy_search(decoder, sources, START_ID, END_ID, steps)[0]

        def beam():
            return beam_search(
                decoder, sources, START_ID, END_ID, steps, beam_width=settings["beam_width"]
            )[0]

        cached_tokens = np.asarray(cached())
        rerun_tokens = np.asarray(rerun(sources))
        agreement = float(np.mean(cached_tokens == rerun_tokens))
        if agreement < 0.95:
            raise RuntimeError(f"cached and re-run greedy decoding agree on {agreement:.0%} only")
        # Compiled once: new sources of the same shape reuse the traced search.
        traces_before = encodes["count"]
        for seed in (1, 2, 3):
            greedy_search(decoder, decoding_sources(settings, seed), START_ID, END_ID, steps)
        retraces = encodes["count"] - traces_before
        timing.log(f"decoding: {steps} tokens, batch {settings['batch']}")
        samples = timing.compare(
            {"cached": cached, "rerun": lambda: rerun(sources), "beam": beam},
            warmup=settings["warmup"],
            repeats=settings["repeats"],
        )
    config = {key: settings[key] for key in settings if key not in ("warmup", "repeats")}
    cached_median = samples.summary("cached")["median_s"]
    result = timing.case_result(
        f"greedy {steps} tokens, batch {settings['batch']}",
        config,
        samples,
        ratios={
            "time cached/rerun": samples.ratio("cached", "rerun"),
            f"time beam{settings['beam_width']}/cached": samples.ratio("beam", "cached"),
        },
        speedup_cached_over_rerun=1.0 / samples.ratio("cached", "rerun")["ratio"],
        tokens_per_second_cached=settings["batch"] * steps / cached_median,
        token_agreement_cached_rerun=agreement,
        traces_first_call=traces_before,
        retraces_over_three_new_calls=retraces,
        table_columns={
            "speedup": 1.0 / samples.ratio("cached", "rerun")["ratio"],
            "tokens/s cached": settings["batch"] * steps / cached_median,
            "retraces": retraces,
        },
    )
    return timing.make_payload(
        "decoding",
        TITLE,
        [result],
        quick=quick,
        device=device,
        settings=settings,
        notes=[
            "targets: cached greedy decoding at least 10x faster than re-running the model "
            "(time cached/rerun <= 0.1), beam 4 at most 2x greedy (time beam4/cached <= 2).",
            "'rerun' runs the encoder too at every step, as calling the model would.",
        ],
    )

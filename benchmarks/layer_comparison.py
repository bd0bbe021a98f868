"""A layer of ours against a peer's with the same weights: agreement, then timed training steps.

The benchmarks of one layer against its counterpart in keras or keras-hub
(`attention_layer`, `encoder_block`) share the loop: for every sequence
length and (variant, XLA or not) case, build both layers from seed 0, copy
the peer's weights into ours, check that the forward outputs agree, then
time a compiled training step of each and keep the paired ratio.
"""

import sys

import numpy as np

from benchmarks import timing


def check_agreement(expected, received, peer):
    """The largest absolute difference of two outputs; raises when above the tolerance."""
    error = float(np.max(np.abs(np.asarray(expected) - np.asarray(received))))
    if error > timing.agreement_tolerance():
        raise RuntimeError(f"outputs of ours and {peer} differ by {error}")
    return error


def copy_weights_and_compare(ours, theirs, inputs, peer, **call_arguments):
    """Builds both layers on `inputs`, copies the peer's weights into ours and
    returns the largest difference of their inference outputs (`check_agreement`)."""
    theirs(*inputs)
    ours(*inputs)
    ours.set_weights(theirs.get_weights())
    expected = theirs(*inputs, training=False, **call_arguments)
    return check_agreement(expected, ours(*inputs, training=False, **call_arguments), peer)


def comparison_runner(name, title, peer, prepare, note):
    """The `run(quick=False, device="cpu")` of a benchmark of ours against `peer`.

    Args:
        name: the benchmark's name (its results/<name>.json).
        title: the payload's title.
        peer: the label of the peer's timings ("keras", "keras_hub").
        prepare: `(settings, length, options, jit_compile) -> (steps, error)`,
            `steps` the compiled steps `{"ours": ..., peer: ...}` and `error`
            the forward outputs' largest difference; called with the seed set.
            Its module holds the cases: `FULL` and `QUICK` settings (`batch`,
            `lengths`, `width`, `heads`, `warmup`, `repeats`, ...),
            `VARIANTS` (name -> options) and `QUICK_CASES`.
        note: what the ratio measures, for the payload's notes.
    """

    def run(quick=False, device="cpu"):
        return _run_comparison(name, title, prepare, quick, device, peer, note)

    run.__doc__ = (
        f"Times every configuration of {name} (`quick`: the smoke test's tiny sizes) on "
        f'"cpu" or "gpu"; returns the JSON payload of results/{name}.json.'
    )
    return run


def plain_xla_steps(module, length, quick=False):
    """The compiled "plain" XLA training steps `{"ours": ..., peer: ...}` of a layer benchmark.

    Args:
        module: `attention_layer` or `encoder_block` (its settings, `VARIANTS`
            and `_prepare`, as `comparison_runner` describes them).
        length: the sequence length (16 when `quick`, with the quick sizes).
        quick: the smoke test's tiny sizes.
    """
    settings = dict(module.QUICK if quick else module.FULL)
    steps, _ = module._prepare(settings, 16 if quick else length, module.VARIANTS["plain"], True)
    return steps


def _run_comparison(name, title, prepare, quick, device, peer, note):
    import keras

    module = sys.modules[prepare.__module__]
    settings = module.QUICK if quick else module.FULL
    cases = module.QUICK_CASES
    if not quick:
        cases = [(variant, jit) for variant in module.VARIANTS for jit in (False, True)]
    # The layer's sizes: the settings but the batch, lengths and repetitions.
    sizes = {key: settings[key] for key in settings}
    for key in ("batch", "lengths", "warmup", "repeats"):
        sizes.pop(key)
    results = []
    with timing.tf_device(device):
        for length in settings["lengths"]:
            for variant, jit_compile in cases:
                options = module.VARIANTS[variant]
                keras.utils.set_random_seed(0)
                steps, error = prepare(settings, length, options, jit_compile)
                case = f"T={length} {variant} {'xla' if jit_compile else 'graph'}"
                timing.log(f"{name}: {case}")
                samples = timing.compare(
                    steps, warmup=settings["warmup"], repeats=settings["repeats"]
                )
                config = {"batch": settings["batch"], "length": length, **sizes}
                config.update(variant=variant, jit_compile=jit_compile, **options)
                results.append(
                    timing.case_result(
                        case,
                        config,
                        samples,
                        ratios={f"time ours/{peer}": samples.ratio("ours", peer)},
                        max_abs_output_difference=error,
                    )
                )
    notes = [f"ratio < 1 means keras_attention is faster; {note}"]
    return timing.make_payload(
        name, title, results, quick=quick, device=device, settings=settings, notes=notes
    )

"""Tokenizers for translation: exact round trips, speed and sequence length.

Three tokenizers learn a vocabulary from the same training text and encode
and decode the same held-out text in one process:

- "reversible": `keras_attention.text.ReversibleTokenizer` (pieces with their
  leading space, character and byte fallback; TensorFlow ops only);
- "wordpiece": `keras_attention.text.SubwordEncoder`, keras-hub's
  `WordPieceTokenizer` (tensorflow-text ops);
- "sentencepiece": keras-hub's `SentencePieceTokenizer` on a unigram model
  trained by the `sentencepiece` package, as keras-hub's
  `compute_sentence_piece_proto` does (tensorflow-text ops).

The text mixes the built-in corpus with lines that carry what users write:
digits, dates, punctuation, quotes, capitals and accents (the formatting
tasks of `benchmarks.learning_datasets`). Reported per tokenizer: the
fraction of held-out lines that come back exactly (after whitespace
normalisation), the mean tokens per line (the sequence length a model pays
for), encode and decode time of a batch under `tf.function`, the ratio of
each time to the reversible tokenizer's, the time to learn the vocabulary,
and whether a SavedModel holding the tokenizer loads without tensorflow-text.
"""

import io
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from benchmarks import timing

TITLE = "Tokenizers: exact round trips, speed and tokens per line"
FULL = {"train_lines": 8000, "test_lines": 2048, "vocabulary_size": 1000, "repeats": 10}
QUICK = {"train_lines": 300, "test_lines": 64, "vocabulary_size": 400, "repeats": 2}
LABELS = ("reversible", "wordpiece", "sentencepiece")


def _lines(count, seed):
    from benchmarks.learning_datasets import TEXT_TASKS
    from benchmarks.learning_datasets import make_text_task_tsv
    from keras_attention.tasks.translation.builtin_corpus import builtin_translation_pairs

    lines = [text for pair in builtin_translation_pairs(count // 2, seed=seed) for text in pair]
    lines = lines[: count // 2]
    with tempfile.TemporaryDirectory() as folder:
        per_task = max(1, (count - len(lines)) // len(TEXT_TASKS))
        for task in TEXT_TASKS:
            written = make_text_task_tsv(os.path.join(folder, f"{task}.tsv"), task, per_task, seed)
            with open(written["path"], encoding="utf-8") as file:
                for line in file:
                    lines.extend(line.rstrip("\n").split("\t"))
    return lines[:count]


def _tokenizers(train_lines, vocabulary_size):
    import keras_hub
    import sentencepiece

    from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
    from keras_attention.text.subword_encoder import SubwordEncoder
    from keras_attention.text.wordpiece_vocabulary import train_wordpiece_vocabulary

    made, train_seconds = {}, {}
    start = time.perf_counter()
    made["reversible"] = ReversibleTokenizer.train(train_lines, vocabulary_size)
    train_seconds["reversible"] = time.perf_counter() - start
    start = time.perf_counter()
    made["wordpiece"] = SubwordEncoder(train_wordpiece_vocabulary(train_lines, vocabulary_size))
    train_seconds["wordpiece"] = time.perf_counter() - start
    start = time.perf_counter()
    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(train_lines),
        model_writer=model,
        vocab_size=vocabulary_size,
        model_type="unigram",
        hard_vocab_limit=False,  # small texts: a smaller vocabulary instead of an error
        pad_id=0,
        unk_id=1,
        bos_id=2,
        eos_id=3,
        minloglevel=2,
    )
    made["sentencepiece"] = keras_hub.tokenizers.SentencePieceTokenizer(
        proto=model.getvalue(), dtype="int32"
    )
    train_seconds["sentencepiece"] = time.perf_counter() - start
    return made, train_seconds


def _round_trip_functions(made):
    """label -> (encode, decode) tf.functions on a (B,) batch; encode gives ragged or dense ids."""
    import tensorflow as tf

    functions = {}
    for label in ("reversible",):
        tokenizer = made[label]
        functions[label] = (
            tf.function(tokenizer.tokenize),
            tf.function(lambda ids, t=tokenizer: t.decode(ids.to_tensor())),
        )
    wordpiece = made["wordpiece"]
    functions["wordpiece"] = (
        tf.function(wordpiece.tokenizer.tokenize),
        tf.function(lambda ids: wordpiece.decode(ids.to_tensor())),
    )
    sentencepiece = made["sentencepiece"]
    functions["sentencepiece"] = (
        tf.function(sentencepiece.tokenize),
        tf.function(sentencepiece.detokenize),
    )
    return functions


def _loads_without_tensorflow_text(tokenizer, tokenizer_function, folder):
    """Whether a SavedModel of `tokenizer_function` loads and runs with TensorFlow alone."""
    import tensorflow as tf

    module = tf.Module()
    module.tokenizer = tokenizer  # tracked: its lookup tables are saved with the graph
    module.run = tf.function(tokenizer_function, input_signature=[tf.TensorSpec([None], tf.string)])
    module.run.get_concrete_function()
    path = os.path.join(folder, "model")
    try:
        tf.saved_model.save(module, path)
    except Exception as error:  # some tokenizers cannot be saved this way at all
        return f"save failed: {type(error).__name__}"
    script = (
        "import sys; sys.modules['tensorflow_text'] = None\n"
        "import tensorflow as tf\n"
        f"m = tf.saved_model.load({path!r}); m.run(tf.constant(['a b']))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"),
    )
    return result.returncode == 0


def run(quick=False, device="cpu"):
    import tensorflow as tf

    from keras_attention.text.reversible_tokenizer import normalize_whitespace

    settings = dict(QUICK if quick else FULL)
    train_lines = _lines(settings["train_lines"], seed=0)
    test_lines = _lines(settings["test_lines"], seed=1)
    made, train_seconds = _tokenizers(train_lines, settings["vocabulary_size"])
    functions = _round_trip_functions(made)
    batch = tf.constant(test_lines)
    expected = [normalize_whitespace(line) for line in test_lines]

    results, encoded = [], {}
    exact, tokens_per_line = {}, {}
    for label in LABELS:
        encode, decode = functions[label]
        ids = encode(batch)
        encoded[label] = ids
        decoded = [text.decode("utf-8", "replace") for text in decode(ids).numpy().tolist()]
        exact[label] = float(np.mean([d == e for d, e in zip(decoded, expected)]))
        tokens_per_line[label] = float(np.mean(ids.row_lengths().numpy()))
    encode_samples = timing.compare(
        {label: (lambda f=functions[label][0]: f(batch).flat_values.numpy()) for label in LABELS},
        repeats=settings["repeats"],
    )
    decode_samples = timing.compare(
        {
            label: (lambda f=functions[label][1], ids=encoded[label]: f(ids).numpy())
            for label in LABELS
        },
        repeats=settings["repeats"],
    )
    with tempfile.TemporaryDirectory() as folder:
        tensorflow_alone = {
            label: _loads_without_tensorflow_text(
                made[label] if label != "wordpiece" else made[label].tokenizer,
                functions[label][0].python_function,
                os.path.join(folder, label),
            )
            for label in LABELS
        }
    for label in LABELS:
        results.append(
            timing.case_result(
                label,
                {"vocabulary_size": settings["vocabulary_size"], "lines": len(test_lines)},
                ratios={
                    "encode_vs_reversible": encode_samples.ratio(label, "reversible"),
                    "decode_vs_reversible": decode_samples.ratio(label, "reversible"),
                },
                exact_round_trip=exact[label],
                tokens_per_line=tokens_per_line[label],
                encode_seconds=encode_samples.summary(label),
                decode_seconds=decode_samples.summary(label),
                train_seconds=train_seconds[label],
                loads_with_tensorflow_alone=tensorflow_alone[label],
                table_columns={
                    "exact round trip %": 100 * exact[label],
                    "tokens/line": tokens_per_line[label],
                    "encode ms": 1e3 * encode_samples.summary(label)["median_s"],
                    "decode ms": 1e3 * decode_samples.summary(label)["median_s"],
                    "vocabulary s": train_seconds[label],
                    "TensorFlow alone": "yes" if tensorflow_alone[label] is True else "no",
                },
            )
        )
        timing.log(
            f"{label:>13}: exact {100 * exact[label]:.1f}%, "
            f"{tokens_per_line[label]:.1f} tokens/line, "
            f"encode {encode_samples.summary(label)['median_s'] * 1e3:.1f} ms, "
            f"decode {decode_samples.summary(label)['median_s'] * 1e3:.1f} ms per "
            f"{len(test_lines)} lines, vocabulary learned in {train_seconds[label]:.1f} s, "
            f"TensorFlow alone: {tensorflow_alone[label]}"
        )
    return timing.make_payload(
        "tokenizers",
        TITLE,
        results,
        quick,
        device,
        settings,
        notes=["ratios are time(label) / time(reversible): above 1, the reversible one is faster"],
    )

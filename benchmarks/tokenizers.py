"""Tokenizers for translation: exact round trips, speed, sequence length and learning at scale.

Four tokenizers learn a vocabulary from the same training text and encode
and decode the same held-out text in one process:

- "reversible": `keras_attention.text.ReversibleTokenizer` (a SentencePiece
  BPE model learned by SentencePiece's C++ trainer, byte fallback,
  whitespace runs the one change; tensorflow-text's SentencePiece op);
- "reversible unigram": the same with `model_type="unigram"`;
- "wordpiece": `keras_attention.text.SubwordEncoder`, keras-hub's
  `WordPieceTokenizer` (tensorflow-text ops);
- "sentencepiece": keras-hub's `SentencePieceTokenizer` on a unigram model
  trained by the `sentencepiece` package with its defaults (NFKC
  normalisation, no byte fallback), as keras-hub's
  `compute_sentence_piece_proto` does (tensorflow-text ops).

The text mixes the built-in corpus with lines that carry what users write:
digits, dates, punctuation, quotes, capitals and accents (the formatting
tasks of `benchmarks.learning_datasets`). Reported per tokenizer: the
fraction of held-out lines that come back exactly (after whitespace
normalisation), the mean tokens per line (the sequence length a model pays
for), encode and decode time of a batch under `tf.function`, the ratio of
each time to the reversible tokenizer's, the time to learn the vocabulary,
and whether a SavedModel holding the tokenizer loads without tensorflow-text.

Learning at scale: the reversible tokenizers learn an 8,000-token
vocabulary from 10k, 100k and 1M generated sentences (`generated_sentences`:
5-25 words drawn from a 30,000-word Zipfian vocabulary, numbers, dates,
commas, sentence ends), timed from the list of strings to the tokenizer;
"tokens/line generated" is the mean on 2,000 held-out generated sentences
of the 1M model. The row "reversible, pieces and subwords in Python" holds
the figures of the tokenizer `ReversibleTokenizer` was before it learned
with SentencePiece (piece counts and byte-pair merges in Python, encoding by
longest match in TensorFlow ops), recorded with this benchmark's code of
that time on the same machine (`BEFORE`).
"""

import io
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from benchmarks import timing

TITLE = "Tokenizers: exact round trips, speed, tokens per line and learning at scale"
FULL = {
    "train_lines": 8000,
    "test_lines": 2048,
    "vocabulary_size": 1000,
    "repeats": 10,
    "scale_sentences": [10_000, 100_000, 1_000_000],
    "scale_vocabulary_size": 8000,
    "scale_test_sentences": 2000,
}
QUICK = {
    "train_lines": 300,
    "test_lines": 64,
    "vocabulary_size": 400,
    "repeats": 2,
    "scale_sentences": [1000],
    "scale_vocabulary_size": 1000,
    "scale_test_sentences": 100,
}
LABELS = ("reversible", "reversible unigram", "wordpiece", "sentencepiece")
REVERSIBLE_MODEL_TYPES = {"reversible": "bpe", "reversible unigram": "unigram"}
BEFORE_LABEL = "reversible, pieces and subwords in Python"
# The tokenizer before SentencePiece, measured with the full settings on this machine
# on 2026-11-28 (2 cores shared with other work): the main columns at 05:47 UTC (load
# average 4-5) by this benchmark's code of that time, learning at scale at 04:35-04:45
# UTC (load average 4-5) from the sentences `generated_sentences` makes.
BEFORE = {
    "exact_round_trip": 1.0,
    "tokens_per_line": 7.587,
    "encode_ms": 29.6,
    "decode_ms": 9.9,
    "train_seconds": 0.70,
    "scale_seconds": {10_000: 6.67, 100_000: 21.51, 1_000_000: 204.77},
    "scale_tokens_per_line": 52.71,
}
ZIPF_WORDS = 30_000
_ONSETS = ("", "b", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z") + (
    "br",
    "st",
    "tr",
    "sch",
    "ch",
    "kl",
    "pl",
    "gr",
    "sp",
)
_VOWELS = ("a", "e", "i", "o", "u", "ei", "au", "ie", "ä", "ö", "ü", "y")
_CODAS = ("", "", "n", "r", "s", "t", "l", "m", "ng", "ck", "nd", "st")


def zipf_words(count, seed):
    """`count` distinct made-up words, the first (most frequent) ones short, as in languages."""
    rng = np.random.default_rng(seed)
    words, seen = [], set()
    while len(words) < count:
        # About 1 syllable in the top 10, 2 in the top 100, ... at most 5.
        syllables = max(1, 1 + int(np.log10(len(words) + 1)) + int(rng.integers(-1, 1)))
        word = "".join(
            _ONSETS[rng.integers(len(_ONSETS))]
            + _VOWELS[rng.integers(len(_VOWELS))]
            + _CODAS[rng.integers(len(_CODAS))]
            for _ in range(syllables)
        )
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


def generated_sentences(count, seed=0):
    """`count` sentences of 5-25 words over a 30,000-word Zipfian vocabulary.

    3% of the words are numbers (0-9999), 1% dates ("07.03.1911"), 6% take a
    comma; a sentence starts with a capital and ends with ".", "?" or "!".
    The vocabulary is the same for every seed.
    """
    rng = np.random.default_rng(seed)
    words = np.asarray(zipf_words(ZIPF_WORDS, seed=1234), dtype=object)
    probabilities = 1.0 / np.arange(1, ZIPF_WORDS + 1)
    probabilities /= probabilities.sum()
    lengths = rng.integers(5, 26, size=count)
    chosen = words[rng.choice(ZIPF_WORDS, size=int(lengths.sum()), p=probabilities)]
    kinds = rng.random(size=len(chosen))
    numbers = rng.integers(0, 10_000, size=len(chosen))
    for index in np.nonzero(kinds < 0.03)[0]:
        chosen[index] = str(numbers[index])
    for index in np.nonzero((kinds >= 0.03) & (kinds < 0.04))[0]:
        number = numbers[index]
        chosen[index] = f"{number % 28 + 1:02d}.{number % 12 + 1:02d}.{1900 + number % 130}"
    for index in np.nonzero((kinds >= 0.04) & (kinds < 0.10))[0]:
        chosen[index] = chosen[index] + ","
    ends = np.asarray([".", ".", ".", "?", "!"], dtype=object)[rng.integers(5, size=count)]
    sentences, start = [], 0
    for length, end in zip(lengths, ends):
        sentence = " ".join(chosen[start : start + length]).rstrip(",") + end
        sentences.append(sentence[0].upper() + sentence[1:])
        start += length
    return sentences


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
    for label, model_type in REVERSIBLE_MODEL_TYPES.items():
        start = time.perf_counter()
        made[label] = ReversibleTokenizer.train(train_lines, vocabulary_size, model_type)
        train_seconds[label] = time.perf_counter() - start
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
    for label in REVERSIBLE_MODEL_TYPES:
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


def _learning_at_scale(settings):
    """Seconds to learn each reversible tokenizer from each count of generated sentences.

    Returns:
        `{label: {"seconds": {count: s}, "tokens_per_line": float}}`, the
        tokens per line of the model learned from the most sentences, on
        held-out generated sentences.
    """
    from keras_attention.text.reversible_tokenizer import ReversibleTokenizer

    held_out = generated_sentences(settings["scale_test_sentences"], seed=99)
    largest = max(settings["scale_sentences"])
    sentences = generated_sentences(largest, seed=0)
    scale = {label: {"seconds": {}} for label in REVERSIBLE_MODEL_TYPES}
    for count in settings["scale_sentences"]:
        for label, model_type in REVERSIBLE_MODEL_TYPES.items():
            start = time.perf_counter()
            tokenizer = ReversibleTokenizer.train(
                sentences[:count], settings["scale_vocabulary_size"], model_type
            )
            seconds = time.perf_counter() - start
            scale[label]["seconds"][count] = seconds
            lengths = tokenizer.tokenize(held_out).row_lengths().numpy()
            scale[label]["tokens_per_line"] = float(np.mean(lengths))
            timing.log(
                f"{label:>18}: learned from {count} sentences in {seconds:.1f} s, "
                f"{scale[label]['tokens_per_line']:.2f} tokens/line on held-out ones"
            )
    return scale


def _scale_columns(seconds_by_count, tokens_per_line, counts):
    columns = {f"learn {_count_name(count)} s": seconds_by_count.get(count) for count in counts}
    columns["tokens/line generated"] = tokens_per_line
    return columns


def _count_name(count):
    return f"{count // 1_000_000}M" if count >= 1_000_000 else f"{count // 1000}k"


def run(quick=False, device="cpu"):
    import tensorflow as tf

    from keras_attention.text.whitespace import normalize_whitespace

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
    scale = _learning_at_scale(settings)
    counts = settings["scale_sentences"]
    for label in LABELS:
        label_scale = scale.get(label, {"seconds": {}, "tokens_per_line": None})
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
                scale_train_seconds={str(count): s for count, s in label_scale["seconds"].items()},
                scale_tokens_per_line=label_scale["tokens_per_line"],
                table_columns={
                    "exact round trip %": 100 * exact[label],
                    "tokens/line": tokens_per_line[label],
                    "encode ms": 1e3 * encode_samples.summary(label)["median_s"],
                    "decode ms": 1e3 * decode_samples.summary(label)["median_s"],
                    "vocabulary s": train_seconds[label],
                    "TensorFlow alone": "yes" if tensorflow_alone[label] is True else "no",
                    **_scale_columns(
                        label_scale["seconds"], label_scale["tokens_per_line"], counts
                    ),
                },
            )
        )
        timing.log(
            f"{label:>18}: exact {100 * exact[label]:.1f}%, "
            f"{tokens_per_line[label]:.1f} tokens/line, "
            f"encode {encode_samples.summary(label)['median_s'] * 1e3:.1f} ms, "
            f"decode {decode_samples.summary(label)['median_s'] * 1e3:.1f} ms per "
            f"{len(test_lines)} lines, vocabulary learned in {train_seconds[label]:.1f} s, "
            f"TensorFlow alone: {tensorflow_alone[label]}"
        )
    if not quick:
        results.append(_before_result(settings))
    return timing.make_payload(
        "tokenizers",
        TITLE,
        results,
        quick,
        device,
        settings,
        notes=[
            "ratios are time(label) / time(reversible): above 1, the reversible one is faster",
            f"learn N s: seconds to learn a vocabulary of {settings['scale_vocabulary_size']} "
            "tokens from N generated sentences, from the list of strings to the tokenizer "
            "(SentencePiece learns from a sample of 300k of the 1M); tokens/line generated: "
            "on 2,000 held-out generated sentences, with the model learned from the most",
            f"{BEFORE_LABEL}: pieces counted and byte-pair merges learned in Python, encoding "
            "by longest match in TensorFlow ops; recorded on 2026-11-28 on this machine "
            "(`BEFORE` in benchmarks/tokenizers.py), so no ratio",
        ],
    )


def _before_result(settings):
    """The row of the recorded figures of the tokenizer before SentencePiece."""
    columns = {
        "exact round trip %": None
        if BEFORE["exact_round_trip"] is None
        else 100 * BEFORE["exact_round_trip"],
        "tokens/line": BEFORE["tokens_per_line"],
        "encode ms": BEFORE["encode_ms"],
        "decode ms": BEFORE["decode_ms"],
        "vocabulary s": BEFORE["train_seconds"],
        "TensorFlow alone": "yes",
        **_scale_columns(
            BEFORE["scale_seconds"], BEFORE["scale_tokens_per_line"], settings["scale_sentences"]
        ),
    }
    return timing.case_result(
        BEFORE_LABEL,
        {"vocabulary_size": settings["vocabulary_size"], "recorded": True},
        exact_round_trip=BEFORE["exact_round_trip"],
        tokens_per_line=BEFORE["tokens_per_line"],
        train_seconds=BEFORE["train_seconds"],
        scale_train_seconds={str(count): s for count, s in BEFORE["scale_seconds"].items()},
        scale_tokens_per_line=BEFORE["scale_tokens_per_line"],
        table_columns=columns,
    )

"""The translation training command line: its flags, and the defaults each model brings.

Building the parser imports neither TensorFlow nor Keras, so `--help` and a
bad flag are answered at once. The sequence length, batch size and epochs
default to None: `translation_training_recipe` derives them from the data.

Example:

>>> from keras_attention.tasks.translation.flags import parse_translation_arguments
>>> args = parse_translation_arguments(["--model", "rnn", "--cell", "lstm"])
>>> args.model, args.cell, args.hidden_dim, args.learning_rate, args.epochs
('rnn', 'lstm', 64, 0.003, None)
"""

import os
import re

from keras_attention.layers.attention.score_modes import ATTENTION_SCORES
from keras_attention.models.checkpoints.checkpoint_handles import is_checkpoint_handle
from keras_attention.tasks.init_from_flag import check_init_from
from keras_attention.tasks.init_from_flag import init_from_folder
from keras_attention.training import command_line as cli

# Defaults per model that reach BLEU > 90 on the built-in corpus on a CPU; the
# sequence length, batch size and epochs come from the data (see
# `translation_training_recipe`).
# The flags only one model reads: given with the other, they are warned of.
TRANSLATION_MODEL_FLAGS = {
    "transformer": ("--num-layers", "--num-heads", "--num-key-value-heads"),
    "rnn": ("--cell", "--attention", "--attention-style", "--location-features"),
}
TRANSLATION_MODEL_DEFAULTS = {
    "transformer": dict(hidden_dim=64, learning_rate=2e-3),
    "rnn": dict(hidden_dim=64, learning_rate=3e-3),
}
TRANSLATION_DATASET_FORMATS = (
    "'builtin' (an offline English -> Spanish corpus); 'tsv:PATH', a UTF-8 file of "
    "source<TAB>target lines (a third column, such as Tatoeba's attribution, is ignored); "
    "'parallel:DIR' with --source-lang and --target-lang, one sentence a line per language "
    "as Multi30k and fairseq ship them: DIR/train.SRC and DIR/train.TGT, "
    "DIR/{valid,val,dev}.*, and one DIR/test*.* set (--test-prefix chooses among several), "
    ".gz allowed, line counts matching, links leading outside DIR refused "
    "(--allow-outside-links); 'hf:PATH', a Hugging Face datasets save_to_disk "
    "folder with a 'translation' column of {language: text} dicts (WMT, OPUS; pip install "
    '"keras-attention[hf]"); or a tensorflow-datasets name such as '
    "'ted_hrlr_translate/pt_to_en' (--data-dir). parallel: and hf: keep their own splits; "
    "the others are split at random (--seed). Malformed, blank or non-UTF-8 lines are "
    "skipped with a warning naming them, or stop the run with --strict; ~ and $VARIABLES "
    "are expanded"
)
# --init-from: the peak learning rate where none is given (transformers' Trainer's default:
# a pretrained model is fine-tuned, not trained afresh).
FINE_TUNING_LEARNING_RATE = 5e-5
# The flags of the architecture, which a checkpoint brings.
ARCHITECTURE_FLAGS = ("hidden_dim", "num_layers", "num_heads", "num_key_value_heads")
# The rnn model's --attention scores, its `attention` argument's (a module without Keras).
RNN_ATTENTIONS = ATTENTION_SCORES
# The sources that take --source-lang, --target-lang (and, parallel: only, --test-prefix).
LANGUAGE_SOURCES = ("parallel:", "hf:")
# `--dataset` PREFIX:PATH sources and what PATH must be; other values are 'builtin' or a
# tfds name, spelled as tfds spells them: "name", "name/config", "name/config:1.0.0".
DATASET_PATHS = {"tsv:": "file", "parallel:": "folder", "hf:": "folder"}
TFDS_NAME = re.compile(r"[a-z][a-z0-9_]*(/[A-Za-z0-9_.\-]+)?(:[0-9.*]+)?")
DATASET_CHOICES = (
    "'builtin', 'tsv:PATH', 'parallel:DIR', 'hf:PATH' or a tensorflow-datasets name such as "
    "'ted_hrlr_translate/pt_to_en'"
)


def build_translation_parser(description=None):
    """The translation script's `argparse` parser: the common flags and the model's.

    Args:
        description: text `--help` shows first (kept as written).

    Returns:
        an `argparse.ArgumentParser`.

    Example:

    >>> from keras_attention.tasks.translation.flags import build_translation_parser
    >>> args = build_translation_parser().parse_args(["--beam-width", "4"])
    >>> args.beam_width, args.vocabulary_size, args.output_dir, args.hidden_dim
    (4, 1000, 'runs/nmt', None)
    """
    return cli.training_parser(
        description,
        output_dir="runs/nmt",
        dataset_formats=TRANSLATION_DATASET_FORMATS,
        flag_groups=(
            _add_model_flags,
            cli.decoder_flags(learning_rate_help="peak learning rate (default: per model)"),
            _add_data_flags,
            _add_report_flags,
        ),
    )


def _add_model_flags(add):
    """`--model` and the flags of the translator's size and attention."""
    add(
        "--model",
        choices=sorted(TRANSLATION_MODEL_DEFAULTS),
        default="transformer",
        help="'transformer': encoder-decoder Transformer; 'rnn': bidirectional RNN encoder "
        "and an attention decoder (--cell, --attention) (default: %(default)s)",
    )
    add(
        "--vocabulary-size",
        type=cli.positive_int,
        default=1000,
        help="most tokens per language, the 260 byte and special tokens included",
    )
    add(
        "--max-length",
        type=cli.token_length,
        help="tokens per source and per target sentence (default: fits 99.9%% of the "
        "training sentences, measured on up to 200,000 of them; see --long-pairs)",
    )
    add(
        "--hidden-dim",
        type=cli.positive_int,
        help="Transformer width or RNN units (default: "
        + cli.per_model_text(
            {name: d["hidden_dim"] for name, d in TRANSLATION_MODEL_DEFAULTS.items()}
        )
        + ")",
    )
    add("--num-layers", type=cli.positive_int, default=2, help="Transformer blocks per side")
    add("--num-heads", type=cli.positive_int, default=4, help="Transformer attention heads")
    add(
        "--num-key-value-heads",
        type=cli.positive_int,
        help="Transformer key/value heads for grouped-query attention, dividing --num-heads "
        "(1: multi-query; default: one per attention head)",
    )
    add(
        "--init-from",
        metavar="CHECKPOINT",
        help="start from a pretrained Marian (opus-mt) translator instead of random weights: "
        "a Hugging Face MarianMTModel folder with its tokenizer files (source.spm, target.spm, "
        "vocab.json), as save_pretrained writes them, or its handle hf://ORG/NAME[@REVISION] "
        "(e.g. hf://Helsinki-NLP/opus-mt-en-de, through the Hugging Face cache: HF_HOME, "
        "HF_HUB_OFFLINE); its architecture and tokenizers are kept "
        "(no vocabulary is learned, --vocabulary-size is not used), and the learning rate "
        f"defaults to {FINE_TUNING_LEARNING_RATE:g}",
    )
    add("--cell", choices=("gru", "lstm"), default="gru", help="RNN cell of the rnn model")
    add(
        "--attention",
        choices=RNN_ATTENTIONS,
        default="additive",
        help="attention score of the rnn model",
    )
    add(
        "--attention-style",
        choices=("bahdanau", "luong"),
        default="bahdanau",
        help="where the rnn model's decoder attends (luong adds input feeding)",
    )
    add(
        "--location-features",
        choices=("none", "coverage", "location"),
        default="coverage",
        help="what the rnn model's attention scores learn from its past alignments: their "
        "sum ('coverage', Tu et al. 2016: fewer repeated or skipped parts in long targets), a "
        "convolution of the previous one ('location'), or nothing ('none', Bahdanau's "
        "published model) (default: %(default)s)",
    )


def _add_data_flags(add):
    """The flags of the built-in corpus and of the parallel: and hf: data sets."""
    add(
        "--builtin-pairs",
        type=cli.positive_int,
        default=20000,
        help="sentence pairs of the built-in corpus",
    )
    add("--source-lang", help="parallel: and hf: the source language, e.g. 'en'")
    add("--target-lang", help="parallel: and hf: the target language, e.g. 'de'")
    add(
        "--test-prefix",
        help="parallel: the test set to use where DIR holds several, e.g. 'test_2016_flickr'",
    )
    add(
        "--allow-outside-links",
        action="store_true",
        help="parallel: read files of DIR that are symbolic links leading outside it (refused "
        "by default, naming the link and its target; DIR itself may be a link)",
    )
    add(
        "--long-pairs",
        choices=("drop", "truncate"),
        default="drop",
        help="training pairs longer than --max-length: left out of training (counted once an "
        "epoch), or cut to it; validation pairs are cut, held-out sentences all translated",
    )


def _add_report_flags(add):
    """The flags of what is scored, printed and drawn after training, and the seed."""
    add(
        "--eval-sentences", type=cli.positive_int, help="held-out sentences to score (default: all)"
    )
    add("--samples", type=cli.non_negative_int, default=5, help="translations to print")
    add("--plots", type=cli.non_negative_int, default=3, help="alignment plots to draw")
    add("--seed", type=cli.seed_value, default=0, help=cli.SEED_HELP)


def parse_translation_arguments(argv=None, parser=None):
    """Parsed flags, with the chosen model's defaults where a flag was left out.

    Args:
        argv: the arguments (None: `sys.argv[1:]`).
        parser: the parser to use (None: `build_translation_parser()`).

    Returns:
        an `argparse.Namespace`.

    Example:

    >>> from keras_attention.tasks.translation.flags import parse_translation_arguments
    >>> parse_translation_arguments(["--hidden-dim", "32"]).hidden_dim
    32
    """
    parser = parser or build_translation_parser()
    args = parser.parse_args(argv)
    cli.warn_unused_model_flags(argv, args.model, TRANSLATION_MODEL_FLAGS)
    key_value_heads = args.num_key_value_heads
    if key_value_heads is not None and args.num_heads % key_value_heads:
        parser.error(
            "--num-key-value-heads must divide --num-heads. "
            f"Received: --num-heads {args.num_heads}, --num-key-value-heads {key_value_heads}"
        )
    languages = [args.source_lang, args.target_lang, args.test_prefix]
    if any(languages) and not args.dataset.startswith(LANGUAGE_SOURCES):
        parser.error(
            "--source-lang, --target-lang and --test-prefix apply to parallel: and hf: data "
            f"sets. Received: --dataset {args.dataset}"
        )
    if args.init_from:
        _check_fine_tuning_flags(parser, args)
    args = cli.with_model_defaults(args, TRANSLATION_MODEL_DEFAULTS)
    if args.model == "transformer" and not args.init_from and args.hidden_dim % args.num_heads:
        parser.error(
            "--num-heads must divide --hidden-dim (each head reads an equal share). "
            f"Received: --hidden-dim {args.hidden_dim}, --num-heads {args.num_heads}"
        )
    return args


def check_translation_data(parser, args):
    """Stops with one `error:` line (exit status 2) on what the flags name that is not there.

    Pure Python, run by the script before TensorFlow loads and before the run
    claims its `--output-dir`: `--dataset` is 'builtin', a tfds name or a
    known prefix followed by an existing file (tsv:) or folder (parallel:,
    hf:, with the `datasets` package installed); parallel: and hf: have two
    different `--source-lang` and `--target-lang`; a parallel: folder holds
    `train.SRC` and `train.TGT`, and the `--test-prefix` set if one is
    given (hf: takes none); a tfds name is one tensorflow-datasets knows, or
    is prepared under `--data-dir` (`tfds_name_problem`); an `--init-from`
    folder exists. The files' lines are read later, by the loader.

    Args:
        parser: the script's parser.
        args: the parsed flags (`parse_translation_arguments`).

    Example:

    >>> from keras_attention.tasks.translation.flags import (
    ...     build_translation_parser, check_translation_data, parse_translation_arguments)
    >>> parser = build_translation_parser()
    >>> check_translation_data(parser, parse_translation_arguments([], parser))
    >>> check_translation_data(parser, parse_translation_arguments(["--dataset", "parallel:"]))
    Traceback (most recent call last):
    ...
    SystemExit: 2
    """
    path = cli.check_dataset_flag(
        parser,
        args.dataset,
        paths=DATASET_PATHS,
        is_named=_is_named_translation_set,
        expected=DATASET_CHOICES,
        data_dir=args.data_dir,
    )
    if args.dataset.startswith(LANGUAGE_SOURCES):
        _check_languages(parser, args, path)
    check_init_from(parser, args)


def _is_named_translation_set(dataset):
    """'builtin' or a tfds name; not a file spelled like one ("data/spa.tsv" needs tsv:)."""
    if dataset == "builtin":
        return True
    return TFDS_NAME.fullmatch(dataset) is not None and not os.path.isfile(dataset)


def _check_languages(parser, args, folder):
    """parallel: and hf: need two different languages; a parallel: folder their train files."""
    source, target = args.source_lang, args.target_lang
    parallel = args.dataset.startswith("parallel:")
    found = ""
    if parallel:
        names = [name.removesuffix(".gz") for name in os.listdir(folder)]
        languages = sorted({name[len("train.") :] for name in names if name.startswith("train.")})
        found = f"; {folder} has train files for {', '.join(languages) or 'no language'}"
    if not source or not target or source == target:
        cli.usage_error(
            parser,
            f"--dataset {args.dataset.split(':')[0]}: needs two different languages, "
            f"--source-lang and --target-lang (e.g. en and de){found}. Received: "
            f"--source-lang {source}, --target-lang {target}",
        )
    if not parallel:
        if args.test_prefix:
            cli.usage_error(
                parser,
                "--test-prefix chooses among the test sets of a parallel: folder; an hf: folder "
                f"has its own test split. Received: --test-prefix {args.test_prefix}",
            )
        return
    for flag, lang in (("--source-lang", source), ("--target-lang", target)):
        if "train." + lang not in names:
            cli.usage_error(
                parser,
                f"{flag} must be the suffix of a train file of the parallel: folder; "
                f"there is no train.{lang}{found}. Received: {flag} {lang}",
            )
    prefixes = sorted({name.rpartition(".")[0] for name in names if "." in name})
    if args.test_prefix and args.test_prefix not in prefixes:
        tests = [prefix for prefix in prefixes if prefix.startswith("test")]
        cli.usage_error(
            parser,
            f"--test-prefix must name a set of the parallel: folder; {folder} has no "
            f"{args.test_prefix}.* files, its test sets are {', '.join(tests) or 'none'}. "
            f"Received: --test-prefix {args.test_prefix}",
        )


def _check_fine_tuning_flags(parser, args):
    """`--init-from`: a Transformer of the checkpoint's architecture, a smaller learning rate."""
    if args.model != "transformer":
        parser.error(
            f"--init-from starts from a pretrained Transformer: leave --model out. "
            f"Received: --model {args.model}"
        )
    for name in ARCHITECTURE_FLAGS:
        if getattr(args, name) != parser.get_default(name):
            flag = "--" + name.replace("_", "-")
            parser.error(
                f"{flag} {getattr(args, name)}: --init-from keeps the checkpoint's architecture; "
                f"leave {flag} out"
            )
    if is_checkpoint_handle(args.init_from):
        init_from_folder(parser, args)
    else:  # a missing folder is refused by check_translation_data, in its own words
        args.init_from = cli.expand_path(args.init_from)
    if args.learning_rate is None:
        args.learning_rate = FINE_TUNING_LEARNING_RATE

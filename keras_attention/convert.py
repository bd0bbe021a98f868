"""Convert a pretrained checkpoint into a TensorFlow SavedModel that serves it, with no training.

Reads a checkpoint folder as it is downloaded: a Hugging Face folder (as
`save_pretrained` writes it or `huggingface-cli download` leaves it) or a
keras-hub ViT preset folder (as `save_to_preset` writes it). It checks the
folder against itself, builds the library's model from it and writes the
model's SavedModel to --export (see `keras_attention.tasks.checkpoint_export`):

  image classifiers (Hugging Face ViTForImageClassification and
  SwinForImageClassification, keras-hub ViT presets): raw pixels 0..255 of
  any size in (also uint8 pixels and encoded JPEG or PNG bytes),
  `probabilities` and `labels` out;
  translators (Hugging Face MarianMTModel, the opus-mt models, with their
  tokenizer files source.spm, target.spm and vocab.json): strings in,
  `translation` out; load the SavedModel after `import tensorflow_text`.

What cannot be read or converted ends with one line saying why.
Installed as the command `keras-attention-convert`; the same as
`python -m keras_attention.convert`.

examples:
    keras-attention-convert hf://google/vit-base-patch16-224 --export served/vit
    keras-attention-convert hf://Helsinki-NLP/opus-mt-en-de --export served/en-de
    keras-attention-convert ~/checkpoints/vit-base-patch16-224 --export served/vit
    keras-attention-convert ~/checkpoints/opus-mt-en-de --export served/en-de --beam-width 4
"""

import os
import sys

from keras_attention.native_start_up_lines import import_tensorflow_quietly
from keras_attention.training.command_line import run_export_command

COMMAND = "keras-attention-convert"


def build_parser():
    """The command line; it imports no TensorFlow, so `--help` answers at once."""
    from keras_attention.training.command_line import command_name
    from keras_attention.training.command_line import export_command_parser
    from keras_attention.training.command_line import positive_int

    parser = export_command_parser(
        command_name(COMMAND, "keras_attention.convert"),
        __doc__,
        "checkpoint",
        "the checkpoint folder: a Hugging Face folder (ViT, Swin or Marian: config.json, "
        "model.safetensors or pytorch_model.bin, and the tokenizer or image-processor "
        "files) or a keras-hub ViT preset folder; or a hub handle of one: hf://ORG/NAME"
        "[@REVISION] (through the Hugging Face cache: HF_HOME, HF_HUB_OFFLINE), "
        "kaggle://OWNER/MODEL/keras/VARIANT[/VERSION] or a keras-hub preset name",
        "",
    )
    parser.add_argument(
        "--beam-width",
        type=positive_int,
        metavar="N",
        help="translators: 1 for greedy search, more for beam search with N beams "
        "(default: 1; image classifiers take no search settings)",
    )
    parser.add_argument(
        "--max-length",
        type=positive_int,
        metavar="N",
        help="translators: the longest source read and the longest translation written, in "
        "SentencePiece pieces (default: 128, at most the model's own limit)",
    )
    parser.add_argument(
        "--ignore-unexpected-weights",
        action="store_true",
        help="Hugging Face folders: convert although the weights hold tensors the config does "
        "not describe, leaving them out (default: off; such a folder is refused, naming them)",
    )
    return parser


def main(argv=None):
    """Parses the flags, then converts; what cannot be converted ends with its reason."""
    args = build_parser().parse_args(argv)

    def write():
        import_tensorflow_quietly()  # without its start-up lines about a missing GPU
        from keras_attention.tasks.checkpoint_export import export_checkpoint

        return export_checkpoint(
            os.path.expanduser(args.checkpoint),
            args.export,
            beam_width=args.beam_width,
            max_length=args.max_length,
            ignore_unexpected_weights=args.ignore_unexpected_weights,
        )

    return run_export_command(write)


if __name__ == "__main__":
    main(sys.argv[1:])

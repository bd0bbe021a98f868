"""Marian's tokenizer files written from sentence pairs, for Marian checkpoints made in code.

`write_tokenizer_files` trains a SentencePiece model per language and writes
`source.spm`, `target.spm` and the joint `vocab.json` in Marian's numbering,
as `MarianTokenizer.save_pretrained` leaves them. The Marian benchmark
(`marian_generate`) and the tests' small Marian folders write theirs with it.
"""

import io
import json
import os


def sentencepiece_model(texts, size, character_coverage=1.0):
    """The serialized SentencePiece model of about `size` pieces trained on `texts`."""
    import sentencepiece

    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(texts),
        model_writer=model,
        vocab_size=size,
        hard_vocab_limit=False,
        character_coverage=character_coverage,
        minloglevel=2,
    )
    return model.getvalue()


def write_tokenizer_files(folder, pairs, pieces=60, vocab_size=None, character_coverage=1.0):
    """`source.spm`, `target.spm` and the joint `vocab.json` (Marian's layout); returns it.

    Marian's numbering: `</s>` 0, `<unk>` 1, the pieces of both models, then
    `<unused N>` entries up to `vocab_size` where given (a real joint
    vocabulary is larger than two small models), `<pad>` last.

    Args:
        folder: where the files go (made if absent).
        pairs: `(source, target)` sentences each model is trained on.
        pieces: the size of each SentencePiece model.
        vocab_size: the size of `vocab.json`, at least what the models hold.
        character_coverage: SentencePiece's (0.9995 is its default).
    """
    import sentencepiece

    os.makedirs(folder, exist_ok=True)
    vocabulary = {"</s>": 0, "<unk>": 1}
    for name, texts in (
        ("source.spm", [s for s, _ in pairs]),
        ("target.spm", [t for _, t in pairs]),
    ):
        proto = sentencepiece_model(texts, pieces, character_coverage)
        with open(os.path.join(folder, name), "wb") as file:
            file.write(proto)
        processor = sentencepiece.SentencePieceProcessor(model_proto=proto)
        for index in range(processor.vocab_size()):
            piece = processor.id_to_piece(index)
            if piece not in vocabulary and piece not in ("<s>", "<pad>"):
                vocabulary[piece] = len(vocabulary)
    while vocab_size is not None and len(vocabulary) < vocab_size - 1:
        vocabulary[f"<unused {len(vocabulary)}>"] = len(vocabulary)
    vocabulary["<pad>"] = len(vocabulary)
    with open(os.path.join(folder, "vocab.json"), "w", encoding="utf-8") as file:
        json.dump(vocabulary, file, ensure_ascii=False)
    return vocabulary

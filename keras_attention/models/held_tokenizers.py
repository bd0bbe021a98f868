"""Tokenizers a text model holds and saves in its `.keras` file, as keras-hub tasks do.

A model that knows its tokenizers answers `generate(...)` and
`export(path)` without being handed them each time, and a `.keras` file
saved from it (the per-epoch checkpoints of the example scripts included)
carries them: `keras.saving.load_model` gives back a model that generates.
"""

import os

# The folder of each tokenizer inside the model's assets, as `<role>_tokenizer`.
_FOLDER_SUFFIX = "_tokenizer"


class HeldTokenizers:
    """Adds `attach_tokenizers`, `tokenizers` and their saving to a `keras.Model`.

    A class using it names its `tokenizer_roles` (the translators
    `("source", "target")`, the captioners `("caption",)`) and
    `tokenizer_vocabulary_sizes()` (the vocabulary size each role's ids
    must have). `save_assets` and `load_assets`, which Keras calls when it
    writes and reads a `.keras` file, keep each tokenizer in the file's
    assets; a file without them (saved before any was attached) loads as a
    model that holds none.

    The tokenizers stay out of Keras' and TensorFlow's tracking (they are
    not layers, and their traced functions must not become part of the
    model's exports).

    Example:

    >>> import os, tempfile, keras
    >>> import keras_attention as ka
    >>> tokenizer = ka.text.SubwordEncoder(["[PAD]", "[UNK]", "[START]", "[END]", "a", "dog"])
    >>> model = ka.models.ShowAttendTellCaptioner(vocabulary_size=6, max_caption_length=4,
    ...     image_size=16, embedding_dim=8, units=16, attention_units=8)
    >>> path = os.path.join(tempfile.mkdtemp(), "captioner.keras")
    >>> model.attach_tokenizers(tokenizer).save(path)
    >>> keras.saving.load_model(path).tokenizers["caption"].vocabulary[-1]
    'dog'
    """

    tokenizer_roles = ()

    def tokenizer_vocabulary_sizes(self):
        """The vocabulary size of each role's ids, in `tokenizer_roles` order."""
        raise NotImplementedError

    @property
    def tokenizers(self):
        """The tokenizers held, `{role: tokenizer}` (empty when none is attached)."""
        return dict(vars(self).get("_held_tokenizers", {}))

    def attach_tokenizers(self, *tokenizers):
        """Keeps the tokenizers the model's ids come from, one per role in `tokenizer_roles`.

        Each must be a `keras_attention.text` tokenizer (a `ReversibleTokenizer`
        or a `SubwordEncoder`) with the vocabulary size of the model's ids.

        Returns:
            the model, so that `model = build(...).attach_tokenizers(...)` reads well.

        Raises:
            ValueError: another number of tokenizers, another kind, or a
                vocabulary size that does not match the model's.
        """
        # keras_attention.text needs TensorFlow: imported here, so that the
        # models load on every backend.
        from keras_attention.text.tokenizer_files import check_savable_tokenizer

        roles = self.tokenizer_roles
        if len(tokenizers) != len(roles):
            raise ValueError(
                f"{type(self).__name__}.attach_tokenizers takes {len(roles)} tokenizer(s), "
                f"the {' and '.join(roles)} one(s). Received: {len(tokenizers)}"
            )
        for role, tokenizer, size in zip(roles, tokenizers, self.tokenizer_vocabulary_sizes()):
            check_savable_tokenizer(tokenizer, f"{role}_tokenizer")
            if tokenizer.vocabulary_size != size:
                raise ValueError(
                    f"`{role}_tokenizer` must have the model's {role} vocabulary size {size}. "
                    f"Received: a tokenizer of {tokenizer.vocabulary_size} tokens"
                )
        # vars(): kept beside Keras' tracking, which would wrap or trace them.
        vars(self)["_held_tokenizers"] = dict(zip(roles, tokenizers))
        return self

    def held_tokenizers(self, method):
        """The tokenizers in role order, or a ValueError saying how `method` gets them."""
        held = self.tokenizers
        if len(held) == len(self.tokenizer_roles):
            return [held[role] for role in self.tokenizer_roles]
        roles = ", ".join(f"{role}_tokenizer" for role in self.tokenizer_roles)
        raise ValueError(
            f"{type(self).__name__}.{method} needs the tokenizer(s) the model's ids come from: "
            f"model.attach_tokenizers({roles}) first (models built by the example scripts "
            "hold theirs, and their .keras checkpoints keep them). Received: a model that holds "
            "no tokenizer"
        )

    def save_assets(self, dir_path):
        """Writes each held tokenizer to `dir_path/<role>_tokenizer` (Keras calls it on save)."""
        from keras_attention.text.tokenizer_files import save_tokenizer

        for role, tokenizer in self.tokenizers.items():
            save_tokenizer(tokenizer, os.path.join(dir_path, role + _FOLDER_SUFFIX))

    def load_assets(self, dir_path):
        """Reads back the tokenizers `save_assets` wrote (Keras calls it on load)."""
        folders = [os.path.join(dir_path, role + _FOLDER_SUFFIX) for role in self.tokenizer_roles]
        if not all(os.path.isdir(folder) for folder in folders):
            return  # saved without tokenizers
        from keras_attention.text.tokenizer_files import load_tokenizer

        self.attach_tokenizers(*(load_tokenizer(folder) for folder in folders))

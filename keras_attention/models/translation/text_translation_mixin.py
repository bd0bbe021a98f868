"""`generate(texts)` and `translate(texts, ...)`: strings in, strings out, for the translators."""

import keras
import numpy as np

from keras_attention.models.constructor_config import check_sizes_and_dropout
from keras_attention.models.held_tokenizers import HeldTokenizers


class TextTranslationMixin(HeldTokenizers):
    """Adds `generate`, `translate` and a string-in `export` to a decoding model.

    The translators are functional `keras.Model`s built from `keras.Input`s,
    so `summary()`, `fit` (with `jit_compile=True`) and `.keras` files work
    as for any functional model, and a re-loaded file is of its class again.
    Besides the teacher-forced forward pass they implement the decoding
    protocol of `keras_attention.generation` (`vocabulary_size`,
    `max_length`, `encode`, `initial_cache`, `step`): `greedy_search`,
    `beam_search` and `export_translator` take the model itself, and
    `generate` / `translate` turn strings into strings with the source and
    target tokenizers it holds (`attach_tokenizers(source, target)`, kept in
    its `.keras` file; see `HeldTokenizers`) or is given.

    The model (a `keras.Model` listing this class first among its bases)
    provides `encode`, `initial_cache`, `step`, `target_vocabulary_size`
    (this class makes it the decoding protocol's `vocabulary_size`) and
    `max_length`, and may give `max_source_length` / `max_target_length`
    (the default lengths of `translate`; None where the model has no limit).

    Example:

    >>> from keras_attention.models.translation.rnn_attention_translator import (
    ...     RNNAttentionTranslator)
    >>> from keras_attention.models.translation.text_translation_mixin import TextTranslationMixin
    >>> issubclass(RNNAttentionTranslator, TextTranslationMixin)
    True
    """

    tokenizer_roles = ("source", "target")

    def tokenizer_vocabulary_sizes(self):
        """The source and target vocabulary sizes, which the tokenizers must have."""
        return self.source_vocabulary_size, self.target_vocabulary_size

    @property
    def vocabulary_size(self):
        """Number of target token ids: the last axis of `step`'s logits."""
        return self.target_vocabulary_size

    @staticmethod
    def _check_translator_arguments(arguments, sizes):
        """Checks `dropout`, the vocabulary sizes and the other `sizes` named in `arguments`."""
        vocabularies = ("source_vocabulary_size", "target_vocabulary_size")
        check_sizes_and_dropout(arguments, vocabularies + tuple(sizes))

    @staticmethod
    def _translation_inputs():
        """The symbolic `(source, target)` id inputs `(B, S)`, `(B, T)` of the graph."""
        source = keras.Input((None,), dtype="int32", name="source")
        target = keras.Input((None,), dtype="int32", name="target")
        return source, target

    def _embed_with_dropout(self, side, embedding, ids, dropout):
        """`embedding(ids)` then dropout, the layers kept as `<side>_embedding`
        and `<side>_dropout` (made in that order, as seeded weights expect)."""
        setattr(self, f"{side}_embedding", embedding)
        embedded = embedding(ids)
        dropout_layer = keras.layers.Dropout(dropout, name=f"{side}_embedding_dropout")
        setattr(self, f"{side}_dropout", dropout_layer)
        return dropout_layer(embedded)

    def _logits(self, decoded, target_vocabulary_size):
        """The logits layer (kept as `logits_layer`) on the decoder's output: `(B, T, V)`."""
        # float32 logits even under mixed precision: a stable softmax and loss.
        self.logits_layer = keras.layers.Dense(
            target_vocabulary_size, dtype="float32", name="logits"
        )
        return self.logits_layer(decoded)

    def generate(
        self,
        inputs,
        max_length=None,
        *,
        max_source_length=None,
        beam_width=1,
        length_penalty=0.6,
        return_attention=False,
    ):
        """Translates `inputs` with the tokenizers the model holds, as keras-hub's `generate`.

        `translate(inputs, source_tokenizer, target_tokenizer, ...)` with the
        tokenizers of `attach_tokenizers` (the example scripts attach theirs,
        and the model's `.keras` files keep them).

        Args:
            inputs: one string, or a list of strings.
            max_length: most target pieces produced, the end token included;
                defaults to the model's `max_target_length` (needed for a
                model without one, the RNN translator).
            max_source_length: source pieces read; defaults to the model's
                (needed for the RNN translator too).
            beam_width: 1 for greedy search, more for beam search.
            length_penalty: GNMT length penalty of beam search (>= 0).
            return_attention: also return the alignments (see `translate`).

        Returns:
            a string for a string, a list of strings for a list; with
            `return_attention`, also the alignments.

        Raises:
            ValueError: the model holds no tokenizers, or a length is missing.

        Example:

        >>> from keras_attention.models.translation.transformer_translator import (
        ...     TransformerTranslator)
        >>> from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
        >>> source = ReversibleTokenizer.train(["the cat", "a dog"], 300)
        >>> target = ReversibleTokenizer.train(["el gato", "un perro"], 300)
        >>> model = TransformerTranslator(
        ...     source_vocabulary_size=source.vocabulary_size,
        ...     target_vocabulary_size=target.vocabulary_size, max_source_length=6,
        ...     max_target_length=5, hidden_dim=8, num_layers=1, num_heads=2, intermediate_dim=8)
        >>> translations = model.attach_tokenizers(source, target).generate(["the cat", "a dog"])
        >>> len(translations), isinstance(translations[0], str)
        (2, True)
        """
        source_encoder, target_encoder = self.held_tokenizers("generate")
        for name, value, own in (
            ("max_length", max_length, "max_target_length"),
            ("max_source_length", max_source_length, "max_source_length"),
        ):
            if value is None and getattr(self, own, None) is None:
                raise ValueError(
                    f"`{name}` must be given to {type(self).__name__}.generate: the model has "
                    f"no `{own}` of its own. Received: {name}=None"
                )
        return self.translate(
            inputs,
            source_encoder,
            target_encoder,
            max_source_length=max_source_length,
            max_target_length=max_length,
            beam_width=beam_width,
            length_penalty=length_penalty,
            return_attention=return_attention,
        )

    def translate(
        self,
        texts,
        source_encoder=None,
        target_encoder=None,
        *,
        max_source_length=None,
        max_target_length=None,
        beam_width=1,
        length_penalty=0.6,
        return_attention=False,
    ):
        """Translates strings with greedy (`beam_width=1`) or beam search.

        Runs the graph that `keras_attention.serving.export_translator`
        saves (`make_translation_function`): the same tokenization,
        XLA-compiled search and detokenization, so it answers as the
        exported SavedModel does, with the tokenizers of the training ids.

        Args:
            texts: one string, or a list of strings.
            source_encoder: the tokenizer of the source ids (a
                `ReversibleTokenizer` or a WordPiece `SubwordEncoder`);
                default: the one the model holds (`attach_tokenizers`).
            target_encoder: the tokenizer of the target ids; its start and
                end tokens start and stop decoding; default: the one held.
            max_source_length: source pieces read (longer texts are cut);
                defaults to the model's `max_source_length`, and must be
                given for a model without one (the RNN translator).
            max_target_length: most target pieces produced, the end token
                included; defaults to the model's `max_target_length`, and
                must be given for a model without one.
            beam_width: 1 for greedy search, more for beam search.
            length_penalty: GNMT length penalty of beam search (>= 0).
            return_attention: also return the attention maps.

        Returns:
            The translation (a string for a string, a list of strings for a
            list) and, with `return_attention`, the alignment of each text
            (a dict, or a list of dicts) of `"attention"` `(T, S)` float32
            NumPy array, `"source_tokens"` (the S source pieces) and
            `"translation_tokens"` (the T produced pieces, the end token
            included): the arguments of
            `keras_attention.visualization.plot_alignment`.

        Example:

        >>> from keras_attention.models.translation.transformer_translator import (
        ...     TransformerTranslator)
        >>> from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
        >>> tokenizer = ReversibleTokenizer.train(["a b a", "b a b"], 300)
        >>> size = tokenizer.vocabulary_size
        >>> model = TransformerTranslator(
        ...     source_vocabulary_size=size, target_vocabulary_size=size,
        ...     max_source_length=4, max_target_length=3, hidden_dim=8, num_layers=1,
        ...     num_heads=2, intermediate_dim=8)
        >>> translation, alignment = model.translate(
        ...     "a b", tokenizer, tokenizer, beam_width=2, return_attention=True)
        >>> isinstance(translation, str), alignment["source_tokens"]
        (True, [' a', ' b'])
        >>> alignment["attention"].shape == (len(alignment["translation_tokens"]), 2)
        True
        """
        # serving builds on models: imported here, not at the top, to avoid a cycle.
        from keras_attention.serving.text_translation import translate_texts

        source_encoder, target_encoder = self._given_or_held(
            "translate", source_encoder, target_encoder
        )
        return translate_texts(
            self,
            texts,
            source_encoder,
            target_encoder,
            max_source_length=max_source_length,
            max_target_length=max_target_length,
            beam_width=beam_width,
            length_penalty=length_penalty,
            return_attention=return_attention,
        )

    def export(
        self,
        filepath,
        source_encoder=None,
        target_encoder=None,
        *,
        max_source_length=None,
        max_target_length=None,
        beam_width=1,
        teacher_forced=False,
        **kwargs,
    ):
        """Writes a SavedModel that translates strings: `ka.serving.export_translator`.

        `model.export(path)` (with the tokenizers the model holds) or
        `model.export(path, source_tokenizer, target_tokenizer)` writes the
        `serving_default` signature `text` (a string or a batch) ->
        `translation`, `attention`, with the tokenizers, the XLA-compiled
        search and detokenization inside. keras' own `export` of this model
        would serve the teacher-forced graph (ids in, next-token logits out),
        which translates nothing: `teacher_forced=True` writes that one, and
        `**kwargs` (`format`, `input_signature`, ...) go to
        `keras.Model.export` then.

        Args:
            filepath: folder to write the SavedModel to.
            source_encoder: the tokenizer of the source ids; default: the one held.
            target_encoder: the tokenizer of the target ids; default: the one held.
            max_source_length: source pieces read; defaults to the model's.
            max_target_length: most target pieces produced; defaults to the model's.
            beam_width: 1 for greedy search, more for beam search.
            teacher_forced: write keras' ids-to-logits export instead.

        Returns:
            `filepath` as a string (None with `teacher_forced`, as keras returns).
        """
        if teacher_forced:
            return keras.Model.export(self, filepath, **kwargs)
        missing = (source_encoder is None or target_encoder is None) and not self.tokenizers
        if missing or kwargs:
            raise ValueError(
                f"{type(self).__name__}.export writes a translator from the tokenizers of its "
                "ids: export(path) with the tokenizers it holds (attach_tokenizers), "
                "export(path, source_tokenizer, target_tokenizer) or "
                "ka.serving.export_translator; export(path, teacher_forced=True) writes keras' "
                f"ids-to-logits graph. Received: source_encoder={source_encoder!r}, "
                f"target_encoder={target_encoder!r}, other arguments {sorted(kwargs)}"
            )
        source_encoder, target_encoder = self._given_or_held(
            "export", source_encoder, target_encoder
        )
        # serving builds on models: imported here, not at the top, to avoid a cycle.
        from keras_attention.serving.text_translation import length_or_models
        from keras_attention.serving.translation_export import export_translator

        return export_translator(
            self,
            filepath,
            source_encoder,
            target_encoder,
            length_or_models(self, "max_source_length", max_source_length),
            length_or_models(self, "max_target_length", max_target_length),
            beam_width,
        )

    def _given_or_held(self, method, source_encoder, target_encoder):
        """The tokenizers given, the ones held in place of those not given."""
        if source_encoder is not None and target_encoder is not None:
            return source_encoder, target_encoder
        held_source, held_target = self.held_tokenizers(method)
        return (
            held_source if source_encoder is None else source_encoder,
            held_target if target_encoder is None else target_encoder,
        )

    def attention_examples(self, texts, source_encoder, target_encoder, **translate_arguments):
        """Translates `texts` and gathers, per text, every attention map the model gives.

        The pieces and the decoding alignment come from `translate`. A model
        with `attention_maps(source_ids, target_ids)` (the Transformer) also
        gives every layer's and head's encoder, decoder and cross-attention,
        teacher-forced on its own translation; for the others the alignment
        is their one layer and head of cross-attention.

        Args:
            texts: list of source strings.
            source_encoder, target_encoder: the tokenizers of `translate`.
            **translate_arguments: `max_source_length`, `beam_width`, ...

        Returns:
            list of dicts, one per text, as
            `ka.visualization.write_translation_explorer` takes them:
            `"source_tokens"` (S pieces), `"target_tokens"` (T pieces),
            `"cross_attention"` `(layers, heads, T, S)` and, with
            `attention_maps`, `"encoder_attention"` `(layers, heads, S, S)`
            and `"decoder_attention"` `(layers, heads, T, T)`.
        """
        _, alignments = self.translate(
            list(texts),
            source_encoder,
            target_encoder,
            return_attention=True,
            **translate_arguments,
        )
        token_ids = {token: index for index, token in enumerate(target_encoder.vocabulary)}
        examples = []
        for text, alignment in zip(texts, alignments):
            source_pieces = list(alignment["source_tokens"])
            target_pieces = list(alignment["translation_tokens"])
            example = {
                "source_tokens": source_pieces,
                "target_tokens": target_pieces,
                # (T, S) -> (layers=1, heads=1, T, S)
                "cross_attention": np.asarray(alignment["attention"])[None, None],
            }
            if hasattr(self, "attention_maps") and source_pieces and target_pieces:
                source_ids = source_encoder.encode([text], len(source_pieces))  # (1, S)
                # The decoder reads the start token, then each produced piece.
                produced = [token_ids[piece] for piece in target_pieces[:-1]]
                target_ids = np.asarray([[target_encoder.start_id, *produced]], "int32")
                maps = self.attention_maps(np.asarray(source_ids), target_ids)
                example["cross_attention"] = maps["cross"][0]
                example["encoder_attention"] = maps["encoder"][0]
                example["decoder_attention"] = maps["decoder"][0]
            examples.append(example)
        return examples

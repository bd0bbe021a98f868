"""The Transformer translator: an encoder over the source, a decoder over the target.

Vaswani et al., "Attention Is All You Need" (https://arxiv.org/abs/1706.03762).
"""

import functools

import keras
import numpy as np
from keras import ops

from keras_attention.generation.decoding_protocol import MEMORY_MASK
from keras_attention.layers.position.token_and_position_embedding import POSITION_MODES
from keras_attention.layers.position.token_and_position_embedding import TokenAndPositionEmbedding
from keras_attention.layers.transformer.transformer_decoder_block import TransformerDecoderBlock
from keras_attention.layers.transformer.transformer_encoder_block import TransformerEncoderBlock
from keras_attention.models import transformer_decoding
from keras_attention.models.checkpoints.checkpoint_readers import read_checkpoint
from keras_attention.models.constructor_config import ConstructorConfig
from keras_attention.models.constructor_config import check_heads_divide_width
from keras_attention.models.constructor_config import model_builder
from keras_attention.models.default_compile import DefaultCompile
from keras_attention.models.transformer_decoding import MEMORY
from keras_attention.models.translation.text_translation_mixin import TextTranslationMixin
from keras_attention.ops.masks import PADDING_ID
from keras_attention.validation import check_bool
from keras_attention.validation import check_positive_int


@keras.saving.register_keras_serializable(package="keras_attention")
class TransformerTranslator(TextTranslationMixin, DefaultCompile, ConstructorConfig, keras.Model):
    """An encoder-decoder Transformer for sequence-to-sequence translation.

    The model of Vaswani et al. 2017 (https://arxiv.org/abs/1706.03762),
    trained with teacher forcing:

        source ids (B, S) -> token + learned position embedding, dropout
            -> num_layers encoder blocks (self-attention over source tokens)
        target ids (B, T) -> token + learned position embedding, dropout
            -> num_layers decoder blocks (causal self-attention, then
               cross-attention on the last encoder output)
            -> Dense(target_vocabulary_size) logits (B, T, V), float32

    Id 0 is padding in both inputs: padded source tokens are hidden from
    every attention, so they do not change the logits. With `norm_first=True`
    the blocks are pre-norm and a final LayerNorm closes each stack.

    The options that other Transformers of this shape use (Marian's opus-mt
    models, read by `from_preset`): sinusoidal positions, token embeddings
    scaled by `sqrt(hidden_dim)`, another MLP activation, and one embedding
    table for both languages that is also the output projection
    (`tie_embeddings`, with a bias per token).

    A functional model that decodes itself, as every translator
    (`TextTranslationMixin` says what they share).

    Args:
        source_vocabulary_size: number of source token ids.
        target_vocabulary_size: number of target token ids.
        max_source_length: longest source sequence (rows of its position table).
        max_target_length: longest target sequence, also the longest decoding.
        hidden_dim: width of the embeddings and of every block.
        num_layers: number of encoder blocks and of decoder blocks.
        num_heads: attention heads; must divide `hidden_dim`.
        intermediate_dim: width of the MLP hidden layer in each block.
        dropout: dropout after the embeddings, in the blocks and on attention.
        norm_first: pre-norm blocks (plus final norms) when True, post-norm
            (the paper) when False.
        num_key_value_heads: None for multi-head attention, or the key/value
            heads of grouped-query attention in every block (1: multi-query
            attention); it must divide `num_heads`. The decoding caches then
            hold `num_key_value_heads` heads instead of `num_heads`.
        position_encoding: `"learned"` position tables, `"sinusoidal"`
            (sines and cosines interleaved, the paper's formula) or
            `"sinusoidal_split"` (all sines, then all cosines: Marian).
        scale_embeddings: multiply the token embeddings by `sqrt(hidden_dim)`.
        activation: the activation of the blocks' MLPs (`"relu"`, `"gelu"`,
            `"silu"` / `"swish"`, ...).
        tie_embeddings: one token table for the source, the target and the
            output projection (`logits = y @ table^T + bias`); the two
            vocabularies must then be one (equal sizes), and the source and
            target share their position encoding too.
        **kwargs: `keras.Model` arguments (`name`, `trainable`).

    Call arguments:
        inputs: `{"source": (B, S) int, "target": (B, T) int}`.

    Returns:
        logits `(B, T, target_vocabulary_size)` in float32.

    Example:

    >>> import keras
    >>> import numpy as np
    >>> from keras_attention.models.translation.transformer_translator import TransformerTranslator
    >>> model = TransformerTranslator(
    ...     source_vocabulary_size=20, target_vocabulary_size=30, max_source_length=8,
    ...     max_target_length=6, hidden_dim=16, num_layers=1, num_heads=2,
    ...     intermediate_dim=32)
    >>> logits = model({"source": np.array([[5, 6, 7, 0]]), "target": np.array([[1, 9, 4]])})
    >>> tuple(logits.shape), keras.backend.standardize_dtype(logits.dtype)
    ((1, 3, 30), 'float32')
    """

    def __init__(
        self,
        source_vocabulary_size,
        target_vocabulary_size,
        max_source_length,
        max_target_length,
        hidden_dim=128,
        num_layers=2,
        num_heads=4,
        intermediate_dim=512,
        dropout=0.1,
        norm_first=False,
        num_key_value_heads=None,
        position_encoding="learned",
        scale_embeddings=False,
        activation="relu",
        tie_embeddings=False,
        **kwargs,
    ):
        """Checks the arguments; makes the layers, wiring each as it is made, into the graph.

        Each layer is made just before its first call (source embedding, encoder
        blocks, target embedding, decoder blocks, logits), so that a seeded run
        draws the same initial weights as the layer-by-layer builder did.
        """
        self._check_transformer_arguments(locals())
        kwargs.setdefault("name", "transformer_translator")

        source, target = self._translation_inputs()
        # Explicit boolean masks (True = a real token) rather than Keras masks, so
        # that the logits carry no mask and the loss alone decides what counts.
        source_mask = ops.not_equal(source, PADDING_ID)  # (B, S)
        target_mask = ops.not_equal(target, PADDING_ID)  # (B, T)
        embedding = _embedding_tables(locals())
        # Both stacks: `num_layers` blocks of the same sizes.
        block_arguments = {
            "num_heads": num_heads,
            "intermediate_dim": intermediate_dim,
            "dropout": dropout,
            "norm_first": norm_first,
            "num_key_value_heads": num_key_value_heads,
            "activation": activation,
        }
        stack = functools.partial(_block_stack, num_layers, block_arguments)

        x = self._embed_with_dropout("source", embedding("source"), source, dropout)  # (B, S, D)
        self.encoder_blocks, self.encoder_final_norm, x = stack(
            "encoder", TransformerEncoderBlock, x, padding_mask=source_mask
        )
        y = self._embed_with_dropout("target", embedding("target"), target, dropout)  # (B, T, D)
        self.decoder_blocks, self.decoder_final_norm, y = stack(
            "decoder",
            TransformerDecoderBlock,
            y,
            x,
            padding_mask=target_mask,
            context_padding_mask=source_mask,
        )
        if tie_embeddings:
            self.shared_embedding = embedding("target")  # the table both sides used
            logits = self.shared_embedding(y, reverse=True)  # (B, T, V) float32
        else:
            logits = self._logits(y, target_vocabulary_size)  # (B, T, V)
        super().__init__(inputs={"source": source, "target": target}, outputs=logits, **kwargs)

        self.keep_config(locals())

    def _check_transformer_arguments(self, arguments):
        """Checks the constructor's `arguments` (its `locals()`), naming a wrong one."""
        self._check_translator_arguments(
            arguments,
            ("max_source_length", "max_target_length", "hidden_dim", "num_layers", "num_heads"),
        )
        check_positive_int("intermediate_dim", arguments["intermediate_dim"])
        check_heads_divide_width(arguments["hidden_dim"], arguments["num_heads"])
        for name in ("norm_first", "scale_embeddings", "tie_embeddings"):
            check_bool(name, arguments[name])
        position_encoding = arguments["position_encoding"]
        if position_encoding not in POSITION_MODES:
            raise ValueError(
                f"`position_encoding` must be one of {POSITION_MODES}. "
                f"Received: position_encoding={position_encoding!r}"
            )
        source_size = arguments["source_vocabulary_size"]
        target_size = arguments["target_vocabulary_size"]
        if arguments["tie_embeddings"] and source_size != target_size:
            raise ValueError(
                "`tie_embeddings=True` needs one vocabulary for both languages: "
                "`source_vocabulary_size` must equal `target_vocabulary_size`. Received: "
                f"source_vocabulary_size={source_size}, target_vocabulary_size={target_size}"
            )

    @classmethod
    def from_preset(cls, preset, **kwargs):
        """A translator from a pretrained Marian (opus-mt) checkpoint folder, keras-hub's way.

        `preset` is a Hugging Face `MarianMTModel` folder as `save_pretrained`
        writes it (`config.json`, `model.safetensors` or `pytorch_model.bin`,
        and the tokenizer's `source.spm`, `target.spm`, `vocab.json`): the
        architecture, the weights and, where the folder has them, the
        tokenizers (`checkpoints.marian_checkpoints`), read without
        transformers or torch.

        Args:
            preset: the checkpoint folder.
            **kwargs: more `TransformerTranslator` arguments (`dropout`,
                `max_source_length`, `max_target_length`, `name`), and
                `ignore_unexpected_weights=True` to read a folder holding
                tensors its config does not account for.

        Returns:
            a `TransformerTranslator`; `generate(["..."])` translates.

        Raises:
            ValueError: one line naming the file, for a folder that disagrees
                with itself (`checkpoint_consistency`) or a damaged file.
        """
        return read_checkpoint(preset, cls, **kwargs)

    # === Decoding protocol (keras_attention.generation) ===

    @property
    def max_length(self):
        """The longest decoding: the rows of the target position table."""
        return self.max_target_length

    def encode(self, inputs):
        """Runs the encoder once over source ids `(B, S)`, 0 for padding.

        Returns:
            dict of `"memory"` `(B, S, D)`, `"memory_mask"` bool `(B, S)`
            and, per decoder block, its cross-attention keys and values
            `"cross_attention_cache_<i>"` `(B, 2, S, key_value_heads, key_dim)`,
            projected once instead of at every step.
        """
        source = ops.cast(inputs, "int32")
        source_mask = ops.not_equal(source, PADDING_ID)  # (B, S)
        x, _ = self._run_encoder(source, source_mask, return_attention_scores=False)
        state = {MEMORY: x, MEMORY_MASK: source_mask}
        state.update(transformer_decoding.cross_attention_caches(self.decoder_blocks, x))
        return state

    def _run_encoder(self, source, source_mask, return_attention_scores):
        """The encoder stack at inference: memory `(B, S, D)` and each block's weights."""
        x = self.source_embedding(source)  # (B, S, D)
        scores = []
        for block in self.encoder_blocks:
            if return_attention_scores:
                x, block_scores = block(
                    x, padding_mask=source_mask, return_attention_scores=True, training=False
                )
                scores.append(block_scores)  # (B, heads, S, S)
            else:
                x = block(x, padding_mask=source_mask, training=False)
        if self.encoder_final_norm is not None:
            x = self.encoder_final_norm(x)
        return x, scores

    def attention_maps(self, source_ids, target_ids):
        """Every block's attention weights for source ids and the target ids fed to the decoder.

        Teacher-forced, as in training: give the decoder input (the start
        token, then the translation) to see what each layer and head looked
        at while producing each next token. Runs in inference mode.

        Args:
            source_ids: int `(B, S)`, 0 for padding.
            target_ids: int `(B, T)`, 0 for padding.

        Returns:
            dict of float32 NumPy arrays: `"encoder"` `(B, layers, heads, S, S)`
            self-attention, `"decoder"` `(B, layers, heads, T, T)` causal
            self-attention and `"cross"` `(B, layers, heads, T, S)`.

        Example:

        >>> import numpy as np
        >>> model = TransformerTranslator(12, 10, 6, 5, hidden_dim=8, num_heads=2,
        ...                               intermediate_dim=16)  # 2 layers
        >>> maps = model.attention_maps(np.array([[4, 5, 6, 0]]), np.array([[2, 7, 3]]))
        >>> {name: value.shape for name, value in maps.items()}
        {'encoder': (1, 2, 2, 4, 4), 'decoder': (1, 2, 2, 3, 3), 'cross': (1, 2, 2, 3, 4)}
        """
        source = ops.convert_to_tensor(np.asarray(source_ids), "int32")
        target = ops.convert_to_tensor(np.asarray(target_ids), "int32")
        for name, ids in (("source_ids", source), ("target_ids", target)):
            if len(ids.shape) != 2:
                raise ValueError(
                    f"`{name}` must be (batch, length) token ids. "
                    f"Received: {name}.shape={tuple(ids.shape)}"
                )
        source_mask = ops.not_equal(source, PADDING_ID)  # (B, S)
        target_mask = ops.not_equal(target, PADDING_ID)  # (B, T)
        memory, encoder = self._run_encoder(source, source_mask, return_attention_scores=True)
        y = self.target_embedding(target)  # (B, T, D)
        decoder, cross = [], []
        for block in self.decoder_blocks:
            y, self_scores, cross_scores = block(
                y,
                memory,
                padding_mask=target_mask,
                context_padding_mask=source_mask,
                return_attention_scores=True,
                training=False,
            )
            decoder.append(self_scores)  # (B, heads, T, T)
            cross.append(cross_scores)  # (B, heads, T, S)

        def stacked(maps):  # layers x (B, heads, ...) -> (B, layers, heads, ...)
            return np.stack([ops.convert_to_numpy(ops.cast(m, "float32")) for m in maps], axis=1)

        return {"encoder": stacked(encoder), "decoder": stacked(decoder), "cross": stacked(cross)}

    def initial_cache(self, encoder_state, batch_size, max_length):
        """Empty self-attention key/value caches, one per decoder block.

        Returns:
            dict of `"self_attention_cache_<i>"`
            `(batch_size, 2, max_length, key_value_heads, key_dim)` zeros, where
            `key_value_heads` is `num_key_value_heads` or else `num_heads`.
        """
        return transformer_decoding.empty_self_attention_caches(
            self.decoder_blocks, self.target_embedding.embedding_dim, batch_size, max_length
        )

    def step(self, token_ids, index, cache, encoder_state):
        """Decodes position `index` from the token `(B,)` there.

        Each decoder block writes the token's self-attention keys and values
        into its cache at `index`, so a step costs one position, not the
        whole prefix.

        Returns:
            `(logits (B, V) float32, cache, attention (B, S) float32)`; the
            attention is the last decoder block's cross-attention averaged
            over the heads.
        """
        tokens = ops.cast(token_ids, "int32")[:, None]  # (B, 1)
        y = self.target_embedding(tokens, start_index=index)  # (B, 1, D)
        source_mask = encoder_state[MEMORY_MASK]  # (B, S)
        y, new_cache, attention = transformer_decoding.decode_token(
            self.decoder_blocks, y, index, cache, encoder_state, context_padding_mask=source_mask
        )
        if self.decoder_final_norm is not None:
            y = self.decoder_final_norm(y)
        if self.tie_embeddings:
            logits = self.shared_embedding(y, reverse=True)[:, 0]  # (B, 1, V) -> (B, V)
        else:
            logits = self.logits_layer(y)[:, 0]  # (B, 1, V) -> (B, V)
        return logits, new_cache, attention


def _embedding_tables(arguments):
    """`side -> TokenAndPositionEmbedding` for `"source"` and `"target"`, made when first asked.

    With `tie_embeddings` both sides get one table, `shared_embedding`, as long
    as the longer side and with a bias per token (it is the output projection
    too); otherwise each side gets a `<side>_embedding` of its own. A table is
    made when first asked for, so that layers are made in the order of their calls.

    Args:
        arguments: the `TransformerTranslator` constructor's arguments, by name.
    """
    hidden_dim = arguments["hidden_dim"]
    options = {
        "position": arguments["position_encoding"],
        "scale_embeddings": arguments["scale_embeddings"],
    }
    if arguments["tie_embeddings"]:
        longest = max(arguments["max_source_length"], arguments["max_target_length"])

        @functools.cache
        def shared():
            return TokenAndPositionEmbedding(
                arguments["source_vocabulary_size"],
                longest,
                hidden_dim,
                output_bias=True,
                name="shared_embedding",
                **options,
            )

        return lambda side: shared()

    def own_table(side):
        return TokenAndPositionEmbedding(
            arguments[f"{side}_vocabulary_size"],
            arguments[f"max_{side}_length"],
            hidden_dim,
            name=f"{side}_embedding",
            **options,
        )

    return own_table


def _block_stack(num_layers, block_arguments, kind, block_class, x, *context, **call_arguments):
    """`num_layers` blocks run on `x` as they are made, then a final norm if pre-norm.

    Args:
        num_layers: number of blocks.
        block_arguments: the blocks' constructor arguments but `name`.
        kind: `"encoder"` or `"decoder"`, the start of the layers' names.
        block_class: `TransformerEncoderBlock` or `TransformerDecoderBlock`.
        x: the stack's input.
        *context, **call_arguments: the blocks' other call arguments.

    Returns:
        `(blocks, final_norm or None, output)`.
    """
    blocks = []
    for index in range(num_layers):
        blocks.append(block_class(**block_arguments, name=f"{kind}_block_{index}"))
        x = blocks[-1](x, *context, **call_arguments)
    # Pre-norm stacks end with a LayerNorm; post-norm blocks end normalised.
    final_norm = None
    if block_arguments["norm_first"]:
        final_norm = keras.layers.LayerNormalization(epsilon=1e-5, name=f"{kind}_final_norm")
        x = final_norm(x)
    return blocks, final_norm, x


@model_builder(TransformerTranslator, "transformer_translator")
def transformer_translator():
    """The `TransformerTranslator` of these keyword arguments (the class documents them).

    Example:

    >>> translator = transformer_translator(
    ...     source_vocabulary_size=20, target_vocabulary_size=30, max_source_length=8,
    ...     max_target_length=6, hidden_dim=16, num_layers=1, num_heads=2, intermediate_dim=32)
    >>> translator.name, translator.max_length, translator.vocabulary_size
    ('transformer_translator', 6, 30)
    """

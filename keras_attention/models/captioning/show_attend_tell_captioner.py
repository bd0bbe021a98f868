"""Show, Attend and Tell: an LSTM that attends over a CNN feature grid at every word.

Xu et al., "Show, Attend and Tell: Neural Image Caption Generation with Visual
Attention" (https://arxiv.org/abs/1502.03044), soft ("deterministic")
attention.
"""

import keras
from keras import ops

from keras_attention.layers.attention.additive_attention import AdditiveAttention
from keras_attention.layers.position.position_embedding_2d import PositionEmbedding2D
from keras_attention.layers.recurrent.attention_decoder import AttentionDecoder
from keras_attention.losses.doubly_stochastic import DoublyStochasticAttentionRegularizer
from keras_attention.models import recurrent_decoding
from keras_attention.models.captioning.image_backbones import SMALL_CNN
from keras_attention.models.captioning.image_backbones import image_backbone
from keras_attention.models.captioning.image_captioner import ImageCaptioner
from keras_attention.models.constructor_config import model_builder
from keras_attention.ops.masks import PADDING_ID

# Layer names, kept from the builder so that weights stay where they were.
IMAGE_ENCODER = "image_encoder"
FEATURE_POSITIONS = "feature_positions"
INITIAL_STATE = "initial_state"
WORD_EMBEDDING = "word_embedding"
ATTENTION_DECODER = "attention_decoder"
WORD_OUTPUT = "word_output"
ATTENTION_REGULARIZER = "attention_regularizer"


def _image_encoder(backbone, image_size, backbone_weights, trainable_backbone, feature_dim):
    """Pixels -> annotation vectors `(B, h, w, feature_dim)`.

    The backbone's features get a learned position per grid cell, so that a
    context vector tells where it was read (the captions say "left of" and
    "above"), then a per-cell projection with ReLU mixes position and content.
    """
    images = keras.Input((None, None, 3), dtype="float32", name="image")
    features = image_backbone(backbone, image_size, backbone_weights, trainable_backbone)(images)
    features = PositionEmbedding2D(
        grid_size=(features.shape[1], features.shape[2]),
        merge="add",
        embeddings_initializer=keras.initializers.RandomNormal(stddev=0.02),
        name=FEATURE_POSITIONS,
    )(features)
    features = keras.layers.Dense(feature_dim, activation="relu", name="feature_projection")(
        features
    )
    return keras.Model(images, features, name=IMAGE_ENCODER)


def _initial_state_model(grid_and_features, units):
    """`h_0 = tanh(f_init_h(mean_i z_i))`, `c_0 = tanh(f_init_c(mean_i z_i))` (section 3.1.2)."""
    features = keras.Input(grid_and_features, name="features")
    mean = keras.layers.GlobalAveragePooling2D(name="feature_mean")(features)  # (B, D)
    hidden = keras.layers.Dense(units, activation="tanh", name="initial_hidden")(mean)
    cell = keras.layers.Dense(units, activation="tanh", name="initial_memory_cell")(mean)
    return keras.Model(features, [hidden, cell], name=INITIAL_STATE)


def _word_output_model(decoder_dim, embedding_dim, vocabulary_size, dropout):
    """The deep output layer, eq. 7: `p(y_t) ~ exp(L_o(E y_{t-1} + L_h h_t + L_z z_t))`.

    `decoder_outputs` is `[h_t; z_t]`, so one dense layer is `L_h h_t + L_z z_t`.
    """
    decoder_outputs = keras.Input((None, decoder_dim), name="decoder_outputs")
    embedded = keras.Input((None, embedding_dim), name="embedded_previous_words")
    state_and_context = keras.layers.Dense(embedding_dim, use_bias=False, name="state_and_context")(
        decoder_outputs
    )
    x = keras.layers.Add(name="deep_output")([embedded, state_and_context])
    x = keras.layers.Dropout(dropout, name="deep_output_dropout")(x)
    # float32 logits even under mixed precision: a stable softmax and loss.
    logits = keras.layers.Dense(vocabulary_size, dtype="float32", name="logits")(x)
    return keras.Model([decoder_outputs, embedded], logits, name=WORD_OUTPUT)


@keras.saving.register_keras_serializable(package="keras_attention")
class ShowAttendTellCaptioner(ImageCaptioner):
    """The soft-attention image captioner of Xu et al. 2015.

    A CNN turns the image into a grid of annotation vectors `z_{ij}`; an
    LSTM writes the caption one word at a time and, before each word,
    attends over the grid with its previous hidden state,

        e_{t,ij} = v^T tanh(W_h h_{t-1} + W_z z_{ij}),   a_t = softmax(e_t),
        c_t = beta_t * sum_ij a_{t,ij} z_{ij},  beta_t = sigmoid(f_beta(h_{t-1}))

    (additive attention, Bahdanau style, with the gating scalar `beta` of
    section 4.2.1). The LSTM reads `[E y_{t-1}; c_t]`; its initial state
    comes from the mean annotation vector; the word comes from the deep
    output layer `L_o(E y_{t-1} + L_h h_t + L_z c_t)` (eq. 7). Training adds
    the doubly stochastic penalty `lambda * sum_ij (1 - sum_t a_{t,ij})^2`
    over the real caption steps (eq. 14; see
    `DoublyStochasticAttentionRegularizer` for its scale).

    Layout (the parts are kept as attributes):

        image (B, H, W, 3) -> `image_encoder`: backbone (resize, preprocess,
            CNN) -> + learned 2D positions -> Dense(units, relu) = z (B, h, w, units)
        z -> `initial_state` -> [h_0, c_0]
        caption (B, T) -> `word_embedding` (B, T, embedding_dim)
        -> `attention_decoder` (LSTM + additive attention over z)
            -> outputs [h_t; c_t] (B, T, 2 units), alignments (B, T, h, w)
        -> `word_output` (deep output) -> logits (B, T, V), float32
        -> `attention_regularizer` (adds the penalty, passes the logits on)

    The image positions carry a learned embedding (an addition to the paper)
    because the built-in captions name spatial relations, which a context
    vector could not tell apart otherwise.

    The model decodes itself (see `ImageCaptioner`): `encode` runs the image
    encoder once and keeps the annotation vectors, the attention's key
    projection of them and the LSTM's initial state; the cache is the LSTM
    state `[h, c]`; `step` embeds the previous word, advances the state with
    `AttentionDecoder.step` and applies the deep output layer. `caption`
    captions raw images; `caption_attention` gives the teacher-forced
    alignments.

    Args:
        vocabulary_size: number of token ids; 0 is padding.
        max_caption_length: the longest caption in tokens, start token
            included: the default decoding length of `caption` (the LSTM
            itself has no length limit, so `max_length` is None).
        image_size: side of the square image the CNN sees, or its
            `(height, width)`: give wide or tall images their own aspect
            ratio, so that the feature grid (and the attention maps) is
            `(height / 4, width / 4)` with the small CNN rather than a
            squashed square; images of any size are resized to it inside
            the model.
        backbone: `"small_cnn"` (trained from scratch) or a
            `keras.applications` model name, see `image_backbone`.
        backbone_weights: `None` or `"imagenet"` (a download) for a
            `keras.applications` backbone.
        trainable_backbone: fine-tune the backbone (True) or freeze it.
        embedding_dim: width of the word embeddings and of the deep output.
        units: LSTM units, also the width of the annotation vectors.
        attention_units: hidden size of the additive attention's MLP.
        dropout: dropout on the deep output, before the logits.
        doubly_stochastic_lambda: strength of the attention penalty, >= 0
            (1 in the paper). It asks every grid cell to be looked at about
            once over a caption: with many more cells than words it spreads
            the attention, and it sends a second look at an object (the noun
            after its adjective) elsewhere; 0 turns it off.
        name: name of the model.

    Call arguments:
        inputs: `{"image": (B, H, W, 3) float32 in 0..255, "caption": (B, T)
            int}`, the caption fed so far, starting with the start token, 0
            as padding.

    Returns the next-word logits `(B, T, vocabulary_size)` in float32.

    Example:

    >>> import numpy as np
    >>> from keras_attention.models.captioning.show_attend_tell_captioner import (
    ...     ShowAttendTellCaptioner)
    >>> model = ShowAttendTellCaptioner(
    ...     vocabulary_size=20, max_caption_length=8, image_size=16, embedding_dim=8,
    ...     units=16, attention_units=8)
    >>> logits = model({"image": np.zeros((2, 16, 16, 3), "float32"),
    ...                 "caption": np.array([[2, 5, 6, 0], [2, 7, 0, 0]])})
    >>> tuple(logits.shape), len(model.losses)  # the attention penalty
    ((2, 4, 20), 1)
    >>> cache = model.initial_cache(model.encode(np.zeros((2, 16, 16, 3))), 2, 6)
    >>> sorted(cache)  # the LSTM state [h, c]
    ['state_0', 'state_1']
    """

    def __init__(
        self,
        *,
        vocabulary_size,
        max_caption_length,
        image_size,
        backbone=SMALL_CNN,
        backbone_weights=None,
        trainable_backbone=True,
        embedding_dim=64,
        units=256,
        attention_units=128,
        dropout=0.1,
        doubly_stochastic_lambda=1.0,
        name="show_attend_tell_captioner",
        **kwargs,
    ):
        """Checks the arguments, makes the parts in the order of the layout, builds the graph."""
        self._check_caption_arguments(locals(), ("embedding_dim", "units", "attention_units"))
        lam = doubly_stochastic_lambda
        if isinstance(lam, bool) or not isinstance(lam, (int, float)) or lam < 0:
            raise ValueError(
                "`doubly_stochastic_lambda` must be a number >= 0. "
                f"Received: doubly_stochastic_lambda={lam!r}"
            )

        # === Layers ===
        self.image_encoder = _image_encoder(
            backbone, image_size, backbone_weights, trainable_backbone, units
        )
        grid_size = tuple(int(size) for size in self.image_encoder.output.shape[1:3])
        self.initial_state = _initial_state_model(grid_size + (units,), units)
        self.word_embedding = keras.layers.Embedding(
            vocabulary_size, embedding_dim, name=WORD_EMBEDDING
        )
        self.attention_decoder = AttentionDecoder(
            keras.layers.LSTMCell(units),
            AdditiveAttention(units=attention_units),
            attention_style="bahdanau",
            context_gate=True,
            name=ATTENTION_DECODER,
        )
        self.word_output = _word_output_model(2 * units, embedding_dim, vocabulary_size, dropout)
        self.attention_regularizer = DoublyStochasticAttentionRegularizer(
            float(lam), dtype="float32", name=ATTENTION_REGULARIZER
        )

        def forward(image, caption):
            logits, alignments = self._teacher_forced(image, caption)
            # Explicit boolean masks rather than Keras masks, so that the logits
            # carry no mask and the loss alone decides what counts.
            step_mask = ops.not_equal(caption, PADDING_ID)  # (B, T)
            return self.attention_regularizer(logits, alignments, step_mask)

        self._build_functional(forward, name, **kwargs)
        # An LSTM has no length limit; the searches' `max_length` bounds decoding.
        self._keep_captioner_config(locals(), grid_size, max_length=None)

    def _teacher_forced(self, image, caption, training=None):
        """The forward pass on a whole caption: logits (B, T, V), alignments (B, T, h, w)."""
        features = self.image_encoder(image, training=training)  # (B, h, w, units)
        initial_state = self.initial_state(features, training=training)
        embedded = self.word_embedding(caption)  # (B, T, E)
        outputs, alignments = self.attention_decoder(
            embedded, features, initial_state=initial_state, training=training
        )
        logits = self.word_output([outputs, embedded], training=training)
        return logits, alignments

    def caption_attention(self, inputs):
        """The logits and the attention maps of captions fed whole (teacher forcing).

        Args:
            inputs: `{"image": (B, H, W, 3), "caption": (B, T)}` as for a call.

        Returns:
            `(logits (B, T, V) float32, alignments (B, T, h, w))`, with
            dropout off and no penalty added.

        Example:

        >>> import numpy as np
        >>> model = ShowAttendTellCaptioner(
        ...     vocabulary_size=20, max_caption_length=8, image_size=(16, 32), embedding_dim=8,
        ...     units=16, attention_units=8)
        >>> logits, alignments = model.caption_attention(
        ...     {"image": np.zeros((1, 16, 32, 3), "float32"), "caption": np.array([[2, 5, 6]])})
        >>> tuple(alignments.shape)  # one 4x8 map per word: the image's aspect ratio
        (1, 3, 4, 8)
        """
        image, caption = self._cast_inputs(inputs)
        return self._teacher_forced(image, caption, training=False)

    def encode(self, inputs):
        """Runs the image encoder once; see `ImageCaptioner` for the protocol."""
        features = self.image_encoder(ops.cast(inputs, "float32"), training=False)  # (B, h, w, D)
        grid_mask = ops.ones(ops.shape(features)[:3], dtype="bool")  # (B, h, w)
        initial_state = self.initial_state(features, training=False)  # [h_0, c_0]
        return recurrent_decoding.encoder_state(
            self.attention_decoder, features, grid_mask, initial_state
        )

    def initial_cache(self, encoder_state, batch_size, max_length):
        """The LSTM state from the mean annotation vector, which `encode`
        computed (and beam search repeated for every beam)."""
        return recurrent_decoding.initial_cache(encoder_state)

    def step(self, token_ids, index, cache, encoder_state):
        """Decodes one word: `(logits (B, V), cache, attention (B, h, w))`."""
        embedded = self.word_embedding(ops.cast(token_ids, "int32"))  # (B, E)
        output, new_cache, alignment = recurrent_decoding.decoder_step(
            self.attention_decoder, embedded, cache, encoder_state
        )
        # The deep output layer reads sequences: a sequence of one step.
        logits = self.word_output([output[:, None], embedded[:, None]], training=False)[:, 0]
        return logits, new_cache, alignment


@model_builder(ShowAttendTellCaptioner, "show_attend_tell_captioner")
def show_attend_tell_captioner():
    """Builds a `ShowAttendTellCaptioner` (same arguments).

    Example:

    >>> show_attend_tell_captioner(vocabulary_size=20, max_caption_length=8, image_size=16).units
    256
    """


def caption_attention_model(model):
    """The teacher-forced logits and attention maps of a captioner, as a function.

    Args:
        model: a captioner with a `caption_attention` method, such as a
            `ShowAttendTellCaptioner`.

    Returns:
        `model.caption_attention`: `inputs -> (logits (B, T, V), alignments (B, T, h, w))`.

    Example:

    >>> import numpy as np
    >>> model = show_attend_tell_captioner(
    ...     vocabulary_size=20, max_caption_length=8, image_size=16, embedding_dim=8,
    ...     units=16, attention_units=8)
    >>> logits, alignments = caption_attention_model(model)(
    ...     {"image": np.zeros((1, 16, 16, 3), "float32"), "caption": np.array([[2, 5, 6]])})
    >>> tuple(alignments.shape)
    (1, 3, 4, 4)
    """
    method = getattr(model, "caption_attention", None)
    if not callable(method):
        raise ValueError(
            "`model` must be a captioner with a `caption_attention` method, such as a "
            f"ShowAttendTellCaptioner. Received: model={getattr(model, 'name', model)!r}"
        )
    return method

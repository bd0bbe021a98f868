"""`compile()` with no arguments: the loss, metrics and optimizer each model learns with.

keras-hub's tasks compile themselves with sensible defaults; the library's
models do the same. Every argument passed explicitly still wins, so
`model.compile(optimizer="sgd", loss=my_loss)` behaves as on any
`keras.Model`.
"""

import keras

from keras_attention.losses.masked_cross_entropy import masked_sparse_categorical_crossentropy
from keras_attention.metrics.masked_accuracy import MaskedSparseCategoricalAccuracy
from keras_attention.validation import check_positive_int

AUTO = "auto"
# Steps of linear warm-up from 0 when `compile` does not know the training length.
DEFAULT_WARMUP_STEPS = 100


def default_learning_rate_schedule(learning_rate, total_steps=None, warmup_steps=None):
    """Linear warm-up to `learning_rate`, then cosine decay to 0 at `total_steps`.

    The training recipes' schedule (warm-up over the first tenth). Without
    `total_steps`, the rate stays at `learning_rate` after a warm-up of
    `DEFAULT_WARMUP_STEPS` (or `warmup_steps`). A keras `CosineDecay`, so it
    saves with the model.

    Example:

    >>> schedule = default_learning_rate_schedule(1e-3, total_steps=100)
    >>> [round(float(schedule(step)), 5) for step in (0, 5, 10, 55, 100)]
    [0.0, 0.0005, 0.001, 0.0005, 0.0]
    >>> schedule = default_learning_rate_schedule(1e-3)
    >>> [round(float(schedule(step)), 5) for step in (0, 50, 100, 10000)]
    [0.0, 0.0005, 0.001, 0.001]
    """
    if not isinstance(learning_rate, (int, float)) or not learning_rate > 0:
        raise ValueError(
            f"`learning_rate` must be a positive number. Received: learning_rate={learning_rate!r}"
        )
    if total_steps is not None:
        check_positive_int("total_steps", total_steps)
    if warmup_steps is None:
        warmup_steps = DEFAULT_WARMUP_STEPS if total_steps is None else max(1, total_steps // 10)
    check_positive_int("warmup_steps", warmup_steps)
    if total_steps is None:
        # alpha=1: the "decay" ends where it starts, a constant rate after warm-up.
        decay_steps, alpha = 1, 1.0
    else:
        decay_steps, alpha = max(1, total_steps - warmup_steps), 0.0
    return keras.optimizers.schedules.CosineDecay(
        initial_learning_rate=0.0,
        decay_steps=decay_steps,
        warmup_target=float(learning_rate),
        warmup_steps=warmup_steps,
        alpha=alpha,
    )


class DefaultCompile:
    """Mixin for the library's `keras.Model`s: `compile()` alone makes them learn.

    `optimizer`, `loss` and `metrics` left at "auto" become the model's own:
    an AdamW on `default_learning_rate_schedule` (weight decay kept off the
    variables `no_decay_variables()` names, where the model has it), and the
    loss and metrics of `default_loss()` / `default_metrics()`. A subclass
    sets `DEFAULT_LEARNING_RATE` and `DEFAULT_WEIGHT_DECAY` (the example
    scripts' values) and may override the two methods.

    Example:

    >>> from keras_attention.models import vision_transformer
    >>> model = vision_transformer(image_size=8, patch_size=4, num_classes=2, hidden_dim=8,
    ...                            num_layers=1, num_heads=2, mlp_dim=8)
    >>> model.compile()
    >>> type(model.optimizer).__name__, round(model.optimizer.weight_decay, 3)
    ('AdamW', 0.05)
    >>> model.compile(optimizer="sgd")  # what you pass wins; the loss stays the model's
    >>> type(model.optimizer).__name__, type(model.loss).__name__
    ('SGD', 'SparseCategoricalCrossentropy')
    """

    DEFAULT_LEARNING_RATE = 2e-3
    DEFAULT_WEIGHT_DECAY = 0.0

    def compile(
        self,
        optimizer=AUTO,
        loss=AUTO,
        loss_weights=None,
        metrics=AUTO,
        *,
        learning_rate=None,
        total_steps=None,
        **kwargs,
    ):
        """Configures the model for training; "auto" arguments get the model's defaults.

        Args:
            optimizer: "auto" (AdamW on the default schedule) or anything
                `keras.Model.compile` takes.
            loss: "auto" (`default_loss()`) or anything `keras.Model.compile` takes.
            loss_weights: as `keras.Model.compile` takes it (in its place among
                the arguments, so positional calls mean what they mean in keras).
            metrics: "auto" (`default_metrics()`) or a list, or None.
            learning_rate: the peak rate of the "auto" optimizer (default
                `DEFAULT_LEARNING_RATE`).
            total_steps: optimizer steps the training will take: the "auto"
                rate then decays to 0 at the last one, as in the example
                scripts; without it the rate stays at its peak after warm-up.
            **kwargs: passed to `keras.Model.compile` (`jit_compile`,
                `steps_per_execution`, ...).
        """
        if (learning_rate is not None or total_steps is not None) and not _is_auto(optimizer):
            raise ValueError(
                "`learning_rate` and `total_steps` shape the 'auto' optimizer; pass them "
                f"without an optimizer of your own. Received: optimizer={optimizer!r}"
            )
        if _is_auto(optimizer):
            optimizer = self.default_optimizer(learning_rate, total_steps)
        if _is_auto(loss):
            loss = self.default_loss()
        if _is_auto(metrics):
            metrics = self.default_metrics()
        super().compile(
            optimizer=optimizer, loss=loss, loss_weights=loss_weights, metrics=metrics, **kwargs
        )

    def compile_from_config(self, config):
        """Compiles as the saved model was (keras skips a custom `compile` without this)."""
        config = keras.saving.deserialize_keras_object(config)
        self.compile(**config)
        if self.built:
            self.optimizer.build(self.trainable_variables)  # so saved optimizer state loads

    def default_optimizer(self, learning_rate=None, total_steps=None):
        """AdamW on `default_learning_rate_schedule`, with the model's weight decay."""
        schedule = default_learning_rate_schedule(
            self.DEFAULT_LEARNING_RATE if learning_rate is None else learning_rate, total_steps
        )
        optimizer = keras.optimizers.AdamW(schedule, weight_decay=self.DEFAULT_WEIGHT_DECAY)
        no_decay = getattr(self, "no_decay_variables", None)
        if no_decay is not None and self.DEFAULT_WEIGHT_DECAY:
            optimizer.exclude_from_weight_decay(var_list=no_decay())
        return optimizer

    def default_loss(self):
        """Cross-entropy of the logits, padding (id 0) left out: sequence models."""
        return masked_sparse_categorical_crossentropy

    def default_metrics(self):
        """Token accuracy, padding left out: sequence models."""
        return [MaskedSparseCategoricalAccuracy()]


def _is_auto(value):
    return isinstance(value, str) and value == AUTO

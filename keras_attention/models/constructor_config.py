"""Models whose saved config is the arguments of their constructor, and builders that take them.

A functional model that builds its own graph in `__init__` is saved as the
arguments it was made with (not as the graph): loading calls the
constructor again with them.
"""

import functools
import inspect

from keras_attention.validation import check_positive_int
from keras_attention.validation import check_rate


class ConstructorConfig:
    """Mixin for a `keras.Model` rebuilt from its constructor's arguments.

    The config arguments are the constructor's named parameters but `name`
    (`config_arguments()`); the constructor, once `keras.Model.__init__` has
    run, keeps their values as attributes with `self.keep_config(locals())`.
    `get_config` then gives `name`, `trainable` and those attributes, and
    `from_config` calls the constructor with them.

    Example:

    >>> from keras_attention.models.captioning.transformer_captioner import TransformerCaptioner
    >>> model = TransformerCaptioner(
    ...     vocabulary_size=9, max_caption_length=4, image_size=8, hidden_dim=8,
    ...     num_layers=1, num_heads=2, intermediate_dim=8)
    >>> config = model.get_config()
    >>> list(config)[:4], config["hidden_dim"]
    (['name', 'trainable', 'vocabulary_size', 'max_caption_length'], 8)
    >>> TransformerCaptioner.from_config(config).count_params() == model.count_params()
    True
    """

    @classmethod
    def config_arguments(cls):
        """The names of the constructor's arguments that the config holds, in order."""
        return [
            parameter.name
            for parameter in inspect.signature(cls.__init__).parameters.values()
            if parameter.name not in ("self", "name")
            and parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)
        ]

    def keep_config(self, arguments):
        """Keeps `arguments[name]` as `self.name` for every config argument."""
        for name in self.config_arguments():
            setattr(self, name, arguments[name])

    def get_config(self):
        # Not the functional graph: the constructor rebuilds it from these.
        config = {"name": self.name, "trainable": self.trainable}
        config.update((name, getattr(self, name)) for name in self.config_arguments())
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def check_sizes_and_dropout(arguments, sizes):
    """Checks that each of `sizes` names a positive int in `arguments`, and `"dropout"` a rate.

    Example:

    >>> check_sizes_and_dropout({"units": 0, "dropout": 0.1}, ("units",))
    Traceback (most recent call last):
    ...
    ValueError: `units` must be a positive integer. Received: units=0
    """
    for name in sizes:
        check_positive_int(name, arguments[name])
    check_rate("dropout", arguments["dropout"])


def check_heads_divide_width(hidden_dim, num_heads):
    """Raises a ValueError unless `num_heads` divides `hidden_dim` (each head gets a slice).

    Example:

    >>> check_heads_divide_width(10, 4)
    Traceback (most recent call last):
    ...
    ValueError: `hidden_dim` must be a multiple of `num_heads`. Received: hidden_dim=10, num_heads=4
    """
    if hidden_dim % num_heads:
        raise ValueError(
            "`hidden_dim` must be a multiple of `num_heads`. "
            f"Received: hidden_dim={hidden_dim}, num_heads={num_heads}"
        )


def model_builder(model_class, default_name):
    """Turns a documented stub into the builder of `model_class`, a `ConstructorConfig` model.

    The builder takes the constructor's arguments as keyword arguments only,
    plus `name` (default `default_name`), checks them as a call would, and
    returns `model_class(**arguments)`. The stub gives its name, module and
    docstring (with its examples); its body is never run.

    Example:

    >>> from keras_attention.models.translation.transformer_translator import transformer_translator
    >>> import inspect
    >>> list(inspect.signature(transformer_translator).parameters)[-2:]
    ['tie_embeddings', 'name']
    >>> transformer_translator(source_vocabulary_size=5)
    Traceback (most recent call last):
    ...
    TypeError: missing a required argument: 'target_vocabulary_size'
    """
    constructor = inspect.signature(model_class.__init__).parameters
    parameters = [
        constructor[name].replace(kind=inspect.Parameter.KEYWORD_ONLY)
        for name in model_class.config_arguments()
    ]
    parameters.append(
        inspect.Parameter("name", inspect.Parameter.KEYWORD_ONLY, default=default_name)
    )
    signature = inspect.Signature(parameters)

    def decorate(stub):
        @functools.wraps(stub)
        def build(**arguments):
            bound = signature.bind(**arguments)
            bound.apply_defaults()
            return model_class(**bound.arguments)

        build.__signature__ = signature
        return build

    return decorate

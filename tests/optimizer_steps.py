"""Reading a compiled model's learning rate at chosen optimizer steps."""


def learning_rates_at(model, steps):
    """The learning rate `model.optimizer` would use at each of `steps`, as floats."""
    rates = []
    for step in steps:
        model.optimizer.iterations.assign(step)
        rates.append(float(model.optimizer.learning_rate))
    return rates

"""`strategy.reduce` as Keras' `fit` calls it under `MultiWorkerMirroredStrategy`.

Keras 3 (seen with 3.15.x) calls `reduce` in two ways that
`tf.distribute.MultiWorkerMirroredStrategy` (TensorFlow 2.21) refuses once
several workers train together:

- `fit` and `evaluate` first build the model from one distributed batch,
  "reduced" with `strategy.reduce("MEAN", batch, axis=None)` only for its
  shapes: when the batch is a dict or tuple of tensors (every translator's
  and captioner's batch), the strategy tries to turn the whole structure
  into one tensor and fails with "Attempt to convert a value ({...}) with
  an unsupported type (<class 'dict'>) to a Tensor" (and reducing it leaf
  by leaf fails on a last batch that the workers hold in different sizes:
  "Shape mismatch in the collective instance");
- the step's logs (loss and metric values, scalars) are reduced with
  `strategy.reduce("MEAN", value, axis=0)`, and a scalar has no axis 0:
  "Invalid reduction dimension 0 for input with 0 dimensions".

`ReduceEachValue.reduce` answers a structure with this worker's own first
replica's values (no communication: the batch is wanted for its shapes)
and reduces a scalar over the replicas only (`axis=None`). A single
tensor with a real axis is reduced as before. When a Keras release stops
making these calls, the mixin can go; tests/training/test_multiworker.py
trains two workers through `fit`, which fails without it.

Example (a stand-in strategy that shows the calls made):

>>> class Recorder:
...     def experimental_local_results(self, value):
...         return (value,)
...     def reduce(self, reduce_op, value, axis):
...         return (reduce_op, value, axis)
>>> class Strategy(ReduceEachValue, Recorder):
...     pass
>>> import numpy as np
>>> Strategy().reduce("MEAN", np.float32(1), axis=0)
('MEAN', np.float32(1.0), None)
>>> Strategy().reduce("MEAN", {"tokens": np.arange(3)}, axis=None)
{'tokens': array([0, 1, 2])}
"""

from keras import tree


class ReduceEachValue:
    """Mixin for a `tf.distribute.Strategy`: `reduce` as Keras 3's `fit` calls it."""

    def reduce(self, reduce_op, value, axis):
        if tree.is_nested(value):
            return tree.map_structure(lambda item: self.experimental_local_results(item)[0], value)
        if axis is not None and _rank(self.experimental_local_results(value)[0]) == 0:
            axis = None  # a scalar: its mean over the replicas
        return super().reduce(reduce_op, value, axis)


def _rank(value):
    shape = getattr(value, "shape", ())
    return len(shape) if shape is not None else None

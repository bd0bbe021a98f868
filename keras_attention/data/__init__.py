"""tf.data pipelines: tfds loaders, user files and built-in offline datasets."""

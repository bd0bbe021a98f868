"""What every data source shares: tf.data helpers, files as users download them, tfds, `hf:`.

Reading text and JSON files with their bad lines named (`text_lines`,
`json_files`), paths kept inside a data set's folder (`dataset_paths`),
held-out splits for sources without their own (`held_out_splits`,
`classification_splits`), the splits a source gives with their sizes
(`DatasetSplits`), tfds sets that fail with one clear line offline
(`tfds_download`), `datasets` folders (`hf_datasets`), and what data sets of
millions of items need: line files counted and sampled (`line_files`),
images decoded where the pipeline meets them (`image_decoding`), what the
pipelines skip counted and named (`skipped_items`), lengths from a sample
(`length_limits`), each worker's share of the files (`worker_shards`);
training-batch augmentation and dataset lengths. Each family's own sources
and built-in data sets live in `keras_attention.tasks.<family>`.
"""

from keras_attention.data.dataset_length import with_known_length
from keras_attention.data.dataset_splits import DatasetSplits
from keras_attention.data.image_augmentation import augment_batches
from keras_attention.data.tfds_download import DatasetDownloadError

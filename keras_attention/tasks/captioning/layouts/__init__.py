"""Caption data sets as they are downloaded: one module per layout, and the detection.

`find_caption_layout(path)` recognises which layout a `folder:` path holds
and reads it into a `CaptionListing` (images and captions, by split):

- `captions_tsv`: `captions.tsv` of `file<TAB>caption` lines;
- `coco_annotations`: COCO's `annotations/captions_{train,val}YEAR.json`;
- `karpathy_splits`: Karpathy's `dataset_coco.json`, `dataset_flickr8k.json`, ...;
- `flickr8k_text`: Flickr8k as shipped, `Flickr8k_text/Flickr8k.token.txt`;
- `caption_csv`: a CSV of image and caption columns (Kaggle's Flickr8k
  `captions.txt`, or `csv:FILE`).
"""

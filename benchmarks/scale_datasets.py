"""Data sets at the scale users bring, written in the layouts they download.

`ensure_dataset(layout, size)` writes one data set under
`/work/scale_data/<layout>_<size>` (or `root`), or reuses it when its
manifest (`.scale_manifest.json`, written last) says it was made by the same
recipe; otherwise the folder is rebuilt. Layouts:

- "imagenet": class folders as ImageNet ships them, `train/<wnid>/<wnid>_<n>.JPEG`
  and `val/<wnid>/ILSVRC2012_val_<n>.JPEG`, 5% of each class in `val/`;
  100 classes (1000 from 100,000 images on, fewer below 2,000); 320x240 JPEGs of about 37 KB
  (smooth colour fields, textured, with filled shapes);
- "coco": COCO 2014 captions, `annotations/captions_{train,val}2014.json`
  (`images` with `id`, `file_name`, `height`, `width`; `annotations` with
  `id`, `image_id`, `caption`), 5 captions of 8-15 words per image, images in
  `train2014/` and `val2014/` at COCO's sizes (640 x 480, 640 x 427, ...,
  about 160 KB as COCO's average); `size` images in all, split as COCO 2014
  (82,783 train : 40,504 val);
- "parallel": `train.en`, `train.de` (`size` pairs), `valid.*` and `test.*`;
- "tsv": `pairs.tsv` of `size` `english<TAB>german` lines.

Sentences have 5-25 words drawn from a 30,000-word Zipfian vocabulary per
language (a few real function words first, then made-up words; the German
side has its own words, capitalised nouns and umlauts), with numbers, commas
and end punctuation. As crawled corpora have them, the training text holds a
1,000-token line and a few blank lines (both sides blank, and one pair with
only its German side blank).

Writing 10^5 JPEGs takes long on two cores, so only a pool of distinct images
is encoded (`pool`, 10,000 for "imagenet" and 5,000 for "coco" by default);
the other items are hard links to them (not symlinks: the data stays inside
its folder). Everything streams: one image or one chunk of sentences at a
time; progress goes to stderr.

    python -m benchmarks.scale_datasets imagenet 20000      # writes or reuses it
"""

import argparse
import functools
import hashlib
import io
import json
import os
import shutil
import sys
import time

import numpy as np

DEFAULT_ROOT = "/work/scale_data"
MANIFEST = ".scale_manifest.json"
# Bump when the output of a generator changes: existing folders are then rebuilt.
GENERATOR_VERSION = 1
LAYOUTS = ("imagenet", "coco", "parallel", "tsv")
DEFAULT_POOL = {"imagenet": 10_000, "coco": 5_000}

IMAGENET_SIZE = (320, 240)  # width, height
IMAGENET_QUALITY = 88
IMAGENET_DETAIL = 16.0  # amplitude of the fine texture: sets the JPEG size (~37 KB)
IMAGENET_VAL_EVERY = 20  # one image in 20 of each class goes to val/
COCO_SIZES = ((640, 480), (640, 427), (480, 640), (640, 426), (500, 375), (427, 640), (640, 360))
COCO_QUALITY = 92
COCO_DETAIL = 24.0  # ~160 KB a JPEG over these sizes
COCO_TRAIN, COCO_VAL = 82_783, 40_504
CAPTIONS_PER_IMAGE = 5
VOCABULARY_SIZE = 30_000
SENTENCE_WORDS = (5, 25)
CAPTION_WORDS = (8, 15)
LONG_LINE_TOKENS = 1000
HELD_OUT_PAIRS = 3000  # WMT's newstest sets hold about 3,000 sentences
CHUNK = 50_000  # sentences generated at once

_ENGLISH_HEAD = (
    "the of and to a in is that for it was on with as he be at by this had not are but from "
    "or have an they which one you were her all she there would their we him been has when "
    "who will more no if out so said what up its about into than them can only other new"
).split()
_GERMAN_HEAD = (
    "der die und in den von zu das mit sich des auf für ist im dem nicht ein eine als auch "
    "es an werden aus er hat dass sie nach wird bei einer um am sind noch wie einem über "
    "einen so zum war haben nur oder aber vor zur bis mehr durch man"
).split()
_SYLLABLES = {
    "en": (
        "ba be bi bo ca ce co da de di do fa fe fi ga ge go ha he hi ho la le li lo ma me mi mo "
        "na ne ni no pa pe pi po ra re ri ro sa se si so ta te ti to va ve vi wa we wi ar er "
        "in on an en ing ed ly st th ch sh tr pr"
    ).split(),
    "de": (
        "ba be bi bo da de di do fa fe fi ga ge gi ha he hi ka ke ki ko la le li lo ma me mi "
        "na ne ni no ra re ri ro sa se si ta te ti wa we wi zu ei au sch ch ung bä kö mü lä rö "
        "fü straß heiß en er ern st tz pf"
    ).split(),
}


def log(message):
    """A progress line on stderr."""
    print(message, file=sys.stderr, flush=True)


def dataset_folder(layout, size, root=DEFAULT_ROOT):
    """Where `ensure_dataset` puts a data set: `root/<layout>_<size>`.

    >>> dataset_folder("coco", 1000, "/data")
    '/data/coco_1000'
    """
    _check_layout(layout)
    return os.path.join(root, f"{layout}_{int(size)}")


def dataset_argument(layout, folder):
    """The example script's `--dataset` value that reads `folder`.

    >>> dataset_argument("imagenet", "/d/imagenet_2000")
    'folder:/d/imagenet_2000'
    >>> dataset_argument("tsv", "/d/tsv_100")
    'tsv:/d/tsv_100/pairs.tsv'
    """
    _check_layout(layout)
    if layout == "tsv":
        return f"tsv:{os.path.join(folder, 'pairs.tsv')}"
    return f"{'parallel' if layout == 'parallel' else 'folder'}:{folder}"


def _check_layout(layout):
    if layout not in LAYOUTS:
        raise ValueError(f"`layout` must be one of {LAYOUTS}. Received: layout={layout!r}")


def recipe(layout, size, pool=None, seed=0):
    """What a data set is made from; a folder whose manifest differs is rebuilt.

    >>> recipe("imagenet", 100_000)["classes"], recipe("imagenet", 2000)["distinct_images"]
    (1000, 2000)
    """
    _check_layout(layout)
    size = int(size)
    if size < 1:
        raise ValueError(f"`size` must be a positive integer. Received: size={size}")
    made = {"layout": layout, "size": size, "seed": int(seed), "version": GENERATOR_VERSION}
    if layout == "imagenet":
        pool = DEFAULT_POOL[layout] if pool is None else int(pool)
        made.update(
            classes=_classes(size),
            image_size=list(IMAGENET_SIZE),
            quality=IMAGENET_QUALITY,
            detail=IMAGENET_DETAIL,
            val_every=IMAGENET_VAL_EVERY,
            distinct_images=min(size, pool),
        )
    elif layout == "coco":
        pool = DEFAULT_POOL[layout] if pool is None else int(pool)
        train = max(1, round(size * COCO_TRAIN / (COCO_TRAIN + COCO_VAL)))
        made.update(
            train_images=min(train, size - 1) if size > 1 else 1,
            quality=COCO_QUALITY,
            detail=COCO_DETAIL,
            captions_per_image=CAPTIONS_PER_IMAGE,
            caption_words=list(CAPTION_WORDS),
            distinct_images=min(size, pool),
        )
        made["val_images"] = size - made["train_images"]
    else:
        made.update(
            vocabulary=VOCABULARY_SIZE,
            sentence_words=list(SENTENCE_WORDS),
            long_line_tokens=LONG_LINE_TOKENS,
        )
        if layout == "parallel":
            made["held_out_pairs"] = min(HELD_OUT_PAIRS, max(10, size // 20))
    return made


def _classes(size):
    """ImageNet's 1000 classes at 100,000 images, 100 below, fewer for tiny sets (20 a class).

    >>> _classes(100_000), _classes(20_000), _classes(60)
    (1000, 100, 3)
    """
    if size >= 100_000:
        return 1000
    return max(2, min(100, size // IMAGENET_VAL_EVERY))


def read_manifest(folder):
    """The manifest of `folder`, or None when there is none (or it is unreadable)."""
    try:
        with open(os.path.join(folder, MANIFEST)) as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def ensure_dataset(layout, size, root=DEFAULT_ROOT, pool=None, seed=0):
    """Writes the data set, or reuses the folder its manifest says is the same.

    It is written into `<folder>.incomplete` and renamed when done, so an
    interrupted run leaves no folder that looks finished.

    Args:
        layout: one of `LAYOUTS`.
        size: images ("imagenet", "coco") or sentence pairs ("parallel" train
            pairs, "tsv" lines).
        root: the folder that holds the data sets.
        pool: distinct images to encode (the rest are hard links to them).
        seed: the generators' seed.

    Returns:
        the manifest: the recipe, plus `path`, `files`, `bytes` (distinct
        data on disk), `mean_image_bytes` and `seconds` of the writing.

    Example:

    >>> import tempfile
    >>> from benchmarks.scale_datasets import ensure_dataset
    >>> root = tempfile.mkdtemp()
    >>> made = ensure_dataset("tsv", 50, root=root)
    >>> made["recipe"]["size"], made["files"], ensure_dataset("tsv", 50, root=root)["reused"]
    (50, 1, True)
    """
    wanted = recipe(layout, size, pool, seed)
    folder = dataset_folder(layout, size, root)
    existing = read_manifest(folder)
    if existing is not None and existing.get("recipe") == wanted:
        return dict(existing, reused=True)
    log(f"writing {os.path.basename(folder)} into {root}")
    partial = folder + ".incomplete"
    for stale in (partial, folder):
        if os.path.lexists(stale):
            shutil.rmtree(stale)
    os.makedirs(partial)
    start = time.time()
    writer = {
        "imagenet": _write_class_folders,
        "coco": _write_coco,
        "parallel": _write_parallel,
        "tsv": _write_tsv,
    }[layout]
    stats = writer(partial, wanted)
    manifest = {
        "recipe": wanted,
        "path": folder,
        "seconds": round(time.time() - start, 1),
        "written_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        **stats,
    }
    _write_json(os.path.join(partial, MANIFEST), manifest)
    os.rename(partial, folder)
    log(f"wrote {folder} in {manifest['seconds']:.0f} s: {_describe(manifest)}")
    return dict(manifest, reused=False)


def _describe(manifest):
    text = f"{manifest['files']} files, {manifest['bytes'] / 2**20:.0f} MiB on disk"
    if manifest.get("mean_image_bytes"):
        text += f", {manifest['mean_image_bytes'] / 1000:.1f} KB a JPEG"
    return text


def _write_json(path, value):
    with open(path, "w") as handle:
        json.dump(value, handle, indent=1)
        handle.write("\n")


class _Progress:
    """A line every few seconds: done, rate, time left."""

    def __init__(self, what, total, unit):
        self.what, self.total, self.unit = what, total, unit
        self.start = self.last = time.time()

    def update(self, done):
        now = time.time()
        if now - self.last < 5 and done < self.total:
            return
        self.last = now
        rate = done / max(now - self.start, 1e-9)
        left = (self.total - done) / rate if rate > 0 else float("inf")
        log(
            f"  {self.what}: {done:,}/{self.total:,} {self.unit} "
            f"({rate:,.0f}/s, {left:,.0f} s left)"
        )


# Images.


def textured_image(rng, width, height, detail):
    """An RGB image of smooth colour fields with filled shapes under a texture.

    Stripes, blotches and fine grain (`detail` sets the grain's amplitude,
    and with it the JPEG's size) cover the whole image, shapes included, so
    that it compresses like a photograph rather than like flat colour.

    >>> import numpy as np
    >>> textured_image(np.random.default_rng(0), 32, 24, 16.0).size
    (32, 24)
    """
    from PIL import Image
    from PIL import ImageDraw

    palette = rng.integers(30, 226, (3, 4, 3)).astype(np.uint8)
    image = Image.fromarray(palette).resize((width, height), Image.BICUBIC)
    draw = ImageDraw.Draw(image)
    for _ in range(int(rng.integers(3, 9))):
        x0, y0 = int(rng.integers(-width // 8, width)), int(rng.integers(-height // 8, height))
        w = int(rng.integers(max(2, width // 16), max(3, width // 2)))
        h = int(rng.integers(max(2, height // 16), max(3, height // 2)))
        colour = tuple(int(c) for c in rng.integers(0, 256, 3))
        kind = int(rng.integers(0, 3))
        if kind == 0:
            draw.ellipse((x0, y0, x0 + w, y0 + h), fill=colour, outline=(20, 20, 20), width=2)
        elif kind == 1:
            draw.rectangle((x0, y0, x0 + w, y0 + h), fill=colour)
        else:
            corners = int(rng.integers(3, 7))
            xs, ys = rng.integers(0, w, corners) + x0, rng.integers(0, h, corners) + y0
            draw.polygon([(int(x), int(y)) for x, y in zip(xs, ys)], fill=colour)
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    angle, frequency = rng.uniform(0, np.pi), rng.uniform(0.05, 0.4)
    stripes = np.sin((x * np.cos(angle) + y * np.sin(angle)) * frequency + rng.uniform(0, 6.3))
    coarse = rng.normal(0, 1, (max(1, height // 4), max(1, width // 4))).astype(np.float32)
    blotches = np.asarray(Image.fromarray(coarse).resize((width, height), Image.BILINEAR))
    grain = rng.normal(0, 1, (height, width)).astype(np.float32)
    # Images differ in how busy they are, as photographs do.
    texture = 18 * stripes + 22 * blotches + detail * rng.uniform(0.6, 1.4) * grain
    pixels = np.asarray(image, np.float32) + texture[..., None]
    return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))


def _jpeg_bytes(rng, width, height, detail, quality):
    buffer = io.BytesIO()
    textured_image(rng, width, height, detail).save(buffer, "JPEG", quality=quality)
    return buffer.getvalue()


class _ImagePool:
    """Writes the first `distinct` images, then hard-links each later item to one of them."""

    def __init__(self, folder, made, what):
        self.folder, self.made = folder, made
        self.distinct = made["distinct_images"]
        self.paths = []  # relative paths of the distinct images, in order
        self.jpeg_bytes = 0
        self.progress = _Progress(what, made["size"], "images")

    def add(self, index, relative, encode):
        path = os.path.join(self.folder, relative)
        if index < self.distinct:
            data = encode(index)
            with open(path, "wb") as handle:
                handle.write(data)
            self.paths.append(relative)
            self.jpeg_bytes += len(data)
        else:
            os.link(os.path.join(self.folder, self.paths[index % self.distinct]), path)
        self.progress.update(index + 1)

    def stats(self):
        return {
            "files": self.made["size"],
            "bytes": self.jpeg_bytes,
            "mean_image_bytes": round(self.jpeg_bytes / max(1, len(self.paths))),
            "hard_links": self.made["size"] - len(self.paths),
        }


def class_names(count):
    """WordNet-style folder names, as ImageNet's classes are named.

    >>> class_names(2)
    ['n01440764', 'n01448691']
    """
    return [f"n{1440764 + 7927 * index:08d}" for index in range(count)]


def _write_class_folders(folder, made):
    """ImageNet's train/ and val/ class folders; item i is of class i % classes."""
    names = class_names(made["classes"])
    for split in ("train", "val"):
        for name in names:
            os.makedirs(os.path.join(folder, split, name))
    width, height = made["image_size"]

    def encode(index):
        rng = np.random.default_rng([made["seed"], 0, index])
        return _jpeg_bytes(rng, width, height, made["detail"], made["quality"])

    pool = _ImagePool(folder, made, os.path.basename(folder)[: -len(".incomplete")])
    for index in range(made["size"]):
        name = names[index % len(names)]
        number = index // len(names)
        if number % made["val_every"] == made["val_every"] - 1:
            relative = os.path.join("val", name, f"ILSVRC2012_val_{index + 1:08d}.JPEG")
        else:
            relative = os.path.join("train", name, f"{name}_{number + 1}.JPEG")
        pool.add(index, relative, encode)
    return pool.stats()


# Words and sentences.


def vocabulary(language, size=VOCABULARY_SIZE, seed=0):
    """`size` distinct words of `language` ("en" or "de"), most frequent first.

    A few real function words lead; the rest are made of syllables, shorter
    ones more frequent. German capitalises a third of them (nouns).

    >>> vocabulary("en", 5)
    ['the', 'of', 'and', 'to', 'a']
    >>> len(set(vocabulary("de", 3000)))
    3000
    """
    head = list(_ENGLISH_HEAD if language == "en" else _GERMAN_HEAD)[:size]
    seen = set(head)
    syllables = np.array(_SYLLABLES[language], dtype=object)
    # Stable across Python runs: the seed comes from the language's name, not hash().
    offset = int(hashlib.sha256(language.encode()).hexdigest()[:8], 16)
    rng = np.random.default_rng([seed, offset])
    made = []
    while len(seen) < size:
        counts = 1 + np.minimum(4, rng.geometric(0.45, 4 * size))
        parts = syllables[rng.integers(0, len(syllables), int(counts.sum()))].tolist()
        nouns = rng.random(len(counts)) < (0.33 if language == "de" else 0.0)
        start = 0
        for count, noun in zip(counts.tolist(), nouns.tolist()):
            word = "".join(parts[start : start + count])
            start += count
            if noun:
                word = word[0].upper() + word[1:]
            if word not in seen:
                seen.add(word)
                made.append(word)
                if len(seen) == size:
                    break
    made.sort(key=len)  # frequent words are short
    return head + made


@functools.lru_cache(maxsize=8)
def sentence_maker(language, seed=0, exponent=1.0, vocabulary_size=VOCABULARY_SIZE):
    """A `SentenceMaker`, made once per process for the same arguments."""
    return SentenceMaker(language, seed, exponent, vocabulary_size)


class SentenceMaker:
    """Sentences of one language, `CHUNK` at a time, from a Zipfian vocabulary.

    Args:
        language: "en" or "de".
        seed: the seed of the words and of the draws.
        exponent: Zipf's exponent of the word frequencies.
    """

    def __init__(self, language, seed=0, exponent=1.0, vocabulary_size=VOCABULARY_SIZE):
        self.language = language
        words = vocabulary(language, vocabulary_size, seed)
        self.plain = np.array(words, dtype=object)
        self.capitalised = np.array([w[0].upper() + w[1:] for w in words], dtype=object)
        self.with_comma = np.array([w + "," for w in words], dtype=object)
        ranks = np.arange(1, len(words) + 1, dtype=np.float64)
        weights = ranks**-exponent
        self.cdf = np.cumsum(weights) / weights.sum()
        decimal = "," if language == "de" else "."
        numbers = [str(n) for n in range(1, 100)] + [str(1900 + n) for n in range(130)]
        numbers += [f"{n // 100}{decimal}{n % 100:02d}" for n in range(100, 10000, 37)]
        self.numbers = np.array(numbers, dtype=object)

    def tokens(self, rng, count):
        """`count` words drawn by their frequencies, as an object array."""
        return self.plain[np.searchsorted(self.cdf, rng.random(count), side="right")]

    def lines(self, rng, count, words=SENTENCE_WORDS):
        """`count` sentences of `words[0]`..`words[1]` words, as one string of lines.

        >>> import numpy as np
        >>> text = SentenceMaker("en").lines(np.random.default_rng(0), 3)
        >>> len(text.splitlines()), text.endswith("\\n")
        (3, True)
        """
        lengths = rng.integers(words[0], words[1] + 1, count)
        total = int(lengths.sum())
        ids = np.searchsorted(self.cdf, rng.random(total), side="right")
        tokens = self.plain[ids]
        commas = rng.random(total) < 0.05
        tokens[commas] = self.with_comma[ids[commas]]
        numbers = rng.random(total) < 0.02
        tokens[numbers] = self.numbers[rng.integers(0, len(self.numbers), int(numbers.sum()))]
        ends = np.cumsum(lengths) - 1
        starts = ends - lengths + 1
        tokens[starts] = self.capitalised[ids[starts]]
        tokens[ends] = self.plain[ids[ends]]  # no comma before the end mark
        separators = np.full(total, " ", dtype=object)
        marks = np.array([".\n"] * 8 + ["?\n", "!\n"], dtype=object)
        separators[ends] = marks[rng.integers(0, len(marks), count)]
        text = np.empty(2 * total, dtype=object)
        text[0::2], text[1::2] = tokens, separators
        return "".join(text.tolist())

    def long_line(self, rng, count=LONG_LINE_TOKENS):
        """One line of `count` words, as crawled corpora have (a page's text run together)."""
        return " ".join(self.tokens(rng, count).tolist()) + "\n"


def _odd_lines(size):
    """Line numbers of the pathological training lines: the long one, the blank ones."""
    return {
        "long": size // 3,
        "blank": {size // 7, size // 2},
        "target_blank": size // 5,
    }


def _write_pairs(size, made, write, what):
    """Generates `size` pairs in chunks and calls `write(english_text, german_text)`.

    Both texts are whole lines (each ending in a newline), line n with line n.
    """
    english, german = sentence_maker("en", made["seed"]), sentence_maker("de", made["seed"])
    odd = _odd_lines(size)
    progress = _Progress(what, size, "pairs")
    for chunk_start in range(0, size, CHUNK):
        count = min(CHUNK, size - chunk_start)
        rng = np.random.default_rng([made["seed"], 1, chunk_start])
        sources = english.lines(rng, count, made["sentence_words"]).splitlines(keepends=True)
        targets = german.lines(rng, count, made["sentence_words"]).splitlines(keepends=True)
        for line in range(chunk_start, chunk_start + count):
            local = line - chunk_start
            if line == odd["long"]:
                sources[local] = english.long_line(rng, made["long_line_tokens"])
                targets[local] = german.long_line(rng, made["long_line_tokens"])
            if line in odd["blank"]:
                sources[local] = targets[local] = "\n"
            if line == odd["target_blank"] and line not in odd["blank"]:
                targets[local] = "\n"
        write(sources, targets)
        progress.update(chunk_start + count)


def _plain_pairs(size, made, seed_offset, write):
    """Held-out pairs: no pathological lines (as newstest files have none)."""
    english, german = sentence_maker("en", made["seed"]), sentence_maker("de", made["seed"])
    rng = np.random.default_rng([made["seed"], seed_offset])
    write(english.lines(rng, size), german.lines(rng, size))


def _write_parallel(folder, made):
    """fairseq's and Multi30k's layout: train.en/train.de, valid.*, test.*."""
    paths = {}
    for split in ("train", "valid", "test"):
        for language in ("en", "de"):
            paths[split, language] = os.path.join(folder, f"{split}.{language}")
    handles = {key: open(path, "w", encoding="utf-8") for key, path in paths.items()}
    try:

        def writer(split):
            def write(sources, targets):
                handles[split, "en"].write("".join(sources))
                handles[split, "de"].write("".join(targets))

            return write

        _write_pairs(made["size"], made, writer("train"), os.path.basename(folder).split(".")[0])
        for offset, split in enumerate(("valid", "test")):
            _plain_pairs(made["held_out_pairs"], made, 2 + offset, writer(split))
    finally:
        for handle in handles.values():
            handle.close()
    return {"files": len(paths), "bytes": sum(os.path.getsize(p) for p in paths.values())}


def _write_tsv(folder, made):
    """One `english<TAB>german` file; a blank pair is an empty line."""
    path = os.path.join(folder, "pairs.tsv")
    with open(path, "w", encoding="utf-8") as handle:

        def write(sources, targets):
            lines = []
            for source, target in zip(sources, targets):
                if source == "\n" and target == "\n":
                    lines.append("\n")
                else:
                    lines.append(source[:-1] + "\t" + target)
            handle.write("".join(lines))

        _write_pairs(made["size"], made, write, os.path.basename(folder).split(".")[0])
    return {"files": 1, "bytes": os.path.getsize(path)}


# COCO.


def _coco_image_id(index):
    """COCO's ids are sparse integers; these are unique and spread alike."""
    return 9 + 3 * index + (index * 7919) % 3


def _caption(maker, rng, words):
    count = int(rng.integers(words[0], words[1] + 1))
    text = " ".join(maker.tokens(rng, count).tolist())
    text = text[0].upper() + text[1:]
    # COCO's captions end in a period about half the time, some with a space before it.
    return text + str(rng.choice(["", ".", ".", " ."]))


def _write_coco(folder, made):
    """COCO 2014: the JSON files are streamed entry by entry, images written one at a time."""
    os.makedirs(os.path.join(folder, "annotations"))
    for split in ("train2014", "val2014"):
        os.makedirs(os.path.join(folder, split))
    train, size = made["train_images"], made["size"]
    # Captions use the commonest 10,000 English words, as COCO's vocabulary is about that size.
    maker = sentence_maker("en", made["seed"], 1.1, 10_000)

    def shape(index):  # the image's (width, height); a linked item has its pool image's size
        return COCO_SIZES[(index % made["distinct_images"]) % len(COCO_SIZES)]

    def encode(index):
        rng = np.random.default_rng([made["seed"], 2, index])
        return _jpeg_bytes(rng, *shape(index), made["detail"], made["quality"])

    def file_name(index):
        split = "train2014" if index < train else "val2014"
        return split, f"COCO_{split}_{_coco_image_id(index):012d}.jpg"

    pool = _ImagePool(folder, made, os.path.basename(folder)[: -len(".incomplete")])
    for index in range(size):
        split, name = file_name(index)
        pool.add(index, os.path.join(split, name), encode)
    for kind, indices in (("train", range(0, train)), ("val", range(train, size))):
        path = os.path.join(folder, "annotations", f"captions_{kind}2014.json")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write('{"info": {"description": "COCO 2014 Dataset (synthetic)", ')
            handle.write('"version": "1.0", "year": 2014}, "images": [')
            for position, index in enumerate(indices):
                width, height = shape(index)
                entry = {
                    "license": 1 + index % 8,
                    "file_name": file_name(index)[1],
                    "height": height,
                    "width": width,
                    "id": _coco_image_id(index),
                }
                handle.write(("," if position else "") + json.dumps(entry))
            handle.write('], "licenses": [{"id": 1, "name": "Attribution License"}], ')
            handle.write('"annotations": [')
            for position, index in enumerate(indices):
                rng = np.random.default_rng([made["seed"], 3, index])
                for number in range(made["captions_per_image"]):
                    entry = {
                        "image_id": _coco_image_id(index),
                        "id": 1 + CAPTIONS_PER_IMAGE * index + number,
                        "caption": _caption(maker, rng, made["caption_words"]),
                    }
                    handle.write(("," if position or number else "") + json.dumps(entry))
            handle.write("]}\n")
    stats = pool.stats()
    stats["files"] += 2
    return stats


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("layout", choices=LAYOUTS)
    parser.add_argument("sizes", type=int, nargs="+")
    parser.add_argument("--root", default=DEFAULT_ROOT)
    parser.add_argument("--pool", type=int, default=None, help="distinct images to encode")
    args = parser.parse_args(argv)
    for size in args.sizes:
        made = ensure_dataset(args.layout, size, args.root, args.pool)
        print(f"{made['path']}: {_describe(made)}{' (reused)' if made['reused'] else ''}")


if __name__ == "__main__":
    main()

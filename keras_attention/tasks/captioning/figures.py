"""A captioner's held-out examples: printed, drawn word by word, and on an explorer page.

`draw_caption_samples` takes what `keras_attention.tasks.captioning.evaluation.caption_split`
returns (images, references, generated captions, their words and attention
maps), and for the first few images prints the reference and the caption and saves
`attention_N.png` (the image with one heat map per word); with `html` it also
writes `attention_explorer.html` of the first `explorer_images` captions.
"""

import os

import numpy as np

from keras_attention.visualization.explorer.captioning import write_caption_explorer
from keras_attention.visualization.figures import save_figure
from keras_attention.visualization.image_attention import plot_caption_attention

# Test images on the attention explorer page.
EXPLORER_IMAGES = 8


def caption_word_maps(words, attention, count):
    """Each of the first `count` captions' words with their maps.

    Args:
        words: per caption, its whole words, as `model.caption(...,
            return_attention=True)` returns them.
        attention: `(N, T, h, w)`: caption `i`'s first `len(words[i])` maps
            are its words' maps.
        count: captions to take.

    Returns:
        a list of `(words, maps (W, h, w))`; an empty caption gives `([], (0, h, w) maps)`.

    Example:

    >>> import numpy as np
    >>> from keras_attention.tasks.captioning.figures import caption_word_maps
    >>> attention = np.arange(6.0).reshape(2, 3, 1, 1)
    >>> joined = caption_word_maps([["a", "red"], []], attention, 2)
    >>> joined[0][0], joined[0][1][:, 0, 0].tolist(), joined[1][0], joined[1][1].shape
    (['a', 'red'], [0.0, 1.0], [], (0, 1, 1))
    """
    attention = np.asarray(attention)
    return [
        (list(caption), attention[i, : len(caption)]) for i, caption in enumerate(words[:count])
    ]


def draw_caption_samples(
    output_dir,
    images,
    references,
    hypotheses,
    outputs,
    samples,
    html=True,
    explorer_images=EXPLORER_IMAGES,
):
    """Prints and draws the first `samples` captions; writes the explorer page with `html`.

    Args:
        output_dir: the folder of `attention_N.png` and `attention_explorer.html`.
        images: the captioned images, `(H, W, 3)` pixels in 0..255.
        references: a list of reference captions per image (the first is printed).
        hypotheses: the generated caption of each image.
        outputs: dict "words" (per caption, its words) and "attention"
            (`(N, T, h, w)`, one map per word).
        samples: captions to print and draw.
        html: whether to write the explorer page (of the captions with words).
        explorer_images: captions the page can show, at most.

    Returns:
        `(figures, explorer)`: the paths of the written figures (str), and
        of the page (None when not written).
    """
    captions = caption_word_maps(
        outputs["words"], outputs["attention"], max(samples, explorer_images)
    )
    figures = []
    for index in range(min(samples, len(captions))):
        print(f"  reference: {references[index][0]}\n  caption  : {hypotheses[index]}")
        caption_words, maps = captions[index]
        figure = plot_caption_attention(images[index], maps, caption_words, title=hypotheses[index])
        path = os.path.join(output_dir, f"attention_{index}.png")
        figures.append(str(save_figure(figure, path)))
    if figures:
        print("attention plots:", ", ".join(figures))
    shown = [i for i, (words, _) in enumerate(captions[:explorer_images]) if words]
    if not (html and shown):
        return figures, None
    explorer = os.path.join(output_dir, "attention_explorer.html")
    examples = [
        {
            "name": f"test image {i}: {hypotheses[i]}",
            "image": images[i],
            "words": captions[i][0],
            "attention": captions[i][1],  # (words, h, w)
        }
        for i in shown
    ]
    write_caption_explorer(explorer, examples, title="Caption attention")
    print(f"attention explorer written to {explorer}")
    return figures, explorer

"""Screenshots of the attention explorer pages for the README.

Run the three example scripts first (each writes `attention_explorer.html`
into its `--output-dir`), then point this script at those folders:

    python examples/train_nmt.py --model transformer --output-dir runs/nmt
    python examples/train_captioning.py --output-dir runs/captioning
    python examples/train_vit.py --output-dir runs/vit
    python docs/make_screenshots.py --nmt runs/nmt --captioning runs/captioning \
        --vit runs/vit --output-dir docs/images

It opens each page in headless Chromium (playwright, pointed at the system's
`chromium`), hovers a word or clicks a patch so that a map is shown, and
writes `translation_explorer.png`, `caption_explorer.png` and
`vit_explorer.png`, shrunk to at most 900 pixels wide.
"""

import argparse
import io
import pathlib
import shutil

from PIL import Image
from playwright.sync_api import sync_playwright

PAGE_NAME = "attention_explorer.html"
MAX_WIDTH = 900


def show_translation(page):
    """Pins the second source word, so its attention lines stay drawn."""
    page.locator(".column .token").nth(1).click()


def show_caption(page):
    """Selects the caption's second word, so its map is over the image."""
    page.locator("#words .token").nth(1).click()


def show_vit(page):
    """Leaves the rollout of the class token over the image (the page's default)."""


PAGES = {
    "nmt": ("translation_explorer.png", show_translation),
    "captioning": ("caption_explorer.png", show_caption),
    "vit": ("vit_explorer.png", show_vit),
}


def screenshot(browser, html_path, prepare):
    """PNG bytes of the explorer element once `prepare(page)` has run."""
    page = browser.new_page(viewport={"width": 1000, "height": 800}, device_scale_factor=1)
    page.goto(html_path.resolve().as_uri())
    prepare(page)
    png = page.locator("#explorer").screenshot()
    page.close()
    return png


def shrink(png, path):
    """Writes `png` to `path`, at most `MAX_WIDTH` pixels wide, as an optimised palette PNG."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    if image.width > MAX_WIDTH:
        image = image.resize((MAX_WIDTH, round(image.height * MAX_WIDTH / image.width)))
    image.quantize(colors=128).save(path, optimize=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for name in PAGES:
        parser.add_argument(f"--{name}", type=pathlib.Path, help=f"the {name} run's --output-dir")
    parser.add_argument("--output-dir", type=pathlib.Path, default=pathlib.Path("docs/images"))
    args = parser.parse_args(argv)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("no chromium on PATH (apt-get install chromium)")
    args.output_dir.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium)
        for name, (file_name, prepare) in PAGES.items():
            run_dir = getattr(args, name)
            if run_dir is None:
                continue
            path = args.output_dir / file_name
            shrink(screenshot(browser, run_dir / PAGE_NAME, prepare), path)
            print(f"wrote {path} ({path.stat().st_size // 1024} KiB)")
        browser.close()


if __name__ == "__main__":
    main()

"""Writing one self-contained HTML page: styles, scripts, data and images inlined.

Every explorer page is a single file that opens from disk with no network
and no server. Arrays travel as base64 little-endian float32 (exact to
float32, about 4/3 bytes per byte of data), images as base64 PNG data URIs.

Colours: every heat map (matrix cells, image overlays) colours a weight `w`
as viridis((w - lo) / (hi - lo)), where lo and hi are the smallest and
largest weight of the map shown (a constant map is all viridis(0)); the
colour bar beside it is labelled with lo and hi. The page interpolates
linearly between the 33 viridis colours of `VIRIDIS` (matplotlib's viridis
at 0, 1/32, ..., 1), within 3/255 of matplotlib's own colours.
"""

import base64
import html
import json
import pathlib
import struct
import zlib

import numpy as np

STATIC = pathlib.Path(__file__).resolve().parent / "static"
# Where a page's fragment takes the image, its overlay, colour bar and readout.
IMAGE_STAGE = "<!-- image stage -->"

# matplotlib's viridis at 0, 1/32, ..., 1, as 0..255 RGB.
# fmt: off
VIRIDIS = (
    (68, 1, 84), (71, 13, 96), (72, 24, 106), (72, 35, 116), (71, 45, 123), (69, 55, 129),
    (66, 64, 134), (62, 73, 137), (59, 82, 139), (55, 91, 141), (51, 99, 141), (47, 107, 142),
    (44, 114, 142), (41, 122, 142), (38, 130, 142), (35, 137, 142), (33, 145, 140),
    (31, 152, 139), (31, 160, 136), (34, 167, 133), (40, 174, 128), (50, 182, 122),
    (63, 188, 115), (78, 195, 107), (94, 201, 98), (112, 207, 87), (132, 212, 75),
    (152, 216, 62), (173, 220, 48), (194, 223, 35), (216, 226, 25), (236, 229, 27),
    (253, 231, 37),
)
# fmt: on


def encode_array(array):
    """A float array as JSON-ready `{"shape": [...], "data": base64 float32}`.

    Example:

    >>> import base64, numpy as np
    >>> from keras_attention.visualization.explorer.page import encode_array
    >>> encoded = encode_array(np.array([[0.5, 0.25]]))
    >>> encoded["shape"], np.frombuffer(base64.b64decode(encoded["data"]), "<f4").tolist()
    ([1, 2], [0.5, 0.25])
    """
    array = np.asarray(array, dtype="<f4")
    return {
        "shape": list(array.shape),
        "data": base64.b64encode(np.ascontiguousarray(array).tobytes()).decode("ascii"),
    }


def png_data_uri(pixels):
    """An (H, W, 3) uint8 image as a `data:image/png;base64,...` URI.

    A plain PNG writer (8-bit RGB, no filtering) so that pages need neither
    matplotlib nor Pillow.

    Example:

    >>> import numpy as np
    >>> from keras_attention.visualization.explorer.page import png_data_uri
    >>> png_data_uri(np.zeros((2, 2, 3), dtype="uint8"))[:22]
    'data:image/png;base64,'
    """
    pixels = np.ascontiguousarray(pixels, dtype="uint8")
    height, width = pixels.shape[:2]

    def chunk(kind, body):
        checksum = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", checksum)

    # Each row starts with filter type 0 (none).
    rows = np.concatenate([np.zeros((height, 1), dtype="uint8"), pixels.reshape(height, -1)], 1)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    png = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows.tobytes(), 6))
        + chunk(b"IEND", b"")
    )
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _static(name):
    return (STATIC / name).read_text(encoding="utf-8")


def write_page(path, title, body, scripts, data):
    """Writes one HTML file: the styles, the `body` fragment, `data` and the `scripts`.

    Args:
        path: file to write (str or path-like); its folder must exist.
        title: page title (plain text, escaped here).
        body: name of the HTML fragment in `static/` that holds the page's
            elements; a line `<!-- image stage -->` in it stands for
            `static/image_stage.html`, the elements of an image with an
            attention overlay.
        scripts: names of the `static/` scripts to inline, in order; they
            read the data as `DATA` and the colours as `VIRIDIS`.
        data: JSON-serialisable dict.

    Returns:
        The written `pathlib.Path`.
    """
    # "<" escaped so no token or title can close the <script> element early.
    payload = json.dumps(data, separators=(",", ":")).replace("<", "\\u003c")
    viridis = json.dumps([list(color) for color in VIRIDIS], separators=(",", ":"))
    code = "\n".join(_static(name) for name in scripts)
    fragment = _static(body).replace(f"  {IMAGE_STAGE}\n", _static("image_stage.html"))
    text = (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n"
        f"<style>\n{_static('explorer.css')}</style>\n</head>\n<body>\n"
        f"<h1>{html.escape(title)}</h1>\n{fragment}"
        f'<script type="application/json" id="explorer-data">{payload}</script>\n'
        f'<script>\n"use strict";\nconst VIRIDIS = {viridis};\n{code}</script>\n'
        "</body>\n</html>\n"
    )
    path = pathlib.Path(path)
    path.write_text(text, encoding="utf-8")
    return path

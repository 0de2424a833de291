"""Opening an item's image for a scorer, with memory bounded whatever the file.

A dual encoder resizes every image to its input side (224 px for most CLIPs) before it
sees it, so holding a 9,000 x 9,000 PNG at full size in a batch of 64 only costs memory
(about 60 GB). An image whose region is more than 4x the model's input side is reduced
by an integer box filter before it is held: JPEGs are decoded at the reduced scale
(`draft`), other files are decoded once and reduced at once. The reduction keeps the
shorter side at least 4x the input side while it can, and never below the input side,
so typical benchmark images (COCO's 640 px, SD3.5's 1024 px under a 224 px model) are
passed through untouched. Full-size decodes in flight are bounded in bytes (`Budget`),
not in images. A file over PIL's decompression-bomb limit is one line naming the item.
"""

from __future__ import annotations

import math
import threading
from contextlib import contextmanager
from pathlib import Path

from autocomp.core.errors import AutocompError

DEFAULT_SIDE = 896  # input side assumed for a scorer that does not say (VLMs: 336-896)
DECODE_BUDGET = 1 << 30  # bytes of full-size decodes in flight across the decode threads
# PIL allocates an image in blocks of 16 MB by default; glibc keeps freed blocks of that size
# in each decoding thread's arena (4 threads held 430 MB after decoding one image at a
# time). Blocks above glibc's largest mmap threshold (32 MB) go back to the system on free.
BLOCK_SIZE = 64 << 20
REDUCIBLE = {"L", "LA", "RGB", "RGBA", "RGBa", "I", "F"}  # modes PIL's reduce takes


class Budget:
    """At most `limit` bytes held at once by the threads that `hold` some; one request
    larger than the limit is let through alone."""

    def __init__(self, limit: int = DECODE_BUDGET):
        self.limit, self.used = limit, 0
        self._cond = threading.Condition()

    @contextmanager
    def hold(self, size: int):
        with self._cond:
            self._cond.wait_for(lambda: self.used == 0 or self.used + size <= self.limit)
            self.used += size
        try:
            yield
        finally:
            with self._cond:
                self.used -= size
                self._cond.notify_all()


def large_blocks() -> None:
    """Let PIL allocate large images in 64 MB blocks (unless the user chose a size with
    PILLOW_BLOCK_SIZE), so a decode's memory is returned when the image is freed."""
    import os

    from PIL import Image

    if not os.environ.get("PILLOW_BLOCK_SIZE") and Image.core.get_block_size() < BLOCK_SIZE:
        Image.core.set_block_size(BLOCK_SIZE)


def reduce_factor(width: int, height: int, side: int | None) -> int:
    """The integer factor a width x height region is reduced by before a model of input
    `side` sees it: the shorter side kept >= 4 x side, further (never below 1 x side) while
    the region is above (4 x side)^2 pixels."""
    side = side or DEFAULT_SIDE
    short = min(width, height)
    keep = short // (4 * side)
    by_pixels = math.isqrt(width * height // (16 * side * side))
    return max(1, keep, min(by_pixels, short // side))


def open_image(path: Path, crop=None, item: str = "?", side: int | None = None,
               budget: Budget | None = None):
    """The image (or its `crop`: x, y, width, height, clipped to the image) as RGB,
    reduced for a model of input `side` (see the module). A file that is not a readable
    image, or is over PIL's pixel limit, is one line naming the item and the file."""
    from PIL import Image, UnidentifiedImageError

    im = out = None
    try:
        im = Image.open(path)
        width, height = im.size
        box = _box(crop, width, height, path)
        factor = reduce_factor(box[2] - box[0], box[3] - box[1], side)
        if factor > 1 and im.format == "JPEG":  # decoded at 1/2, 1/4 or 1/8 scale
            im.draft("RGB", (max(1, width // factor), max(1, height // factor)))
        scale = width / im.width
        with (budget or _UNBOUNDED).hold(im.width * im.height * 8):  # decode + a copy
            out = _reduced(im, box, scale, factor)
        return out
    except Image.DecompressionBombError as exc:
        raise AutocompError(f"item {item}: image refused, {str(exc).split(' could be')[0]}; "
                            "a decompression bomb, or raise PIL.Image.MAX_IMAGE_PIXELS",
                            file=path) from None
    except (UnidentifiedImageError, OSError, SyntaxError) as exc:
        raise AutocompError(f"item {item}: image cannot be read ({exc})",
                            file=path) from None
    finally:
        if im is not None and out is not im:
            im.close()


_UNBOUNDED = Budget(1 << 62)


def _box(crop, width: int, height: int, path) -> tuple[int, int, int, int]:
    if not crop:
        return (0, 0, width, height)
    x, y, w, h = crop
    box = (max(x, 0), max(y, 0), min(x + w, width), min(y + h, height))
    if box[2] <= box[0] or box[3] <= box[1]:
        raise ValueError(f"crop {crop} lies outside the {width}x{height} image {path}")
    return box


def _reduced(im, box, scale: float, factor: int):
    """Crop (in the decoded scale), reduce by what a draft left of `factor`, as RGB; the
    decoded image itself when there is nothing to do (its file is closed once loaded)."""
    im.load()
    box = tuple(round(v / scale) for v in box)
    if box != (0, 0, im.width, im.height):
        im = im.crop(box)
    if im.mode not in REDUCIBLE:
        im = im.convert("RGB")
    rest = int(factor / scale + 1e-9)
    if rest > 1:
        im = im.reduce(rest)
    if im.mode != "RGB":
        return im.convert("RGB")
    return im.copy() if getattr(im, "fp", None) else im  # a multi-frame file stays open

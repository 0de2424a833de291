"""2D renderings of the built-in 3D shapes, shared by the procedural generator and the
color-blobs detector (which recognises a blob by its silhouette).

Each shape is a list of faces in a unit box (x right, y down) with a tone: the base color,
a lighter or a darker shade (flat shading), or a hole. The base face is the largest, so
the most common color of an object is its concept color. Every face is outlined in ink
(near black), so objects stand out from any background.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw

INK = (24, 24, 24)
INK_MAX = 48  # a pixel whose channels are all <= this is ink
LIGHT, DARK = 0.4, 0.65


@dataclass(frozen=True)
class Face:
    draw_as: str  # "polygon" | "ellipse": the PIL draw method
    points: tuple  # polygon vertices, or the ellipse box (x0, y0, x1, y1)
    tone: str  # "base" | "light" | "dark" | "hole"

    def scaled(self, sx: float, sy: float):
        """The face's coordinates on a sx x sy tile, as PIL's draw.<draw_as> takes them."""
        return _SCALE[self.draw_as](self.points, sx, sy)


_SCALE = {  # polygon vertices; an ellipse's box (x0, y0, x1, y1)
    "polygon": lambda pts, sx, sy: [(x * sx, y * sy) for x, y in pts],
    "ellipse": lambda box, sx, sy: (box[0] * sx, box[1] * sy, box[2] * sx, box[3] * sy),
}


@dataclass(frozen=True)
class Shape:
    name: str
    aspect: float  # width / height
    faces: tuple[Face, ...]


def _p(tone, *pts):
    return Face("polygon", tuple(pts), tone)


def _e(tone, x0, y0, x1, y1):
    return Face("ellipse", (x0, y0, x1, y1), tone)


SHAPES = {s.name: s for s in (
    Shape("cube", 1.0, (
        _p("base", (0, .3), (.7, .3), (.7, 1), (0, 1)),
        _p("light", (0, .3), (.3, 0), (1, 0), (.7, .3)),
        _p("dark", (.7, .3), (1, 0), (1, .7), (.7, 1)))),
    Shape("sphere", 1.0, (_e("base", 0, 0, 1, 1), _e("light", .2, .15, .42, .37))),
    Shape("pyramid", 1.15, (
        _p("base", (.45, 0), (0, .85), (.62, 1)),
        _p("dark", (.45, 0), (.62, 1), (1, .8)))),
    Shape("cylinder", 0.7, (
        _e("base", 0, .75, 1, 1), _p("base", (0, .125), (1, .125), (1, .875), (0, .875)),
        _e("light", 0, 0, 1, .25))),
    Shape("cone", 0.8, (
        _e("dark", 0, .76, 1, 1), _p("base", (.5, 0), (1, .88), (0, .88)))),
    Shape("torus", 2.0, (
        _e("base", 0, 0, 1, 1), _e("dark", .3, .28, .7, .62), _e("hole", .33, .36, .67, .64))),
    Shape("prism", 1.6, (
        _p("base", (.34, 1), (.17, .3), (.83, 0), (1, .7)),
        _p("dark", (0, 1), (.34, 1), (.17, .3)))),
    Shape("capsule", 0.45, (
        _e("base", 0, 0, 1, .45), _e("base", 0, .55, 1, 1),
        _p("base", (0, .225), (1, .225), (1, .775), (0, .775)),
        _p("light", (.18, .25), (.32, .25), (.32, .75), (.18, .75)))),
)}


def tone(rgb, which: str) -> tuple[int, int, int]:
    r, g, b = rgb
    if which == "light":
        return tuple(round(c + (255 - c) * LIGHT) for c in (r, g, b))
    if which == "dark":
        return tuple(round(c * DARK) for c in (r, g, b))
    return (r, g, b)


TONE_CODE = {"hole": 0, "base": 1, "light": 2, "dark": 3}


@dataclass(frozen=True)
class Surface:
    """What a value kind's paint() sees of an object drawn in a tile: per pixel the tone of
    the face drawn there (TONE_CODE; 0 outside the object and in holes), the object's fill
    color, the outline width and the texture period of the canvas."""

    codes: np.ndarray
    rgb: tuple[int, int, int]
    outline: int
    pitch: int

    @property
    def base(self) -> np.ndarray:
        """Where the base faces are (the largest, in the object's own color)."""
        return self.codes == TONE_CODE["base"]


def render(name: str, width: int, height: int, rgb, outline: int = 2, pitch: int = 10,
           paints=()) -> Image.Image:
    """The shape drawn in a width x height RGBA tile (transparent outside it), then each of
    `paints` (a function `(pixels, surface) -> str | None` changing the RGBA pixels in place:
    a value kind's paint, synth/looks.py) in order."""
    return render_painted(name, width, height, rgb, outline, pitch, paints)[0]


def render_painted(name: str, width: int, height: int, rgb, outline: int = 2,
                   pitch: int = 10, paints=()) -> tuple[Image.Image, list[str]]:
    """render(), and why each painted value that cannot show does not (what the paints
    returned, None left out)."""
    shape = SHAPES[name]
    tile = Image.new("RGBA", (width, height), (0, 0, 0, 0))
    draw = ImageDraw.Draw(tile)
    sx, sy = width - 1, height - 1
    codes = Image.new("L", (width, height), 0)
    codes_draw = ImageDraw.Draw(codes)
    for face in shape.faces:
        fill = (0, 0, 0, 0) if face.tone == "hole" else (*tone(rgb, face.tone), 255)
        xy = face.scaled(sx, sy)
        getattr(draw, face.draw_as)(xy, fill=fill, outline=(*INK, 255), width=outline)
        getattr(codes_draw, face.draw_as)(xy, fill=TONE_CODE[face.tone])
    if not paints:
        return tile, []
    surface = Surface(np.asarray(codes), tuple(rgb), outline, pitch)
    pixels = np.asarray(tile).copy()
    unshown = [why for why in (paint(pixels, surface) for paint in paints) if why]
    return Image.fromarray(pixels, "RGBA"), unshown


def paint_pattern(pixels: np.ndarray, surface: Surface, pattern: str) -> str | None:
    """A texture (stripes, dots, checks; pattern_mask) laid over the base faces, inside the
    outline, in pattern_tone of the fill; why it cannot show when it covers under
    MIN_PATTERN_SHARE of the object."""
    from scipy import ndimage

    height, width = surface.codes.shape
    inside = ndimage.binary_erosion(surface.base, iterations=surface.outline)
    full = pattern_mask(pattern, height, width, surface.pitch)
    where = inside & full
    if pattern != "stripes":  # dots and squares only where most of one fits
        pieces, _ = ndimage.label(full)
        whole = np.bincount(pieces.ravel())
        kept = np.bincount(pieces[where], minlength=len(whole))
        where &= (kept >= 0.75 * np.median(whole[1:]))[pieces]
    toned = pattern_tone(surface.rgb)
    pixels[where] = (*toned, 255)
    solid = pixels[..., 3] > 0
    share = float((solid & (pixels[..., :3] == toned).all(axis=2)).sum() / max(1, solid.sum()))
    if share < MIN_PATTERN_SHARE:
        return (f"the {pattern} cover {share:.1%} of the object (under "
                f"{MIN_PATTERN_SHARE:.1%}: no room to show)")
    return None


@lru_cache(maxsize=4096)
def silhouette(name: str, width: int, height: int) -> np.ndarray:
    """The filled silhouette (holes filled) of a shape at this size, as a bool array."""
    from scipy.ndimage import binary_fill_holes

    alpha = np.asarray(render(name, width, height, (128, 128, 128)))[..., 3] > 0
    return binary_fill_holes(alpha)


@lru_cache(maxsize=64)
def fill_fraction(name: str) -> float:
    """The share of its box a shape's silhouette covers (measured at 200 px high)."""
    h = 200
    return float(silhouette(name, max(2, round(SHAPES[name].aspect * h)), h).mean())


PATTERN_LIGHT, PATTERN_DARK = (214, 214, 214), (64, 64, 64)
PATTERNS = ("stripes", "dots", "checks")  # what pattern_mask draws
MIN_PATTERN_SHARE = 0.015  # a texture covering less of its object does not read (pixels)


def pattern_pitch(size: int) -> int:
    """The period of a drawn texture, in pixels, for a canvas of `size`."""
    return max(8, round(0.04 * size))


def luminance(rgb) -> float:
    r, g, b = rgb
    return 0.299 * r + 0.587 * g + 0.114 * b


def pattern_tone(rgb) -> tuple[int, int, int]:
    """The pattern's color on an object of color `rgb`: light grey on dark colors, dark
    grey on light ones (never ink, never the white of a background)."""
    return PATTERN_LIGHT if luminance(rgb) < 150 else PATTERN_DARK


def pattern_mask(pattern: str, height: int, width: int, pitch: int) -> np.ndarray:
    """Where a pattern of period `pitch` covers a height x width tile (about 25-35%):
    horizontal stripes, or a grid of round dots or of small squares (checks)."""
    y, x = np.mgrid[0:height, 0:width]
    if pattern == "stripes":
        return (y % pitch) < max(2, round(0.3 * pitch))
    cy, cx = y % pitch - pitch // 2, x % pitch - pitch // 2
    if pattern == "dots":
        r = (round(0.6 * pitch) | 1) / 2  # odd diameter: a disc centred on a pixel
        return cy * cy + cx * cx <= r * r
    if pattern == "checks":
        half = (round(0.5 * pitch) | 1) // 2
        return (np.abs(cy) <= half) & (np.abs(cx) <= half)
    raise ValueError(f"unknown pattern {pattern!r} ({', '.join(PATTERNS)})")

"""Backgrounds of the procedural generator: plain white (minimal track), a grey one (the
grey-background fault) and a cluttered, textured room (contextual track), or, in its
`outdoor` look, a landscape (sky, clouds, ground, trees).

Neither uses near-black pixels (every channel >= 60), so object outlines (ink) are the only
dark edges in the image.
"""

from __future__ import annotations

import random

import numpy as np
from PIL import Image, ImageDraw

GREY = (150, 150, 150)


def plain(size: int, rgb=(255, 255, 255)) -> Image.Image:
    return Image.new("RGB", (size, size), rgb)


def _muted(rng: random.Random, low=90, high=225) -> tuple[int, int, int]:
    base = rng.uniform(low, high)
    return tuple(int(max(60, min(235, base + rng.uniform(-30, 30)))) for _ in range(3))


def room(size: int, rng: random.Random) -> Image.Image:
    """A wall, a floor with planks, a window and furniture-like clutter, plus grain."""
    img = Image.new("RGB", (size, size), _muted(rng))
    draw = ImageDraw.Draw(img)
    horizon = int(size * rng.uniform(0.35, 0.65))
    floor = _muted(rng, 80, 190)
    draw.rectangle((0, horizon, size, size), fill=floor)
    plank = tuple(max(60, c - 18) for c in floor)
    step = max(6, size // rng.randint(6, 12))
    for x in range(-size, size * 2, step):
        draw.line((x, size, x + (size // 2 - x) * 0.5, horizon), fill=plank, width=1)
    if rng.random() < 0.7:
        x0, y0 = rng.uniform(0.05, 0.6) * size, rng.uniform(0.05, 0.2) * size
        w, h = rng.uniform(0.15, 0.3) * size, rng.uniform(0.1, 0.22) * size
        draw.rectangle((x0, y0, x0 + w, y0 + h), fill=(200, 215, 228), outline=_muted(rng),
                       width=3)
    for _ in range(rng.randint(4, 9)):
        x0, y0 = rng.uniform(-0.1, 1.0) * size, rng.uniform(0.0, 1.0) * size
        w, h = rng.uniform(0.05, 0.3) * size, rng.uniform(0.05, 0.3) * size
        shape = draw.rectangle if rng.random() < 0.6 else draw.ellipse
        shape((x0, y0, x0 + w, y0 + h), fill=_muted(rng, 70, 220))
    noise = np.random.default_rng(rng.getrandbits(32)).integers(-10, 11, (size, size, 1))
    # in int16 throughout (60..235 +- 10 cannot overflow): the same pixels as int64 math,
    # 8x faster
    arr = np.asarray(img, dtype=np.int16) + noise.astype(np.int16)
    np.clip(arr, 60, 235, out=arr)
    return Image.fromarray(arr.astype(np.uint8), "RGB")


def outdoor(size: int, rng: random.Random) -> Image.Image:
    """A sky fading to the horizon, clouds, a ground of grass or sand and trees, plus
    grain: another context than the room, drawn from the same seed."""
    horizon = int(size * rng.uniform(0.4, 0.6))
    top, low = np.array([110, 160, 225]), np.array([200, 220, 240])
    fade = np.linspace(0.0, 1.0, max(horizon, 1))[:, None]
    arr = np.zeros((size, size, 3), dtype=np.int16)
    arr[:horizon] = (top + (low - top) * fade)[:, None, :].astype(np.int16)
    ground = np.array(rng.choice([(95, 150, 80), (120, 160, 90), (190, 170, 120)]))
    arr[horizon:] = ground
    img = Image.fromarray(arr.astype(np.uint8), "RGB")
    draw = ImageDraw.Draw(img)
    for _ in range(rng.randint(2, 5)):  # clouds
        x0, y0 = rng.uniform(-0.1, 0.9) * size, rng.uniform(0.02, 0.3) * horizon
        w, h = rng.uniform(0.15, 0.35) * size, rng.uniform(0.04, 0.1) * size
        draw.ellipse((x0, y0, x0 + w, y0 + h), fill=(228, 232, 238))
    for _ in range(rng.randint(2, 6)):  # trees on the horizon
        x0, w = rng.uniform(-0.05, 0.95) * size, rng.uniform(0.05, 0.14) * size
        h = rng.uniform(0.1, 0.25) * size
        green = tuple(int(c) for c in (ground * rng.uniform(0.6, 0.8)).clip(60, 235))
        draw.ellipse((x0, horizon - h, x0 + w, horizon + h * 0.15), fill=green)
    noise = np.random.default_rng(rng.getrandbits(32)).integers(-10, 11, (size, size, 1))
    out = np.asarray(img, dtype=np.int16) + noise.astype(np.int16)
    np.clip(out, 60, 235, out=out)
    return Image.fromarray(out.astype(np.uint8), "RGB")

"""Reading an object's material off the image (the pixels answerer's `material` reader).

The object's inner pixels (its blob peeled by 3 pixels, ink left out) are summed up as
their median color and their spread (the 10th to 90th percentile of luminance). Each
material is rendered on the same shape at the blob's size, over the color found just
outside the blob (so glass shows the background it lets through), and summed up the same
way; the nearest summary (color distance plus half the spread difference) names it.
"""

from __future__ import annotations

from functools import lru_cache, partial

import numpy as np

from autocomp.core.masks import dilate, erode
from autocomp.core.pixel_minmax import channel_max
from autocomp.synth.materials import GLASS_ALPHA, GLASS_TINT, MATERIALS, paint_material
from autocomp.synth.shapes import INK_MAX, SHAPES, pattern_pitch, render


def read_material(image: np.ndarray, label: str, mask: np.ndarray,
                  box) -> tuple[str | None, dict]:
    """(material or None, evidence) of the blob `mask` named `label`."""
    mask = np.asarray(mask, bool)
    rgb = image[..., :3]
    found = summary(rgb, mask)
    if found is None or label not in SHAPES:
        return None, {"why": "no inner pixels"}
    ring = dilate(mask, 6) & ~dilate(mask, 2)
    ring &= channel_max(rgb) > INK_MAX
    around = tuple(int(c) for c in np.median(rgb[ring], axis=0)) if ring.any() else (255,) * 3
    unmixed = (np.array(found[:3]) - GLASS_ALPHA * np.array(GLASS_TINT)) / (1 - GLASS_ALPHA)
    behind = tuple(int(c) for c in np.clip(np.round(unmixed), 0, 255))
    possible = bool(np.all((unmixed > -8) & (unmixed < 263)))  # a real background could
    w, h = int(box[2] - box[0]), int(box[3] - box[1])
    pitch = pattern_pitch(max(image.shape[:2]))
    scores = {}
    for material in MATERIALS:
        for under in ((around, behind) if material == "glass" and possible else (around,)):
            ref = _reference(label, w, h, material, pitch, under)
            if ref is not None:
                d = (float(np.linalg.norm(np.subtract(found[:3], ref[:3])))
                     + 0.5 * abs(found[3] - ref[3]))
                scores[material] = min(d, scores.get(material, d))
    if not scores:
        return None, {"why": "blob too small to compare"}
    best = min(scores, key=scores.get)
    distance = {m: round(d, 1) for m, d in sorted(scores.items())}
    return best, {"median": [round(v) for v in found[:3]], "spread": round(found[3], 1),
                  "around": list(around), "behind": list(behind), "distance": distance}


def summary(rgb: np.ndarray, mask: np.ndarray) -> tuple[float, ...] | None:
    """(median r, g, b, luminance spread) of the inner, non-ink pixels of `mask`."""
    inner = erode(mask, 3) & (channel_max(rgb) > INK_MAX)
    if inner.sum() < 16:
        return None
    px = rgb[inner].astype(float)
    lum = px @ np.array([0.299, 0.587, 0.114])
    p10, p90 = np.percentile(lum, [10, 90])
    return (*np.median(px, axis=0), float(p90 - p10))


@lru_cache(maxsize=2048)
def _reference(shape: str, w: int, h: int, material: str, pitch: int,
               around: tuple[int, int, int]) -> tuple[float, ...] | None:
    if w < 4 or h < 4:
        return None
    tile = render(shape, w, h, (128, 128, 128), 2, pitch,
                  [partial(paint_material, material=material)])
    px = np.asarray(tile).astype(float)
    alpha = px[..., 3:] / 255
    over = px[..., :3] * alpha + np.array(around, float) * (1 - alpha)
    return summary(over.round().astype(np.uint8), px[..., 3] > 0)

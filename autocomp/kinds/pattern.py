"""`pattern`: a surface texture (stripes, dots, checks; synth/shapes.py pattern_mask), in a
tone of the object's own color (light grey on dark colors, dark grey on light ones).

Read back from the pixels in that tone inside the blob, their connected pieces (those at
least 0.7 x the biggest: whole ones, not cut by the edge): long thin pieces are stripes,
square ones checks, round ones dots (median elongation >= 2; else median box fill >=
0.88); under 1.5% of the blob or no piece: "plain". A texture with no room to show is
recorded by the generator (the image's attribute check is then expected to fail)."""

from __future__ import annotations

import numpy as np

from autocomp.core.pixel_minmax import channel_max
from autocomp.kinds.base import ValueKind
from autocomp.synth.shapes import (
    MIN_PATTERN_SHARE,
    PATTERNS,
    paint_pattern,
    pattern_pitch,
    pattern_tone,
)


class Pattern(ValueKind):
    example = "textures"  # the built-in vocabulary its contract draws
    name, noun, question = "pattern", "pattern", "What pattern is on the surface of the {object}?"
    look = {"pattern": None}
    drawn_as, choices = "textures", PATTERNS
    min_side = 256  # at 128 px "checkered" was read wrong 33 of 52 times (issue 53)
    paint_order = 20  # over a material

    def paint(self, pixels, look, surface):
        return paint_pattern(pixels, surface, look["pattern"])

    def read(self, image, question, subject, detections):
        from autocomp.validators.pixels import dominant_color

        rgb = dominant_color(image, subject.mask)
        found, evidence = read_pattern(image, subject.mask, rgb)
        named = [name for name, p in question.hints.items() if p == found]
        return {"answer": named[0] if named else "plain", "evidence": evidence}


def read_pattern(image: np.ndarray, mask: np.ndarray, rgb) -> tuple[str | None, dict]:
    """(stripes | dots | checks | None, evidence) of the blob `mask` of color `rgb`."""
    from scipy import ndimage

    tone = np.array(pattern_tone(rgb))
    pixels = image[..., :3].astype(np.int16)
    in_tone = (channel_max(np.abs(pixels - tone)) <= 8) & np.asarray(mask, bool)
    share = float(in_tone.sum() / max(1, np.asarray(mask, bool).sum()))
    comps, count = ndimage.label(in_tone)
    pieces = []
    for k, sl in enumerate(ndimage.find_objects(comps), start=1):
        h, w = sl[0].stop - sl[0].start, sl[1].stop - sl[1].start
        area = int((comps[sl] == k).sum())
        if area >= 4:
            pieces.append((max(w, h) / min(w, h), area / (w * h), area, min(w, h), max(w, h)))
    evidence = {"share": round(share, 3), "pieces": len(pieces)}
    if share < MIN_PATTERN_SHARE or not pieces:
        return None, evidence
    biggest = max(p[2] for p in pieces)  # pieces the blob's edge cut are left out
    pieces = [p for p in pieces if p[2] >= 0.7 * biggest]
    elongation = float(np.median([p[0] for p in pieces]))
    fill = float(np.median([p[1] for p in pieces]))
    thin, long = float(np.median([p[3] for p in pieces])), max(p[4] for p in pieces)
    evidence.update(elongation=round(elongation, 2), fill=round(fill, 2))
    # the drawn sizes at the canvas's pitch (synth/shapes.py pattern_mask): a stripe is
    # `band` thick; a check `side` square; a dot `across` wide. The generator keeps a dot or
    # square only where 3/4 of it fits, so a kept one is never as thin as a band, and a dot
    # larger than a check is never cut down to a check's size.
    pitch = pattern_pitch(max(image.shape[:2]))
    band = max(2, round(0.3 * pitch))
    side, across = round(0.5 * pitch) | 1, round(0.6 * pitch) | 1
    if elongation >= 2 or (thin <= band and elongation > 1):
        return "stripes", evidence
    if across > side:  # dots and checks differ in size here: the size decides
        return ("dots" if long > side else "checks"), evidence
    return ("checks" if fill >= 0.88 else "dots"), evidence

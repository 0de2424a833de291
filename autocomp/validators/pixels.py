"""`pixels`: the embedded answerer. It reads the answer to a binding question off the image
and the detector's blobs, for procedural and other clean images.

  attribute  color: the object's blob, its outline peeled off (2 erosions), pixels binned
             to 32 levels per channel; the mean color of the most common bin, named by the
             nearest vocabulary color (RGB distance).
             size word: the blob box's longer side over the canvas side, divided by the
             side the procedural generator gives an unmarked object; the nearest scale in
             log terms among the vocabulary's and 1 ("medium", not a choice).
             texture: the pixels in the pattern tone the generator uses on the object's
             color (light grey on dark colors, dark grey on light ones), their connected
             pieces (those at least 0.7 x the biggest: whole ones, not cut by the edge):
             long thin pieces are stripes, square ones checks, round ones dots (median
             elongation >= 2; else median box fill >= 0.88); under 1.5% of the blob or no
             piece: "plain".
             material: validators/materials.py (the blob's inner color and spread, beside
             each material rendered on the same shape and size over what surrounds it).
  relation   the two objects' boxes. Spatial (dx, dy): GenEval's rule: the centre offset,
             each coordinate shrunk by 0.1 x the sum of the box sizes, divided by the
             offset's length; a relation holds when its component exceeds 0.5, and the
             answer is the relation with the largest such component. Size: box-area ratio
             above 1.25 is "larger", below 0.8 is "smaller". Depth: the nearer object
             stands lower (its base by half the pair's mean height) and is larger (area
             ratio 1.2), synth/layout.py's depth_sign; cues that disagree read "unknown".
  count      the number of blobs named as the object, named by the numeral of that count
             (its digits when no numeral of the vocabulary has it).
An object the detector did not find exactly once gets the answer "unknown" (except count).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from autocomp.concepts.questions import Question
from autocomp.core.backend import Backend
from autocomp.synth.layout import (
    depth_sign,
    drawn_scale,
    nearest_scale,
    relation_component,
    size_ratio,
)
from autocomp.synth.shapes import MIN_PATTERN_SHARE, pattern_pitch, pattern_tone
from autocomp.validators.base import Detection

SIZE_LARGER = 1.25
UNKNOWN = "unknown"


READABLE = ("rgb", "scale", "pattern", "material", "count")  # entry fields it can read


class PixelAnswerer(Backend):
    @classmethod
    def cannot_handle(cls, task, options: dict | None = None) -> str | None:
        """It reads only what an entry says how to see: a color, size word, pattern,
        material or count, or a relation's geometry."""
        for primitive, vocab in task.primitive_vocabularies():  # "A" or "R"
            relation = primitive == "R"
            for e in vocab.entries:
                if relation and not e.geometry:
                    return (f"relation '{e.name}' of vocabulary '{vocab.name}' has no geometry "
                            "to read (use a VQA answerer)")
                if not relation and all(getattr(e, f) is None for f in READABLE):
                    return (f"value '{e.name}' of vocabulary '{vocab.name}' has no rgb, scale, "
                            "pattern, material or count to read (use a VQA answerer)")
        return None

    def answer(self, image: np.ndarray, questions: Sequence[Question],
               detections: Sequence[Detection]) -> list[dict]:
        """One {"answer", "evidence"} per question."""
        return [self._one(image, q, detections) for q in questions]

    def _one(self, image, q: Question, detections) -> dict:
        if q.reads == "count":
            return _count(q, detections)
        subject = _find(detections, q.subject)
        if subject is None:
            return {"answer": UNKNOWN, "evidence": {"why": f"no single '{q.subject}' blob"}}
        return READERS[q.reads](image, q, subject, detections)


def _scale(image, q: Question, subject: Detection, detections) -> dict:
    scale = drawn_scale(subject.box, max(image.shape[:2]))
    return {"answer": nearest_scale(scale, q.hints), "evidence": {
        "scale": round(scale, 3), "box": list(subject.box)}}


def _pattern(image, q: Question, subject: Detection, detections) -> dict:
    rgb = dominant_color(image, subject.mask)
    found, evidence = read_pattern(image, subject.mask, rgb)
    named = [name for name, p in q.hints.items() if p == found]
    return {"answer": named[0] if named else "plain", "evidence": evidence}


def _material(image, q: Question, subject: Detection, detections) -> dict:
    from autocomp.validators.materials import read_material

    found, evidence = read_material(image, subject.label, subject.mask, subject.box)
    named = [name for name, m in q.hints.items() if m == found]
    return {"answer": named[0] if named else UNKNOWN, "evidence": evidence}


def _count(q: Question, detections) -> dict:
    """How many blobs carry the object's name, named by the numeral of that count."""
    found = sum(d.label == q.subject for d in detections)
    named = [name for name, count in q.hints.items() if count == found]
    return {"answer": named[0] if named else str(found), "evidence": {"count": found}}


def _none(image, q: Question, subject: Detection, detections) -> dict:
    return {"answer": UNKNOWN, "evidence": {
        "why": "no pixel reading for this attribute (its entries have no rgb, scale, "
               "pattern or material): use a VQA answerer"}}


def _color(image, q: Question, subject: Detection, detections) -> dict:
    rgb = dominant_color(image, subject.mask)
    name = nearest(rgb, q.hints)
    return {"answer": name, "evidence": {"rgb": list(rgb), "box": list(subject.box)}}


def _relation(image, q: Question, subject: Detection, detections) -> dict:
    other = _find(detections, q.object)
    if other is None:
        return {"answer": UNKNOWN, "evidence": {"why": f"no single '{q.object}' blob"}}
    return {"answer": read_relation(subject.box, other.box, q.hints),
            "evidence": {"subject_box": list(subject.box), "object_box": list(other.box)}}


READERS = {"scale": _scale, "pattern": _pattern, "color": _color, "material": _material,
           "relation": _relation, "none": _none}


def _find(detections, name) -> Detection | None:
    found = [d for d in detections if d.label == name]
    return found[0] if len(found) == 1 else None


def dominant_color(image: np.ndarray, mask: np.ndarray) -> tuple[int, int, int]:
    from scipy.ndimage import binary_erosion

    inner = binary_erosion(mask, iterations=2)
    if inner.sum() < 16:
        inner = mask
    pixels = image[inner][:, :3].astype(np.int32)
    bins = pixels // 32
    keys = bins[:, 0] * 64 + bins[:, 1] * 8 + bins[:, 2]
    top = np.bincount(keys).argmax()
    mean = pixels[keys == top].mean(axis=0)
    return tuple(int(round(c)) for c in mean)


def read_pattern(image: np.ndarray, mask: np.ndarray, rgb) -> tuple[str | None, dict]:
    """(stripes | dots | checks | None, evidence) of the blob `mask` of color `rgb`."""
    from scipy import ndimage

    tone = np.array(pattern_tone(rgb))
    pixels = image[..., :3].astype(np.int16)
    in_tone = (np.abs(pixels - tone).max(axis=2) <= 8) & np.asarray(mask, bool)
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


def nearest(rgb, palette: dict) -> str:
    if not palette:
        return UNKNOWN
    return min(palette, key=lambda name: sum((a - b) ** 2 for a, b in zip(
        rgb, palette[name], strict=True)))


def read_relation(subject_box, object_box, hints: dict) -> str:
    best, best_value = UNKNOWN, 0.5
    for name, geo in hints.items():
        if "dx" in geo:
            value = relation_component(subject_box, object_box, geo["dx"], geo["dy"])
            if value > best_value:
                best, best_value = name, value
    deep = {name: geo["depth"] for name, geo in hints.items() if "depth" in geo}
    if deep and best == UNKNOWN:
        sign = depth_sign(subject_box, object_box)
        for name, d in deep.items():
            if sign and (d > 0) == (sign > 0):
                return name
    sized = {name: geo["size"] for name, geo in hints.items() if "size" in geo}
    if sized and best == UNKNOWN:
        ratio = size_ratio(subject_box, object_box)
        sign = 1 if ratio > SIZE_LARGER else -1 if ratio < 1 / SIZE_LARGER else 0
        for name, s in sized.items():
            if sign and (s > 0) == (sign > 0):
                return name
    return best

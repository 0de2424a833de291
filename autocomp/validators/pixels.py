"""`pixels`: the embedded answerer. It reads the answer to a binding question off the image
and the detector's blobs, for procedural and other clean images.

  attribute  the object's blob, its outline peeled off (2 erosions), pixels binned to 32
             levels per channel; the mean color of the most common bin, named by the
             nearest vocabulary color (RGB distance).
  relation   the two objects' boxes. Spatial (dx, dy): GenEval's rule: the centre offset,
             each coordinate shrunk by 0.1 x the sum of the box sizes, divided by the
             offset's length; a relation holds when its component exceeds 0.5, and the
             answer is the relation with the largest such component. Size: box-area ratio
             above 1.25 is "larger", below 0.8 is "smaller".
An object the detector did not find exactly once gets the answer "unknown".
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from autocomp.registry import check_options
from autocomp.synth.layout import relation_component, size_ratio
from autocomp.validators.base import Detection, Question

SIZE_LARGER = 1.25
UNKNOWN = "unknown"


class PixelAnswerer:
    OPTIONS: dict = {}

    @classmethod
    def check_options(cls, options: dict, *, file=None, field="options") -> dict:
        return check_options(options, cls.OPTIONS, file=file, field=field)

    def answer(self, image: np.ndarray, questions: Sequence[Question],
               detections: Sequence[Detection]) -> list[dict]:
        """One {"answer", "evidence"} per question."""
        return [self._one(image, q, detections) for q in questions]

    def _one(self, image, q: Question, detections) -> dict:
        subject = _find(detections, q.subject)
        if subject is None:
            return {"answer": UNKNOWN, "evidence": {"why": f"no single '{q.subject}' blob"}}
        if q.kind == "attribute":
            rgb = dominant_color(image, subject.mask)
            name = nearest(rgb, q.hints)
            return {"answer": name, "evidence": {"rgb": list(rgb), "box": list(subject.box)}}
        other = _find(detections, q.object)
        if other is None:
            return {"answer": UNKNOWN, "evidence": {"why": f"no single '{q.object}' blob"}}
        return {"answer": read_relation(subject.box, other.box, q.hints),
                "evidence": {"subject_box": list(subject.box), "object_box": list(other.box)}}


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
    sized = {name: geo["size"] for name, geo in hints.items() if "size" in geo}
    if sized and best == UNKNOWN:
        ratio = size_ratio(subject_box, object_box)
        sign = 1 if ratio > SIZE_LARGER else -1 if ratio < 1 / SIZE_LARGER else 0
        for name, s in sized.items():
            if sign and (s > 0) == (sign > 0):
                return name
    return best

"""`pixels`: the embedded answerer. It reads the answer to a binding question off the image
and the detector's blobs, for procedural and other clean images.

  attribute  read by the value kind drawing the vocabulary's entries (autocomp/kinds/):
             color: the blob's dominant color named by the nearest vocabulary color;
             size word: the blob's longer side against an unmarked object's; texture:
             the pieces in the pattern's tone; material: validators/materials.py;
             count: the number of blobs named as the object.
  relation   the two objects' boxes, read by each geometry kind of the vocabulary in the
             registry's order until one names a relation: spatial (dx, dy): GenEval's
             rule, the relation with the largest component above 0.5; relative size: box
             area ratio above 1.25 is "larger", below 0.8 "smaller"; depth: the nearer
             object stands lower and is larger; otherwise "unknown".
  presence   "Is there a cube?" (t2i's object questions): yes when the detector found one.
An object the detector did not find exactly once gets the answer "unknown" (except count).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from autocomp.concepts import drawable
from autocomp.concepts.questions import Question
from autocomp.core.backend import Backend
from autocomp.core.families import contract_example
from autocomp.language.grammar import join
from autocomp.validators.base import Detection

UNKNOWN = "unknown"


@contract_example()
class PixelAnswerer(Backend):
    gpu_cost = "none"  # runs on the CPU (core/backend.Backend.gpu_cost)

    @classmethod
    def cannot_handle(cls, task, options: dict | None = None) -> str | None:
        """It reads only what a kind draws: an attribute entry's value kind (a color,
        size word, pattern, material or count), or a relation's geometry."""
        for primitive, vocab in task.primitive_vocabularies():  # "A" or "R"
            relation = primitive == "R"
            for e in vocab.entries:
                if relation and not e.geometry:
                    return (f"relation '{e.name}' of vocabulary '{vocab.name}' has no geometry "
                            "to read (use a VQA answerer)")
                if not relation and e.drawn_by is None:
                    return (f"value '{e.name}' of vocabulary '{vocab.name}' has no "
                            f"{join(drawable.value_fields(), 'or')} to read (use a VQA "
                            "answerer)")
        return None

    def answer(self, image: np.ndarray, questions: Sequence[Question],
               detections: Sequence[Detection]) -> list[dict]:
        """One {"answer", "evidence"} per question."""
        return [self._one(image, q, detections) for q in questions]

    def _one(self, image, q: Question, detections) -> dict:
        if q.reads == "presence":  # "Is there a cube?": whether the detector found one
            found = sum(d.label == q.subject for d in detections)
            return {"answer": "yes" if found else "no", "evidence": {"found": found}}
        kind = None if q.reads in ("relation", "none") else drawable.kind(q.reads)
        subject = None
        if kind is None or kind.needs_blob:
            subject = _find(detections, q.subject)
            if subject is None:
                return {"answer": UNKNOWN, "evidence": {"why": f"no single '{q.subject}' blob"}}
        if kind is not None:
            return kind.read(image, q, subject, detections)
        if q.reads == "none":
            return {"answer": UNKNOWN, "evidence": {
                "why": "no pixel reading for this attribute (its entries have no "
                       f"{join(drawable.value_fields(), 'or')}): use a VQA answerer"}}
        other = _find(detections, q.object)
        if other is None:
            return {"answer": UNKNOWN, "evidence": {"why": f"no single '{q.object}' blob"}}
        return {"answer": read_relation(subject.box, other.box, q.hints),
                "evidence": {"subject_box": list(subject.box), "object_box": list(other.box)}}


def _find(detections, name) -> Detection | None:
    found = [d for d in detections if d.label == name]
    return found[0] if len(found) == 1 else None


def dominant_color(image: np.ndarray, mask: np.ndarray) -> tuple[int, int, int]:
    from autocomp.core.masks import erode

    inner = erode(mask, 2)
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
    """The relation of `hints` (name -> geometry) the two boxes show: each geometry kind
    among them, in the registry's order, reads its own until one names a relation."""
    by_kind: dict = {}
    for name, geo in hints.items():
        kind = drawable.geometry_kind(geo)
        if kind is not None:
            by_kind.setdefault(kind.name, {})[name] = geo
    for kind in drawable.kinds("relations"):
        if kind.name in by_kind:
            found = kind.read(subject_box, object_box, by_kind[kind.name])
            if found is not None:
                return found
    return UNKNOWN

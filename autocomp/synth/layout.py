"""Where the procedural generator puts each object so the concept's relations hold.

Boxes are (x0, y0, x1, y1) in pixels, image coordinates (y down). Each relation's
geometry kind (autocomp/kinds/) says how it is placed and when it holds: spatial relations
by the GenEval rule (`relation_component`) with a margin; relative size by box area
(`size_ratio`); depth by the two monocular cues of a ground plane. The same kinds are
what the `pixels` answerer reads back with.
"""

from __future__ import annotations

import math
import random

from autocomp.concepts import drawable
from autocomp.core.errors import AutocompError
from autocomp.synth.shapes import SHAPES

POSITION_THRESHOLD = 0.1  # GenEval: offsets shrink by 0.1 x the sum of the box sizes


class LayoutError(AutocompError):
    """No placement of the objects makes every relation hold (one line: what could not
    be placed; the generator adds the task and concept)."""

    def __init__(self, names, relations, tries: int, where: str = ""):
        said = "; ".join(f"{names[s]} {p} {names[o]}" for s, p, o in relations) or "no relation"
        super().__init__(f"no layout {where + ' ' if where else ''}found for "
                         f"{', '.join(names)} ({said}) after {tries:,} tries")


def center(box):
    return ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)


def relation_component(subject_box, object_box, dx: float, dy: float) -> float:
    """GenEval's normalised offset of the subject from the object, along (dx, dy).

    offset = centre(subject) - centre(object); each coordinate shrinks towards 0 by 0.1 x
    the sum of the two boxes' sizes along it; the result is divided by |offset|. A relation
    with direction (dx, dy) holds when this component exceeds 0.5.
    """
    (sx, sy), (ox, oy) = center(subject_box), center(object_box)
    off = (sx - ox, sy - oy)
    norm = math.hypot(*off)
    if norm == 0:
        return 0.0
    dims = ((subject_box[2] - subject_box[0]) + (object_box[2] - object_box[0]),
            (subject_box[3] - subject_box[1]) + (object_box[3] - object_box[1]))
    revised = [math.copysign(max(abs(o) - POSITION_THRESHOLD * d, 0.0), o)
               for o, d in zip(off, dims, strict=True)]
    if all(abs(r) < 1e-3 for r in revised):
        return 0.0
    return (revised[0] * dx + revised[1] * dy) / norm


def area(box) -> float:
    return max(0.0, box[2] - box[0]) * max(0.0, box[3] - box[1])


def size_ratio(subject_box, object_box) -> float:
    return area(subject_box) / max(area(object_box), 1e-9)


UNMARKED_SIDE = 0.22  # an object without a size word: its longer side over the canvas side


def drawn_scale(box, canvas: int) -> float:
    """A box's longer side relative to an unmarked object's on a canvas of this side."""
    return max(box[2] - box[0], box[3] - box[1]) / (canvas * UNMARKED_SIDE)


def nearest_scale(scale: float, scales: dict) -> str:
    """The size word (name -> scale) nearest `scale` in log terms, or "medium" (scale 1)."""
    options = {**scales, "medium": 1.0}
    return min(options, key=lambda name: abs(math.log(max(scale, 1e-6) / options[name])))


def overlaps(a, b, gap: float) -> bool:
    return not (a[2] + gap <= b[0] or b[2] + gap <= a[0] or a[3] + gap <= b[1]
                or b[3] + gap <= a[1])


def box_size(name: str, height: float, size: int) -> tuple[float, float]:
    """Width and height of a shape `height` pixels high, shrunk to fit 40% of the canvas."""
    w, h = SHAPES[name].aspect * height, height
    scale = min(1.0, 0.4 * size / w, 0.4 * size / h)
    return w * scale, h * scale


def layout(names, relations, geometry: dict, size: int, rng: random.Random,
           tries: int = 2000, heights=None,
           shrink: bool = True) -> list[tuple[int, int, int, int]]:
    """Boxes for the objects `names` such that every (subject, predicate, object) in
    `relations` holds; `geometry` maps a predicate to its geometry. `heights` fixes the
    objects' heights (else drawn, with size relations' ratios); without `shrink` they are
    kept exactly (a scene's size words) and only placements are retried. A kind with its
    own layout (depth) places every object itself."""
    gap = 0.04 * size
    kinds = {r[1]: drawable.geometry_kind(geometry[r[1]]) for r in relations}
    own = next((k for k in kinds.values() if k.own_layout), None)
    if own is not None:
        return own.layout(names, relations, geometry, size, rng, tries)
    if heights is None:
        heights = _heights(names, relations, geometry, size, rng, kinds)
    heights = list(heights)
    placed = [r for r in relations if kinds[r[1]].places]
    for _ in range(tries):
        dims = [box_size(n, h, size) for n, h in zip(names, heights, strict=True)]
        centres = _centres(dims, placed, geometry, size, rng, kinds)
        if centres is None:
            continue
        boxes = [(cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
                 for (cx, cy), (w, h) in zip(centres, dims, strict=True)]
        xs = [b[0] for b in boxes] + [b[2] for b in boxes]
        ys = [b[1] for b in boxes] + [b[3] for b in boxes]
        span_x, span_y = max(xs) - min(xs), max(ys) - min(ys)
        pad = 4
        if span_x > size - 2 * pad or span_y > size - 2 * pad:
            if shrink:
                heights = [h * 0.97 for h in heights]
            continue
        tx = rng.uniform(pad, size - pad - span_x) - min(xs)
        ty = rng.uniform(pad, size - pad - span_y) - min(ys)
        boxes = [(round(b[0] + tx), round(b[1] + ty), round(b[2] + tx), round(b[3] + ty))
                 for b in boxes]
        if any(overlaps(a, b, gap) for i, a in enumerate(boxes) for b in boxes[i + 1:]):
            continue
        if all(holds(boxes, r, geometry, kinds) for r in relations):
            return boxes
    raise LayoutError(names, relations, tries)


def holds(boxes, relation, geometry, kinds=None) -> bool:
    """Whether the drawn boxes show the relation (subject, predicate, object)."""
    s, pred, o = relation
    kind = (kinds or {}).get(pred) or drawable.geometry_kind(geometry[pred])
    return kind.holds(boxes[s], boxes[o], geometry[pred])


def _heights(names, relations, geometry, size, rng, kinds) -> list[float]:
    """Object heights; a relation's kind may fix its pair's (relative size: the box-area
    ratio)."""
    heights = [rng.uniform(0.2, 0.3) * size for _ in names]
    for s, pred, o in relations:
        kinds[pred].heights(heights, s, o, geometry[pred], names, rng)
    # the largest side of any box at most 38% of the canvas, so box_size never clamps and
    # the size ratios stay exact
    top = max(max(SHAPES[n].aspect, 1.0) * h for n, h in zip(names, heights, strict=True))
    scale = min(1.0, 0.38 * size / top)
    return [h * scale for h in heights]


def _centres(dims, placed, geometry, size, rng, kinds):
    """Centres relative to object 0, each relation placing its object from its subject
    (or its subject from its object) as its kind places."""
    centres = {0: (0.0, 0.0)}
    pending = list(placed)
    while pending:
        progressed = False
        for rel in list(pending):
            s, pred, o = rel
            if s in centres and o not in centres:
                base, sign, other = centres[s], -1, o
            elif o in centres and s not in centres:
                base, sign, other = centres[o], 1, s
            elif s in centres and o in centres:
                pending.remove(rel)
                continue
            else:
                continue
            centres[other] = kinds[pred].place(base, sign, dims[s], dims[o], geometry[pred],
                                               size, rng)
            pending.remove(rel)
            progressed = True
        if not progressed and pending:  # another tree of a forest: root it anywhere
            s = pending[0][0]
            centres[s] = (rng.uniform(-0.5, 0.5) * size, rng.uniform(-0.5, 0.5) * size)
    for i in range(len(dims)):  # objects no spatial relation reaches: anywhere
        if i not in centres:
            centres[i] = (rng.uniform(-0.5, 0.5) * size, rng.uniform(-0.5, 0.5) * size)
    return [centres[i] for i in range(len(dims))]


def box_at(centre, w, h):
    """The integer box of width w and height h around `centre`."""
    cx, cy = centre
    return (round(cx - w / 2), round(cy - h / 2), round(cx - w / 2) + round(w),
            round(cy - h / 2) + round(h))


def box_dims(b):
    return b[2] - b[0], b[3] - b[1]


def trade_places(box_s, box_o):
    """Two boxes after their objects trade places, each keeping its own size."""
    return box_at(center(box_o), *box_dims(box_s)), box_at(center(box_s), *box_dims(box_o))

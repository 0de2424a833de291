"""Where the procedural generator puts each object so the concept's relations hold.

Boxes are (x0, y0, x1, y1) in pixels, image coordinates (y down). Spatial relations hold
by the GenEval rule (`relation_component`) with a margin; relative size holds by box area
(`size_ratio`); depth by the two monocular cues of a ground plane (`depth_sign`): the
nearer object stands lower in the image and is drawn larger. The same functions are what
the `pixels` answerer reads back.
"""

from __future__ import annotations

import math
import random

from autocomp.synth.shapes import SHAPES

POSITION_THRESHOLD = 0.1  # GenEval: offsets shrink by 0.1 x the sum of the box sizes
MARGIN = 0.7  # the generator asks for a component above this (the check needs > 0.5)
SIZE_RATIO = (1.8, 2.4)  # box-area ratio of a "larger than" pair the generator draws


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


DEPTH_DROP = 0.5  # nearer: its base lower by half the pair's mean height, or more
DEPTH_RATIO = 1.2  # ... and its box area this many times the other's, or more


def depth_sign(subject_box, object_box) -> int:
    """+1 when the subject reads as nearer the viewer than the object (its base lower by
    DEPTH_DROP x their mean height and its area DEPTH_RATIO x larger), -1 when farther,
    0 when the cues disagree or are too weak."""
    mean_h = ((subject_box[3] - subject_box[1]) + (object_box[3] - object_box[1])) / 2
    drop = (subject_box[3] - object_box[3]) / max(mean_h, 1e-9)
    ratio = size_ratio(subject_box, object_box)
    if drop > DEPTH_DROP and ratio > DEPTH_RATIO:
        return 1
    if drop < -DEPTH_DROP and ratio < 1 / DEPTH_RATIO:
        return -1
    return 0


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
    `relations` holds; `geometry` maps a predicate to {"dx", "dy"} or {"size"}. `heights`
    fixes the objects' heights (else drawn, with size relations' ratios); without
    `shrink` they are kept exactly (a scene's size words) and only placements are retried."""
    gap = 0.04 * size
    if any("depth" in geometry[r[1]] for r in relations):
        return depth_layout(names, relations, geometry, size, rng, tries)
    if heights is None:
        heights = _heights(names, relations, geometry, size, rng)
    heights = list(heights)
    spatial = [r for r in relations if "dx" in geometry[r[1]]]
    for _ in range(tries):
        dims = [box_size(n, h, size) for n, h in zip(names, heights, strict=True)]
        centres = _centres(dims, spatial, geometry, size, rng)
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
        if all(_holds(boxes, r, geometry) for r in relations):
            return boxes
    raise RuntimeError(f"no layout found for {names} with {relations} after {tries} tries")


def depth_layout(names, relations, geometry, size, rng, tries=2000):
    """Objects on a ground plane: each relation's nearer object gets a greater depth z
    (0 far, 1 near), drawn lower (its base at 45-92% of the canvas height) and larger
    (perspective); left to right as it falls, never overlapping."""
    gap = 0.04 * size
    for _ in range(tries):
        z = {0: 0.0}
        for s, pred, o in relations:  # a chain: each relation places its next object
            step = rng.uniform(1.0, 1.4) * geometry[pred]["depth"]
            if s in z and o not in z:
                z[o] = z[s] - step
            elif o in z and s not in z:
                z[s] = z[o] + step
        lo, hi = min(z.values()), max(z.values())
        zs = [(z.get(i, lo) - lo) / ((hi - lo) or 1) for i in range(len(names))]
        boxes = []
        for name, depth in zip(names, zs, strict=True):
            h = size * (0.14 + 0.16 * depth) * rng.uniform(0.95, 1.05)
            w, h = box_size(name, h / max(SHAPES[name].aspect, 1.0), size)
            bottom = size * (0.45 + 0.47 * depth) + rng.uniform(-0.02, 0.02) * size
            x0 = rng.uniform(4, size - 4 - w)
            boxes.append((round(x0), round(bottom - h), round(x0 + w), round(bottom)))
        if any(b[1] < 4 or b[3] > size - 4 for b in boxes):
            continue
        if any(overlaps(a, b, gap) for i, a in enumerate(boxes) for b in boxes[i + 1:]):
            continue
        if all(_holds(boxes, r, geometry) for r in relations):
            return boxes
    raise RuntimeError(f"no depth layout found for {names} with {relations}")


def _holds(boxes, relation, geometry) -> bool:
    s, pred, o = relation
    g = geometry[pred]
    if "depth" in g:
        return depth_sign(boxes[s], boxes[o]) == (1 if g["depth"] > 0 else -1)
    if "dx" in g:
        return relation_component(boxes[s], boxes[o], g["dx"], g["dy"]) > MARGIN
    ratio = size_ratio(boxes[s], boxes[o])
    return ratio > SIZE_RATIO[0] * 0.9 if g["size"] > 0 else ratio < 1 / (SIZE_RATIO[0] * 0.9)


def _heights(names, relations, geometry, size, rng) -> list[float]:
    """Object heights; a size relation fixes the box-area ratio of its pair."""
    heights = [rng.uniform(0.2, 0.3) * size for _ in names]
    for s, pred, o in relations:
        g = geometry[pred]
        if "size" not in g:
            continue
        ratio = rng.uniform(*SIZE_RATIO) if g["size"] > 0 else 1 / rng.uniform(*SIZE_RATIO)
        # area(s) = ratio * area(o); area = aspect * h^2
        a_s, a_o = SHAPES[names[s]].aspect, SHAPES[names[o]].aspect
        heights[o] = heights[s] * math.sqrt(a_s / (ratio * a_o))
    # the largest side of any box at most 38% of the canvas, so box_size never clamps and
    # the size ratios stay exact
    top = max(max(SHAPES[n].aspect, 1.0) * h for n, h in zip(names, heights, strict=True))
    scale = min(1.0, 0.38 * size / top)
    return [h * scale for h in heights]


def _centres(dims, spatial, geometry, size, rng):
    """Centres relative to object 0, each relation placing its object from its subject."""
    centres = {0: (0.0, 0.0)}
    pending = list(spatial)
    while pending:
        progressed = False
        for rel in list(pending):
            s, pred, o = rel
            g = geometry[pred]
            dx, dy = g["dx"], g["dy"]
            if s in centres and o not in centres:
                base, sign, other = centres[s], -1, o
            elif o in centres and s not in centres:
                base, sign, other = centres[o], 1, s
            elif s in centres and o in centres:
                pending.remove(rel)
                continue
            else:
                continue
            ws, hs = dims[s]
            wo, ho = dims[o]
            reach = (abs(dx) * (ws + wo) + abs(dy) * (hs + ho)) / 2
            dist = reach + rng.uniform(0.08, 0.22) * size
            jitter = rng.uniform(-0.25, 0.25) * size
            cx = base[0] + sign * dx * dist + (dy != 0) * jitter
            cy = base[1] + sign * dy * dist + (dx != 0) * jitter
            centres[other] = (cx, cy)
            pending.remove(rel)
            progressed = True
        if not progressed and pending:  # another tree of a forest: root it anywhere
            s = pending[0][0]
            centres[s] = (rng.uniform(-0.5, 0.5) * size, rng.uniform(-0.5, 0.5) * size)
    for i in range(len(dims)):  # objects no spatial relation reaches: anywhere
        if i not in centres:
            centres[i] = (rng.uniform(-0.5, 0.5) * size, rng.uniform(-0.5, 0.5) * size)
    return [centres[i] for i in range(len(dims))]


def trade_boxes(box_s, box_o, name_s, name_o, what: str):
    """Two boxes after their objects trade places (keeping their own sizes) or sizes
    (keeping their own places, each taking the other's box area)."""
    def at(centre, w, h):
        cx, cy = centre
        return (round(cx - w / 2), round(cy - h / 2), round(cx - w / 2) + round(w),
                round(cy - h / 2) + round(h))

    def dims(b):
        return b[2] - b[0], b[3] - b[1]

    def centre(b):
        return (b[0] + b[2]) / 2, (b[1] + b[3]) / 2

    if what == "places":
        return at(centre(box_o), *dims(box_s)), at(centre(box_s), *dims(box_o))
    if what == "depths":  # each stands where the other stood, at the other's height
        def stand(box, name, side):  # `side`: the longer side, on the box's base
            a = SHAPES[name].aspect
            w, h = (side, side / a) if a >= 1 else (side * a, side)
            return at(((box[0] + box[2]) / 2, box[3] - h / 2), w, h)

        side_s, side_o = max(dims(box_s)), max(dims(box_o))
        return stand(box_o, name_s, side_o), stand(box_s, name_o, side_s)
    (ws, hs), (wo, ho) = dims(box_s), dims(box_o)
    new_hs = math.sqrt(wo * ho / SHAPES[name_s].aspect)
    new_ho = math.sqrt(ws * hs / SHAPES[name_o].aspect)
    return (at(centre(box_s), SHAPES[name_s].aspect * new_hs, new_hs),
            at(centre(box_o), SHAPES[name_o].aspect * new_ho, new_ho))

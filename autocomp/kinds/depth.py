"""Depth (`geometry: {depth: +1 | -1}`, +1 when the subject is nearer the viewer): the
two monocular cues of a ground plane. The nearer object stands lower in the image (its
base lower by DEPTH_DROP x the pair's mean height) and is drawn larger (its area
DEPTH_RATIO x the other's); cues that disagree or are too weak read as neither. The
generator lays every object of a depth concept out on its own ground plane, so a
vocabulary cannot mix depth with other relations; the swap fault makes the pair trade
where they stand, each at the other's height."""

from __future__ import annotations

from autocomp.kinds.base import GeometryKind

DEPTH_DROP = 0.5  # nearer: its base lower by half the pair's mean height, or more
DEPTH_RATIO = 1.2  # ... and its box area this many times the other's, or more


def depth_sign(subject_box, object_box) -> int:
    """+1 when the subject reads as nearer the viewer than the object, -1 when farther,
    0 when the cues disagree or are too weak."""
    from autocomp.synth.layout import size_ratio

    mean_h = ((subject_box[3] - subject_box[1]) + (object_box[3] - object_box[1])) / 2
    drop = (subject_box[3] - object_box[3]) / max(mean_h, 1e-9)
    ratio = size_ratio(subject_box, object_box)
    if drop > DEPTH_DROP and ratio > DEPTH_RATIO:
        return 1
    if drop < -DEPTH_DROP and ratio < 1 / DEPTH_RATIO:
        return -1
    return 0


class Depth(GeometryKind):
    example = "depth"  # the built-in vocabulary its contract draws
    name, noun = "depth", "depth"
    question = "Is the {subject} in front of or behind the {object}?"
    keys = ("depth",)
    traded = "depths"
    own_layout = True
    described = "depth"

    def holds(self, box_s, box_o, g):
        return depth_sign(box_s, box_o) == (1 if g["depth"] > 0 else -1)

    def read(self, box_s, box_o, hints):
        sign = depth_sign(box_s, box_o)
        for name, g in hints.items():
            if sign and (g["depth"] > 0) == (sign > 0):
                return name
        return None

    def layout(self, names, relations, geometry, size, rng, tries):
        """Objects on a ground plane: each relation's nearer object gets a greater depth z
        (0 far, 1 near), drawn lower (its base at 45-92% of the canvas height) and larger
        (perspective); left to right as it falls, never overlapping."""
        from autocomp.synth.layout import LayoutError, box_size, holds, overlaps
        from autocomp.synth.shapes import SHAPES

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
            if all(holds(boxes, r, geometry) for r in relations):
                return boxes
        raise LayoutError(names, relations, tries, "on a ground plane")

    def trade(self, box_s, box_o, name_s, name_o):
        """Each stands where the other stood, at the other's height (its longer side)."""
        from autocomp.synth.layout import box_at, box_dims
        from autocomp.synth.shapes import SHAPES

        def stand(box, name, side):  # `side`: the longer side, on the box's base
            a = SHAPES[name].aspect
            w, h = (side, side / a) if a >= 1 else (side * a, side)
            return box_at(((box[0] + box[2]) / 2, box[3] - h / 2), w, h)

        side_s, side_o = max(box_dims(box_s)), max(box_dims(box_o))
        return stand(box_o, name_s, side_o), stand(box_s, name_o, side_s)

"""Relative size (`geometry: {size: +1 | -1}`, the sign of log(area subject / area
object)): the generator draws the pair's box areas SIZE_RATIO apart (and checks 0.9 x its
lower end); the reader calls an area ratio above SIZE_LARGER "larger", below its inverse
"smaller". The swap fault trades the pair's sizes, each keeping its place."""

from __future__ import annotations

import math

from autocomp.kinds.base import GeometryKind

SIZE_RATIO = (1.8, 2.4)  # box-area ratio of a "larger than" pair the generator draws
SIZE_LARGER = 1.25  # the reader's threshold


class RelativeSize(GeometryKind):
    example = "sizes"  # the built-in vocabulary its contract draws
    name, noun = "relative_size", "relative size"
    question = "Is the {subject} larger or smaller than the {object}?"
    keys = ("size",)
    traded = "sizes"
    described = "size"

    def holds(self, box_s, box_o, g):
        from autocomp.synth.layout import size_ratio

        ratio = size_ratio(box_s, box_o)
        return ratio > SIZE_RATIO[0] * 0.9 if g["size"] > 0 else ratio < 1 / (SIZE_RATIO[0] * 0.9)

    def read(self, box_s, box_o, hints):
        from autocomp.synth.layout import size_ratio

        ratio = size_ratio(box_s, box_o)
        sign = 1 if ratio > SIZE_LARGER else -1 if ratio < 1 / SIZE_LARGER else 0
        for name, g in hints.items():
            if sign and (g["size"] > 0) == (sign > 0):
                return name
        return None

    def heights(self, heights, s, o, g, names, rng):
        from autocomp.synth.shapes import SHAPES

        ratio = rng.uniform(*SIZE_RATIO) if g["size"] > 0 else 1 / rng.uniform(*SIZE_RATIO)
        # area(s) = ratio * area(o); area = aspect * h^2
        a_s, a_o = SHAPES[names[s]].aspect, SHAPES[names[o]].aspect
        heights[o] = heights[s] * math.sqrt(a_s / (ratio * a_o))

    def trade(self, box_s, box_o, name_s, name_o):
        """Each keeps its place and takes the other's box area."""
        from autocomp.synth.layout import box_at, box_dims, center
        from autocomp.synth.shapes import SHAPES

        (ws, hs), (wo, ho) = box_dims(box_s), box_dims(box_o)
        new_hs = math.sqrt(wo * ho / SHAPES[name_s].aspect)
        new_ho = math.sqrt(ws * hs / SHAPES[name_o].aspect)
        return (box_at(center(box_s), SHAPES[name_s].aspect * new_hs, new_hs),
                box_at(center(box_o), SHAPES[name_o].aspect * new_ho, new_ho))

"""Spatial relations (`geometry: {dx, dy}`, the direction from the object's centre to the
subject's, x right, y down), GenEval's rule: the centre offset, each coordinate shrunk by
0.1 x the sum of the box sizes along it, divided by the offset's length; a relation holds
when its component along (dx, dy) exceeds 0.5. The generator asks for MARGIN; the reader
names the relation with the largest component above 0.5."""

from __future__ import annotations

from autocomp.kinds.base import GeometryKind

MARGIN = 0.7  # the generator asks for a component above this (the check needs > 0.5)


class Spatial(GeometryKind):
    example = "relations"  # the built-in vocabulary its contract draws
    name, noun = "spatial", "spatial"
    question = "Where is the {subject} relative to the {object}?"
    keys = ("dx", "dy")
    places = in_scenes = True
    described = "a direction (dx, dy)"

    def parse(self, raw, fail):
        if set(raw) != {"dx", "dy"}:
            raise fail("field 'geometry' needs dx and dy together (a direction)")
        return raw

    def holds(self, box_s, box_o, g):
        from autocomp.synth.layout import relation_component

        return relation_component(box_s, box_o, g["dx"], g["dy"]) > MARGIN

    def read(self, box_s, box_o, hints):
        from autocomp.synth.layout import relation_component

        best, best_value = None, 0.5
        for name, g in hints.items():
            value = relation_component(box_s, box_o, g["dx"], g["dy"])
            if value > best_value:
                best, best_value = name, value
        return best

    def place(self, base, sign, dims_s, dims_o, g, size, rng):
        dx, dy = g["dx"], g["dy"]
        (ws, hs), (wo, ho) = dims_s, dims_o
        reach = (abs(dx) * (ws + wo) + abs(dy) * (hs + ho)) / 2
        dist = reach + rng.uniform(0.08, 0.22) * size
        jitter = rng.uniform(-0.25, 0.25) * size
        return (base[0] + sign * dx * dist + (dy != 0) * jitter,
                base[1] + sign * dy * dist + (dx != 0) * jitter)

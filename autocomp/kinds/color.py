"""`rgb`: a color. Drawn as the object's fill; read as the mean color of the most common
32-level bin of the blob's inner pixels (outline peeled off), named by the nearest
vocabulary color (RGB distance)."""

from __future__ import annotations

from autocomp.kinds.base import ValueKind


class Color(ValueKind):
    example = "colors"  # the built-in vocabulary its contract draws
    name, noun, question = "rgb", "color", "What color is the {object}?"
    look = {"color": None, "rgb": None}
    colors = True
    drawn_as = "colors"

    def parse(self, raw, fail):
        if not (isinstance(raw, list) and len(raw) == 3 and all(
                isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= 255 for c in raw)):
            raise fail(f"field 'rgb' must be three integers 0-255, got {raw!r}")
        return tuple(raw)

    def draw(self, look, name, value):
        look["color"], look["rgb"] = name, value

    def read(self, image, question, subject, detections):
        from autocomp.validators.pixels import dominant_color, nearest

        rgb = dominant_color(image, subject.mask)
        return {"answer": nearest(rgb, question.hints),
                "evidence": {"rgb": list(rgb), "box": list(subject.box)}}

    def swatch(self, value):
        return value

"""`scale`: a size word ("small" 0.65, "large" 1.45): the object drawn at this multiple of
an unmarked object's size (its longer side UNMARKED_SIDE of the canvas); read as the blob
box's longer side over an unmarked object's, named by the nearest scale in log terms among
the vocabulary's and 1 ("medium", not a choice)."""

from __future__ import annotations

from autocomp.kinds.base import ValueKind


class Scale(ValueKind):
    example = "size_words"  # the built-in vocabulary its contract draws
    name, noun = "scale", "size"
    question = "What size is the {object} compared with the other objects?"
    look = {"scale": 1.0}
    drawn_as = "size words"

    def parse(self, raw, fail):
        if (isinstance(raw, bool) or not isinstance(raw, int | float) or not 0.2 <= raw <= 3
                or raw == 1):
            raise fail(f"field 'scale' must be a number in [0.2, 3] other than 1, got {raw!r}")
        return float(raw)

    def read(self, image, question, subject, detections):
        from autocomp.synth.layout import drawn_scale, nearest_scale

        scale = drawn_scale(subject.box, max(image.shape[:2]))
        return {"answer": nearest_scale(scale, question.hints), "evidence": {
            "scale": round(scale, 3), "box": list(subject.box)}}

    def reads_after_shrink(self, name, values, box, canvas):
        from autocomp.synth.layout import drawn_scale, nearest_scale

        return nearest_scale(drawn_scale(box, canvas), values) == name

"""`count`: a numeral (1-6): how many of the object the image shows. Drawn by tasks of kind
count (synth/counts.py: each copy in its own grid cell), not on a single object; read as
the number of blobs named as the object, named by the numeral of that count (its digits
when no numeral of the vocabulary has it)."""

from __future__ import annotations

from autocomp.kinds.base import ValueKind

MAX_COUNT = 6


class Count(ValueKind):
    example = "numbers"  # the built-in vocabulary its contract draws
    name, noun, question = "count", "number", "How many {object} are there?"
    look = {"count": 1}
    alone = False
    alone_hint = " (numerals are drawn by tasks of kind count)"
    needs_blob = False
    drawn_as = "numerals"

    def parse(self, raw, fail):
        if isinstance(raw, bool) or not isinstance(raw, int) or not 1 <= raw <= MAX_COUNT:
            raise fail(f"field 'count' must be an integer 1-{MAX_COUNT}, got {raw!r}")
        return raw

    def read(self, image, question, subject, detections):
        found = sum(d.label == question.subject for d in detections)
        named = [name for name, count in question.hints.items() if count == found]
        return {"answer": named[0] if named else str(found), "evidence": {"count": found}}

    def copies(self, value):
        return value

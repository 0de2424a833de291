"""A scripted answerer of known error rates, for `autocomp judges` tests: the embedded pixel
reader's answers, each verdict turned around (the expected value answered where the reader
saw another, another where it saw the expected one) for a share of the questions set per
what the question reads (presence, rgb, relation, ...). Which questions: a hash of the
image, the question and `salt`, so the same run gives the same answers."""

from __future__ import annotations

import hashlib

from autocomp.validators.checks import names_only
from autocomp.validators.pixels import PixelAnswerer


class Scripted(PixelAnswerer):
    def __init__(self, errors: dict | None = None, salt: str = "v1"):
        self.errors = dict(errors or {})
        self.salt = salt

    def answer(self, image, questions, detections):
        got = super().answer(image, questions, detections)
        digest = hashlib.sha256(image.tobytes()).hexdigest()
        out = []
        for q, a in zip(questions, got, strict=True):
            key = f"{self.salt}:{digest}:{q.text}".encode()
            draw = int(hashlib.sha256(key).hexdigest()[:12], 16) / 16 ** 12
            if draw < self.errors.get(q.reads, 0.0):
                right = names_only(a["answer"], q.expected, q.choices)
                other = next(c for c in q.choices if c != q.expected)
                a = {"answer": other if right else q.expected, "evidence": {"scripted": True}}
            out.append(a)
        return out

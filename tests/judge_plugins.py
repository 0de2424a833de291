"""A scripted answerer of known error rates, for `autocomp judges` tests: the embedded pixel
reader's answers, each verdict turned around (the expected value answered where the reader
saw another, another where it saw the expected one) for a share of the questions set per
what the question reads (presence, rgb, relation, ...). Which questions: the k-th distinct
(image, question) of a kind asked is turned when floor((k + 1) x rate + phase) passes an
integer (`salt` sets the phase; a question asked again of the same image gets the same
answer), so each kind's share turned is its rate within one question, whatever the
images look like: no test depends on how a renderer draws."""

from __future__ import annotations

import hashlib
import math
from collections import Counter

from autocomp.validators.checks import names_only
from autocomp.validators.pixels import PixelAnswerer


class Scripted(PixelAnswerer):
    def __init__(self, errors: dict | None = None, salt: str = "v1"):
        self.errors = dict(errors or {})
        self.phase = int(hashlib.sha256(salt.encode()).hexdigest()[:8], 16) / 16 ** 8
        self.asked: Counter = Counter()
        self.turned: dict = {}  # (image digest, question) -> turned around

    def _turns(self, image, q) -> bool:
        key = (hashlib.sha256(image.tobytes()).hexdigest(), q.text, q.expected)
        if key not in self.turned:
            k, rate = self.asked[q.reads], self.errors.get(q.reads, 0.0)
            self.asked[q.reads] += 1
            self.turned[key] = (math.floor((k + 1) * rate + self.phase)
                                > math.floor(k * rate + self.phase))
        return self.turned[key]

    def answer(self, image, questions, detections):
        got = super().answer(image, questions, detections)
        out = []
        for q, a in zip(questions, got, strict=True):
            if self._turns(image, q):
                right = names_only(a["answer"], q.expected, q.choices)
                other = next(c for c in q.choices if c != q.expected)
                a = {"answer": other if right else q.expected, "evidence": {"scripted": True}}
            out.append(a)
        return out

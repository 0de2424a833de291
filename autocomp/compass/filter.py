"""The similarity filter of COMPASS's negatives (section 3.2): a negative is rejected when
its sentence-embedding similarity to the original exceeds 0.95 (N < 6) or 0.90 (N >= 6).

What is compared (`scope`), so that one word changed in a multi-sentence caption is not
hidden by the sentences around it: by default ("primitive") the edited primitive's
decomposed rendering ("There is a red cube." / "There is a blue cube."), the same test as
the decomposed pair's, so a composed negative and its matched pair stand or fall together
and one short sentence per edit is embedded (they repeat across images); "sentence" the
sentences the edit changed (the whole caption when it is one sentence, as the paper's LLM
captions are); "caption" the whole caption, the paper's rule word for word (on template
captions of several sentences it rejects nearly every relation negative at N >= 6).

Set builders are generators that yield the negatives waiting for a verdict (`Test`s) and
receive the verdicts, so a build runs many side by side and embeds every distinct sentence
of a round in one batch (`settle`).
"""

from __future__ import annotations

import re
from collections.abc import Generator
from dataclasses import dataclass

SCOPES = ("primitive", "sentence", "caption")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def threshold(n: int) -> float:
    return 0.95 if n < 6 else 0.90


def edited_sentences(a: str, b: str) -> tuple[str, str]:
    """The sentences of `a` and `b` that differ (joined, in order); the whole texts when
    they do not split into as many sentences."""
    sa, sb = _SENTENCE_END.split(a.strip()), _SENTENCE_END.split(b.strip())
    if len(sa) != len(sb):
        return a, b
    changed = [(x, y) for x, y in zip(sa, sb, strict=True) if x != y]
    if not changed:
        return a, b
    return " ".join(x for x, _ in changed), " ".join(y for _, y in changed)


@dataclass(frozen=True)
class Test:
    """A negative waiting for the filter: its caption and the edited primitive's decomposed
    pair; `decomposed` tests compare that pair whatever the scope."""
    caption: str
    negative: str
    d: str
    d_neg: str
    n: int
    tally: str
    decomposed: bool = False


def settle(steps: list[Generator], rep) -> list:
    """Run set builders side by side: each round, every builder's waiting negatives are
    judged in one batch by `rep.judge` (negatives.Replacer); returns what each builder
    returns."""
    out: list = [None] * len(steps)
    waiting: dict[int, list[Test]] = {}

    def advance(i: int, verdicts) -> None:
        try:
            waiting[i] = steps[i].send(verdicts)
        except StopIteration as stop:
            out[i] = stop.value
            waiting.pop(i, None)

    for i in range(len(steps)):
        advance(i, None)
    while waiting:
        order = list(waiting.items())
        verdicts = iter(rep.judge([t for _, tests in order for t in tests]))
        for i, tests in order:
            advance(i, [next(verdicts) for _ in tests])
    return out

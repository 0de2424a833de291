"""A scorer's scores checked where they enter results, on every batch: a number per
candidate of every item, none NaN or +inf (only -inf, a candidate not shown). What fails
is one line naming the item; eval/cells.py adds the model and the benchmark, writes
nothing for that cell and scores nothing more with that model."""

from __future__ import annotations

import numpy as np

from autocomp.core.errors import AutocompError


class UnusableScores(AutocompError):
    """A scorer's scores for an item cannot be read: the cell writes nothing and the model
    scores nothing more (the other models go on); one line naming the model, benchmark and
    item."""


class NonFiniteScores(UnusableScores):
    """A scorer gave NaN or +inf: no accuracy can be read from it (only -inf is allowed: a
    candidate the scorer was not shown)."""


def refuse_non_finite(scores, bench: str, item: str) -> None:
    """One line naming the benchmark, the item and what the scorer returned, when a score is
    NaN or +inf (an fp16 overflow will give them): read as "not shown", they made chance 100
    for every model."""
    values = np.asarray(scores, dtype=np.float64)
    nan, pos = np.isnan(values), np.isposinf(values)
    if nan.any() or pos.any():
        what = " and ".join(w for w, m in (("NaN", nan), ("+inf", pos)) if m.any())
        raise NonFiniteScores(
            f"benchmark {bench}: item {item}: the scorer returned {what} for "
            f"{int((nan | pos).sum())} of {values.size} candidate score(s) (only -inf, a "
            "candidate not shown, is allowed; an fp16 overflow gives these): nothing is "
            "written for this benchmark")


def checked_item_scores(entries: list[tuple], got) -> list[np.ndarray]:
    """An item scorer's scores for `entries` ((item, candidates, truth, image) each) as
    arrays, one number per candidate of every item (one score short was read as right;
    too many, None or text was a traceback)."""
    got = list(got)
    if len(got) != len(entries):
        raise UnusableScores(f"the scorer returned scores for {len(got)} of the "
                             f"{len(entries)} items it was handed (one list per item)")
    out = []
    for (item, candidates, *_), scores in zip(entries, got, strict=True):
        try:
            values = np.asarray(scores, dtype=np.float64)
        except (TypeError, ValueError):
            values = None
        if values is None or values.ndim != 1 or values.size != len(candidates) \
                or any(v is None for v in np.ravel(np.asarray(scores, dtype=object))):
            raise UnusableScores(
                f"item {item['id']}: the scorer returned {str(scores)[:60]!r} for "
                f"{len(candidates)} candidates (one number per candidate)")
        out.append(values)
    return out

"""Items of I images x C captions with a truth matrix (Winoground's layout; an item of one
image and K captions is the case I = 1).

  text score   every image picks a true caption: in each row with true and false
               captions, the best true caption scores strictly above every false one
  image score  every caption picks a true image: the same down each column that has true
               and false images (None when no column has both, e.g. I = 1)
  group score  both at once
As Winoground defines them (Thrush et al. 2022): for 2 x 2 items with the identity as truth,
text = s(c0,i0) > s(c1,i0) and s(c1,i1) > s(c0,i1); image = s(c0,i0) > s(c0,i1) and
s(c1,i1) > s(c1,i0).

Tie-aware: each row's (column's) pick breaks a tie at the top uniformly at random, every
pick independently: a row earns (true captions at the top) / (captions at the top), 0 when
a false one is above; an item earns the product over its rows (columns; both for the group).

Argmax: each row (column) picks the first of the candidates at the top, as torch's argmax
in CLIP_benchmark and MIEB does (image i's caption is column i there, so a tie goes to the
lower index).

Chance: scores drawn at random (continuous, so no ties). Text and image chance are exact
products over rows (columns): rows share no cell. Group chance is counted over every
ordering of the cells (exact up to 8 cells: 2 x 2 gives 1/6, 16.7%, Winoground's figure),
else estimated from 20,000 seeded draws.
"""

from __future__ import annotations

import itertools
import math
from functools import lru_cache

import numpy as np


def is_matrix(item: dict) -> bool:
    return "truth" in item


def truth_of(item: dict) -> np.ndarray:
    return np.asarray(item["truth"], dtype=bool)


def every_true(item: dict) -> bool:
    """Whether a row is right only when EVERY true caption beats every false one
    (SugarCrepe++: both positives above the negative), not its best true caption."""
    return item.get("true_captions") == "all"


def _pick(scores: np.ndarray, true: np.ndarray, every: bool = False
          ) -> tuple[bool, float] | None:
    """(strict, tie credit) of one row or column, or None when it has no true or no false
    candidate (nothing to pick). `every`: all true candidates must rank above the false
    ones; a tie at the boundary earns the chance that random tie-breaking puts every tied
    true one first (1 / C(tied, tied true))."""
    if true.all() or not true.any():
        return None
    shown = np.isfinite(scores)  # a scorer may leave candidates out (-inf)
    best_true = scores[true].min() if every else scores[true].max()
    false = scores[~true & shown]
    best_false = false.max() if len(false) else -np.inf
    if best_true < best_false:
        return False, 0.0
    if every:
        if best_true > best_false:
            return True, 1.0
        tied = scores == best_true
        return False, 1.0 / math.comb(int(tied.sum()), int((tied & true).sum()))
    top = scores == max(best_true, best_false)
    return bool(best_true > best_false), float((top & true).sum() / top.sum())


def _first(scores: np.ndarray, truth: np.ndarray, every: bool = False) -> bool | None:
    """Every row with a true and a false candidate picks a true one by argmax (the first of
    the tied at the top, as CLIP_benchmark and MIEB pick); `every`: the row's true
    candidates fill its first places in that order. None when no row has both."""
    rows = [i for i in range(truth.shape[0]) if truth[i].any() and not truth[i].all()]
    if not rows:
        return None
    if every:
        order = [np.argsort(-scores[i], kind="stable") for i in rows]
        return all(bool(truth[i, o[:int(truth[i].sum())]].all())
                   for i, o in zip(rows, order, strict=True))
    return all(bool(truth[i, int(np.argmax(scores[i]))]) for i in rows)


def matrix_outcome(scores, truth, every: bool = False) -> dict:
    """Text, image and group outcomes of one item: strict (bool or None) and tie credit.
    `every`: a row (column) is right when all its true candidates beat its false ones."""
    scores, truth = np.asarray(scores, dtype=np.float64), np.asarray(truth, dtype=bool)
    rows = [p for i in range(truth.shape[0])
            if (p := _pick(scores[i], truth[i], every)) is not None]
    cols = [p for j in range(truth.shape[1])
            if (p := _pick(scores[:, j], truth[:, j], every)) is not None]

    def combine(picks):
        if not picks:
            return None, None
        return all(s for s, _ in picks), float(np.prod([c for _, c in picks]))

    text, text_tie = combine(rows)
    image, image_tie = combine(cols)
    text_first = _first(scores, truth, every)
    image_first = _first(scores.T, truth.T, every) if image is not None else None
    out = {"text": text, "text_tie": text_tie, "image": image, "image_tie": image_tie,
           "text_argmax": text_first, "image_argmax": image_first}
    if image is None:
        out["group"], out["group_tie"], out["group_argmax"] = text, text_tie, text_first
    else:
        out["group"], out["group_tie"] = bool(text and image), text_tie * image_tie
        out["group_argmax"] = bool(text_first and image_first)
    # the rank of the first image's first true caption among the false ones, ties against
    # it (R@k for I = 1); another true caption (SugarCrepe++'s P2) is no rival
    row, false = scores[0], ~np.asarray(truth[0], dtype=bool)
    first = int(np.argmax(truth[0]))
    rivals = row[false]
    out["rank"] = 1 + int((rivals[np.isfinite(rivals)] >= row[first]).sum())
    out["candidates"] = 1 + int(false.sum())
    return out


def _line_chance(t: np.ndarray, every: bool) -> float:
    """A row's (column's) chance with random scores: a true candidate on top (t/n), or
    every true candidate above every false one (1 / C(n, t))."""
    return 1.0 / math.comb(t.size, int(t.sum())) if every else t.sum() / t.size


@lru_cache(maxsize=256)
def _chance(pattern: tuple, every: bool = False) -> tuple:
    truth = np.array(pattern, dtype=bool)
    rows = [_line_chance(t, every) for t in truth if t.any() and not t.all()]
    cols = [_line_chance(t, every) for t in truth.T if t.any() and not t.all()]
    text = float(np.prod(rows)) if rows else None
    image = float(np.prod(cols)) if cols else None
    if image is None:
        return text, image, text
    cells = truth.size
    if cells <= 8:
        orders = itertools.permutations(range(cells))
        draws = (np.array(o, dtype=np.float64).reshape(truth.shape) for o in orders)
    else:
        rng = np.random.default_rng(0)
        draws = (rng.random(truth.shape) for _ in range(20_000))
    hits = total = 0
    for scores in draws:
        total += 1
        hits += bool(matrix_outcome(scores, truth, every)["group"])
    return text, image, hits / total


def matrix_chance(truth, every: bool = False) -> dict:
    """Chance text, image and group scores (fractions) of a truth matrix."""
    truth = np.asarray(truth, dtype=bool)
    text, image, group = _chance(tuple(map(tuple, truth.tolist())), every)
    return {"text": text, "image": image, "group": group}

"""Item outcomes and the metrics of a cell.

strict      the positive scores strictly above every negative (the papers' metric)
tie_aware   ties at the top broken uniformly at random: 1/k credit when the positive ties
            with k-1 negatives for the top score, 0 when a negative is above it
argmax      the first of the candidates at the top is picked, as torch/numpy argmax does
            (CLIP_benchmark, mteb/MIEB): the positive comes first, so a tie counts right
distinct    strict, counting only negatives that do not mean the same as the positive

`accuracy` (and a matrix item's text, image and group scores) follow the tie rule the eval
ran under (`autocomp eval --ties strict|aware|argmax`, strict by default; the result says
which); accuracy_strict, accuracy_tie_aware and accuracy_argmax are always there beside it.

Items of several images (eval/matrix.py) add text, image and group scores; their
`accuracy` is the text score, so every table that reads accuracy reads them too. An item
may name `breakdown` values ({"tag": "Object"}): the metrics then hold each value's counts
and scores under `by` (Winoground's tags, ARO's relations) and their unweighted mean under
`macro`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


def outcome(scores: np.ndarray, same_meaning: np.ndarray | None = None) -> dict:
    """scores[0] is the positive's. Returns strict, tie credit, distinct, chosen index."""
    scores = np.asarray(scores, dtype=np.float64)
    pos, negs = scores[0], scores[1:]
    top = scores.max()
    strict = bool(len(negs) == 0 or pos > negs.max())
    first = bool(len(negs) == 0 or pos >= negs.max())
    credit = 1.0 / int((scores == top).sum()) if pos == top else 0.0
    if same_meaning is not None and len(negs):
        keep = negs[~same_meaning]
        distinct = bool(len(keep) == 0 or pos > keep.max())
    else:
        distinct = strict
    chosen = 0 if strict else int(np.argmax(negs)) + 1  # the best-scoring negative
    # rank of the positive, ties counted against it (as strict accuracy does): 1 + the
    # negatives scoring at least as high; candidates a scorer left out (-inf) never count
    rank = 1 + int((negs[np.isfinite(negs)] >= pos).sum())
    return {"strict": strict, "tie_credit": credit, "argmax": first, "distinct": distinct,
            "chosen": chosen, "rank": rank}


# a tie rule -> the key of its outcome (one caption list), and the suffix of its text, image
# and group outcomes (a matrix item: eval/matrix.py)
TIES = {"strict": "strict", "aware": "tie_credit", "argmax": "argmax"}
MATRIX_SUFFIX = {"strict": "", "aware": "_tie", "argmax": "_argmax"}


def r1(x) -> str:
    """One decimal, rounded half up as the papers print (6.25 -> "6.3"); "-" for None."""
    if x is None:
        return "-"
    from decimal import ROUND_HALF_UP, Decimal

    return str(Decimal(repr(float(x))).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))


SAME_MEANING = "same meaning as the positive"
TIED = "tie at the top"  # the positive tied with negatives: no negative was preferred


def error_category(chosen: dict | None) -> str | None:
    """The Table 6 category of a chosen negative; one that says what the positive says is
    its own category (a pick of it is no binding error), never "swapped values"."""
    if chosen is None:
        return None
    return SAME_MEANING if chosen.get("same_meaning") else chosen.get("category")


@dataclass
class Tally:
    ties: str = "strict"  # the rule `accuracy` follows (TIES)
    n: int = 0
    correct: float = 0.0  # under the tie rule
    strict: float = 0.0
    tie: float = 0.0
    first: float = 0.0
    distinct: float = 0.0
    chance: float = 0.0
    chance_distinct: float = 0.0
    paired_n: int = 0
    paired_strict: float = 0.0
    groups: dict = field(default_factory=dict)  # e.g. per relation: [n, correct]
    errors: dict = field(default_factory=dict)  # category of the negative chosen -> count
    ranks: dict = field(default_factory=dict)  # rank of the positive -> items (R@k, mean)
    most: int = 0  # the most candidates an item ranked its positive among (R@k needs k < it)
    matrix: dict = field(default_factory=dict)  # text / image / group sums (matrix items)
    by: dict = field(default_factory=dict)  # breakdown -> value -> [n, text, image, group]
    units: dict = field(default_factory=dict)  # score -> concept -> [items, sum] (intervals)
    by_units: dict = field(default_factory=dict)  # (breakdown, value) -> concept -> [n, sum]
    matched: dict = field(default_factory=dict)  # the shortcut-matched negatives' sums
    side: dict = field(default_factory=dict)  # a benchmark's side metric -> its sums

    def add_side(self, name: str, good: float, bad: float, listed_first: bool,
                 concept=None) -> None:
        """One pairwise side metric of an item (SugarCrepe++'s Image-P1-Neg: the image's
        first positive above its negative): the true caption's score `good` against the
        false one's `bad` under each tie rule (argmax: a tie goes to the one listed
        first); chance 50%."""
        strict, credit = good > bad, 1.0 if good > bad else 0.5 if good == bad else 0.0
        first = good >= bad if listed_first else good > bad
        m = self.side.setdefault(name, {"n": 0, "rule": 0.0, "strict": 0.0, "tie": 0.0,
                                        "argmax": 0.0})
        ruled = {"strict": strict, "aware": credit, "argmax": first}[self.ties]
        m["n"] += 1
        m["rule"] += ruled
        m["strict"] += float(strict)
        m["tie"] += credit
        m["argmax"] += float(first)
        self.unit(f"side:{name}", concept, ruled)

    def add_matched(self, result: dict, n_candidates: int, concept=None) -> None:
        """One Confusion item scored against its shortcut-matched negatives only
        (negatives/shortcut.py): its outcomes and that subset's chance."""
        m = self.matched
        for key in ("n", "rule", "strict", "tie", "argmax", "chance"):
            m.setdefault(key, 0.0)
        m["n"] += 1
        ruled = result[TIES[self.ties]]
        m["rule"] += ruled
        m["strict"] += result["strict"]
        m["tie"] += result["tie_credit"]
        m["argmax"] += result["argmax"]
        m["chance"] += 1.0 / n_candidates
        self.unit("accuracy_matched", concept, ruled)
        self.unit("accuracy_matched_tie_aware", concept, result["tie_credit"])

    def unit(self, score: str, concept, value) -> None:
        """One item's outcome under its concept (an item without one is its own unit)."""
        key = concept if concept is not None else ("item", self.n)
        u = self.units.setdefault(score, {}).setdefault(key, [0, 0.0])
        u[0] += 1
        u[1] += float(value)

    def add_matrix(self, result: dict, chance: dict, breakdown: dict | None = None,
                   concept=None) -> None:
        """One item of several images: its text, image and group outcomes (`text`,
        `image`, `group` under the tie rule; each also strict, tie-aware and argmax)."""
        m = self.matrix
        suffixes = MATRIX_SUFFIX.values()
        scores = ("text", "image", "group")
        for key in ("n", "image_n", "chance_text", "chance_image", "chance_group",
                    *(f"{k}{s}" for k in scores for s in (*suffixes, "_rule"))):
            m.setdefault(key, 0.0)
        m["n"] += 1
        ruled = {k: result[f"{k}{MATRIX_SUFFIX[self.ties]}"] for k in scores}
        for key in ("text", "group"):
            for s in suffixes:
                m[f"{key}{s}"] += result[f"{key}{s}"]
            m[f"{key}_rule"] += ruled[key]
        m["chance_text"] += chance["text"]
        m["chance_group"] += chance["group"]
        if result["image"] is not None:
            m["image_n"] += 1
            for s in suffixes:
                m[f"image{s}"] += result[f"image{s}"]
            m["image_rule"] += ruled["image"]
            m["chance_image"] += chance["image"]
            self.unit("image_score", concept, ruled["image"])
        self.unit("group_score", concept, ruled["group"])
        self.breakdown(breakdown, ruled["text"], ruled["image"], ruled["group"], concept,
                       chance["text"])
        self.add({"strict": result["text"], "tie_credit": result["text_tie"],
                  "argmax": result["text_argmax"], "distinct": result["text"],
                  "rank": result["rank"], "candidates": result["candidates"]},
                 1.0 / chance["text"], 1.0 / chance["text"], False, None, concept=concept)

    def breakdown(self, breakdown, text, image, group, concept=None, chance=None) -> None:
        """An item's outcomes under each value of its breakdown (the seen label of a split,
        ARO's relation, ...), with its chance and its concept (the values' intervals)."""
        for dim, values in (breakdown or {}).items():  # a value, or a list of them
            for value in values if isinstance(values, list) else [values]:
                cell = self.by.setdefault(dim, {}).setdefault(str(value), [0, 0, 0, 0, 0.0])
                cell[0] += 1  # outcomes under the tie rule: 0/1, or a tie's credit
                cell[1] += float(text or 0)
                cell[2] += float(image or 0)
                cell[3] += float(group or 0)
                cell[4] += float(chance or 0)
                key = concept if concept is not None else ("item", self.n)
                u = self.by_units.setdefault((dim, str(value)), {}).setdefault(key, [0, 0.0])
                u[0] += 1
                u[1] += float(text or 0)

    def add(self, result: dict, n_candidates: int, n_distinct: int, paired: bool,
            group: str | None, error_category: str | None = None, concept=None) -> None:
        self.n += 1
        correct = result[TIES[self.ties]]
        self.unit("accuracy", concept, correct)
        if self.ties != "strict":
            self.unit("accuracy_strict", concept, result["strict"])
        self.unit("accuracy_tie_aware", concept, result["tie_credit"])
        rank = result.get("rank", 1 if result["strict"] else 2)
        self.ranks[rank] = self.ranks.get(rank, 0) + 1
        self.most = max(self.most, int(result.get("candidates", n_candidates)))
        self.correct += correct
        self.strict += result["strict"]
        self.tie += result["tie_credit"]
        self.first += result.get("argmax", result["strict"])
        self.distinct += result["distinct"]
        self.chance += 1.0 / n_candidates
        self.chance_distinct += 1.0 / n_distinct
        if paired:
            self.paired_n += 1
            self.paired_strict += correct
            self.unit("accuracy_paired", concept, correct)
        if group is not None:
            g = self.groups.setdefault(group, [0, 0])
            g[0] += 1
            g[1] += correct
        if not result["strict"] and error_category:
            self.errors[error_category] = self.errors.get(error_category, 0) + 1

    def metrics(self) -> dict:
        def pct(a, b):
            return round(100.0 * a / b, 4) if b else None

        out = {"accuracy": pct(self.correct, self.n), "ties": self.ties,
               "accuracy_strict": pct(self.strict, self.n),
               "accuracy_tie_aware": pct(self.tie, self.n),
               "accuracy_argmax": pct(self.first, self.n),
               "accuracy_distinct_meaning": pct(self.distinct, self.n),
               "chance": pct(self.chance, self.n),
               "chance_distinct_meaning": pct(self.chance_distinct, self.n),
               "paired_items": self.paired_n,
               "accuracy_paired": pct(self.paired_strict, self.paired_n),
               # R@k only where some item has more than k candidates (else always 100)
               **{f"recall@{k}": pct(sum(c for r, c in self.ranks.items() if r <= k), self.n)
                  if self.most > k else None for k in (3, 5)},
               "mean_rank": round(sum(r * c for r, c in self.ranks.items()) / self.n, 4)
               if self.n else None}
        out.update(self._intervals())
        if self.errors:
            out["errors_by_category"] = dict(sorted(self.errors.items()))
        if self.groups:
            out["by_relation"] = {k: {"n": v[0], "accuracy": pct(v[1], v[0])}
                                  for k, v in sorted(self.groups.items())}
        if self.matrix:
            out.update(self._matrix_metrics(pct))
        if self.side:
            from autocomp.eval.intervals import proportion

            out["side"] = {}
            for name, m in sorted(self.side.items()):
                got = proportion(self.units.get(f"side:{name}", {}))
                out["side"][name] = {
                    "n": m["n"], "accuracy": pct(m["rule"], m["n"]),
                    "accuracy_strict": pct(m["strict"], m["n"]),
                    "accuracy_tie_aware": pct(m["tie"], m["n"]),
                    "accuracy_argmax": pct(m["argmax"], m["n"]), "chance": 50.0,
                    "interval": [round(got[0], 4), round(got[1], 4)] if got else None}
        if self.matched:
            m = self.matched
            out.update(matched_items=int(m["n"]), accuracy_matched=pct(m["rule"], m["n"]),
                       accuracy_matched_strict=pct(m["strict"], m["n"]),
                       accuracy_matched_tie_aware=pct(m["tie"], m["n"]),
                       accuracy_matched_argmax=pct(m["argmax"], m["n"]),
                       chance_matched=pct(m["chance"], m["n"]))
        if self.by:
            from autocomp.eval.intervals import proportion

            out["by"], out["macro"] = {}, {}
            for dim, values in sorted(self.by.items()):
                rows = {}
                for k, (n, text, image, group, chance) in sorted(values.items()):
                    got = proportion(self.by_units.get((dim, k), {}))
                    rows[k] = {"n": n, "accuracy": pct(text, n), "chance": pct(chance, n),
                               "interval": [round(got[0], 4), round(got[1], 4)] if got
                               else None}
                    if self.matrix and self.matrix["image_n"]:
                        rows[k].update(text_score=pct(text, n), image_score=pct(image, n),
                                       group_score=pct(group, n))
                out["by"][dim] = rows
                out["macro"][dim] = macro_accuracy(out, {"by": dim})
        return out

    def _intervals(self) -> dict:
        """95% intervals of every score ([low, high] in percent), and how they were made."""
        from autocomp.eval.intervals import method_of, proportion

        units = dict(self.units)
        if self.matrix:  # the text score is the accuracy
            units["text_score"] = units.get("accuracy", {})
        got = {k: proportion(v) for k, v in sorted(units.items())}
        return {"intervals": {k: [round(v[0], 4), round(v[1], 4)] for k, v in got.items()
                              if v is not None},
                "interval_method": method_of(units.get("accuracy", {}))}

    def _matrix_metrics(self, pct) -> dict:
        m = self.matrix
        n, ni = m["n"], m["image_n"]
        out = {}
        for key, total in (("text", n), ("image", ni), ("group", n)):
            out[f"{key}_score"] = pct(m[f"{key}_rule"], total)
            out[f"{key}_score_strict"] = pct(m[key], total)
            out[f"{key}_score_tie_aware"] = pct(m[f"{key}_tie"], total)
            out[f"{key}_score_argmax"] = pct(m[f"{key}_argmax"], total)
        return {**out, "chance_text": pct(m["chance_text"], n),
                "chance_image": pct(m["chance_image"], ni),
                "chance_group": pct(m["chance_group"], n), "image_direction_items": int(ni)}


def macro_accuracy(metrics: dict, meta: dict) -> float | None:
    """The mean over a breakdown's values (meta["by"]) of their accuracy, leaving out values
    with fewer than meta's min_count items (ARO: VG-Attribution's pairs under 25)."""
    by = (metrics.get("by") or {}).get(meta.get("by"))
    if not by:
        return None
    keep = [v["accuracy"] for v in by.values() if v["n"] >= meta.get("min_count", 1)]
    return round(sum(keep) / len(keep), 4) if keep else None

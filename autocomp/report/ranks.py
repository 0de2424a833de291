"""Do models rank the same on two benchmarks? (`autocomp report --agreement`; BenchBench's
practice: rank agreement over a model zoo, with intervals, varying the model subset.)

For two benchmarks (or a benchmark and a reference: one benchmark, or every benchmark of a
format pooled, "sugarcrepe/"), the models that scored both, each model's accuracy on the
items every one of them scored (its predictions file, under the tie rule its result was
scored with), and between the two lists of accuracies:

  Kendall tau-b and Spearman rho (scipy), each with
  a 95% percentile bootstrap interval over items: each benchmark's items resampled with
    replacement, the same resample for every model (models are compared on the same items),
    the two benchmarks independently; a resample where one side's accuracies are all equal
    has no rank correlation and is counted and left out
  a leave-one-model-out spread: the smallest and largest value over the model lists that
    leave one model out (how much one model moves it)

With fewer than MIN_MODELS models a rank correlation takes few values (3 models: tau is
one of -1, -1/3, 1/3, 1): the table says so. Below 3 models, or where one side is
constant, it is undefined ("-").
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from autocomp.eval.intervals import LEVEL, RESAMPLES, SEED

MIN_MODELS = 5


@dataclass
class Group:
    """One side of a comparison: a benchmark, or benchmarks pooled, with each model's
    outcome per item ((benchmark, item id) -> 1.0 / 0.0, or a tie credit)."""
    name: str
    benchmarks: list[str]
    outcomes: dict[str, dict] = field(default_factory=dict)  # model -> item -> outcome


def groups_of(results: list[dict], reference: str | None = None) -> tuple[dict, list[str]]:
    """(name -> Group: one per benchmark, plus the reference pooled where it names a
    prefix; the results left out, each with its reason)."""
    from autocomp.report.paired import outcomes

    by_bench: dict[str, dict[str, dict]] = defaultdict(dict)
    left: list[str] = []
    for r in results:
        got = outcomes(r)
        if got is None:
            left.append(f"{r['model']} on {r['benchmark']} (no predictions file beside it)")
            continue
        by_bench[r["benchmark"]][r["model"]] = {(r["benchmark"], k): v for k, v in got.items()}
    out = {b: Group(b, [b], models) for b, models in by_bench.items()}
    if reference and reference not in out:
        prefix = reference.rstrip("/") + "/"
        names = [b for b in by_bench if b.startswith(prefix)]
        if names:
            out[reference] = pooled(reference, names, by_bench)
    return out, left


def pooled(name: str, names: list[str], by_bench: dict) -> Group:
    """The benchmarks `names` as one group (by_bench: benchmark -> model -> outcomes): the
    models that scored every one of them, each with its items of all of them."""
    models = [m for m in by_bench[names[0]] if all(m in by_bench[b] for b in names)]
    group = Group(name, names)
    for m in models:
        group.outcomes[m] = {k: v for b in names for k, v in by_bench[b][m].items()}
    return group


def matrix(group: Group, models: list[str]) -> tuple[np.ndarray, int]:
    """(models x items outcomes on the items every model scored, how many items some
    model scored and another did not)."""
    keys = [set(group.outcomes[m]) for m in models]
    common = sorted(set.intersection(*keys), key=repr) if keys else []
    every = set.union(*keys) if keys else set()
    rows = [[group.outcomes[m][k] for k in common] for m in models]
    return np.asarray(rows, dtype=np.float64).reshape(len(models), len(common)), \
        len(every) - len(common)


def tau_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of each row of x with the same row of y (rows: resamples; columns:
    models): sum of sign products over model pairs / sqrt(pairs untied in x * pairs untied
    in y), which is scipy's kendalltau (variant b) row by row; NaN where a row is constant."""
    i, j = np.triu_indices(x.shape[-1], k=1)
    sx, sy = np.sign(x[..., i] - x[..., j]), np.sign(y[..., i] - y[..., j])
    return _ratio((sx * sy).sum(-1), np.sqrt((sx * sx).sum(-1) * (sy * sy).sum(-1)))


def rho(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's rho row by row: Pearson's correlation of the average ranks (scipy's
    rankdata), as scipy's spearmanr; NaN where a row is constant."""
    from scipy.stats import rankdata

    rx, ry = rankdata(x, axis=-1), rankdata(y, axis=-1)
    rx = rx - rx.mean(-1, keepdims=True)
    ry = ry - ry.mean(-1, keepdims=True)
    return _ratio((rx * ry).sum(-1), np.sqrt((rx * rx).sum(-1) * (ry * ry).sum(-1)))


def _ratio(num: np.ndarray, denom: np.ndarray) -> np.ndarray:
    """num / denom, NaN where denom is 0 (a constant row has no rank correlation)."""
    return np.where(denom > 0, num / np.where(denom > 0, denom, 1), np.nan)


def _resampled(m: np.ndarray, rng, resamples: int) -> np.ndarray:
    """resamples x models accuracies, each resample drawing the items with replacement."""
    from autocomp.eval.intervals import resampled_sums

    return 100.0 * resampled_sums(m.T, resamples, rng=rng) / m.shape[1]


def agreement(a: Group, b: Group, resamples: int = RESAMPLES, level: float = LEVEL) -> dict:
    """The rank agreement of the models that scored both groups (see the module's text)."""
    from scipy.stats import kendalltau, spearmanr

    models = [m for m in a.outcomes if m in b.outcomes]
    ma, partial_a = matrix(a, models)
    mb, partial_b = matrix(b, models)
    out = {"a": a.name, "b": b.name, "models": models, "items": [ma.shape[1], mb.shape[1]],
           "partial_items": [partial_a, partial_b], "kendall": None, "spearman": None}
    if not models or not ma.shape[1] or not mb.shape[1]:
        return out
    acc_a, acc_b = 100.0 * ma.mean(1), 100.0 * mb.mean(1)
    out["accuracy"] = {m: [float(x), float(y)] for m, x, y in
                       zip(models, acc_a, acc_b, strict=True)}
    out["intervals"] = {m: [_interval(ma[i]), _interval(mb[i])] for i, m in enumerate(models)}
    if len(models) < 3 or np.ptp(acc_a) == 0 or np.ptp(acc_b) == 0:
        return out
    rng = np.random.default_rng(SEED)
    ra, rb = _resampled(ma, rng, resamples), _resampled(mb, rng, resamples)
    tail = 100.0 * (1 - level) / 2
    for key, stat, vector in (("kendall", kendalltau, tau_b), ("spearman", spearmanr, rho)):
        boot = vector(ra, rb)
        ok = boot[~np.isnan(boot)]
        lo, hi = (np.percentile(ok, [tail, 100.0 - tail]) if len(ok) else (np.nan, np.nan))
        out[key] = {"value": float(stat(acc_a, acc_b).statistic),
                    "interval": [float(lo), float(hi)] if len(ok) else None,
                    "undefined_resamples": int(len(boot) - len(ok)),
                    "leave_one_out": _spread(vector, acc_a, acc_b)}
    return out


def _interval(row: np.ndarray) -> list[float] | None:
    from autocomp.eval.intervals import exact

    got = exact(float(row.sum()), len(row))
    return list(got) if got else None


def _spread(vector, x: np.ndarray, y: np.ndarray) -> list[float] | None:
    """[min, max] of the statistic over the model lists leaving one model out (None below
    4 models: 2 left cannot be ranked)."""
    m = len(x)
    if m < 4:
        return None
    keep = ~np.eye(m, dtype=bool)
    values = vector(x[None, :].repeat(m, 0)[keep].reshape(m, m - 1),
                    y[None, :].repeat(m, 0)[keep].reshape(m, m - 1))
    values = values[~np.isnan(values)]
    return [float(values.min()), float(values.max())] if len(values) else None


def comparisons(results: list[dict], reference: str | None = None,
                resamples: int = RESAMPLES) -> tuple[list[dict], list[str]]:
    """Every benchmark against the reference (given), else every pair of benchmarks; the
    results left out and why."""
    from autocomp.core.errors import AutocompError

    groups, left = groups_of(results, reference)
    if reference is not None and reference not in groups:
        known = ", ".join(sorted(groups)) or "none with predictions"
        raise AutocompError(f"no benchmark '{reference}' (nor any '{reference.rstrip('/')}/"
                            f"...') in these results (benchmarks: {known})",
                            field="--reference")
    names = [g for g in groups if g != reference]
    if reference is not None:
        pool = set(groups[reference].benchmarks)
        pairs = [(groups[n], groups[reference]) for n in names if n not in pool]
        pairs += [(g, groups[reference]) for g in pooled_tasks(results, groups, pool)]
    else:
        pairs = [(groups[x], groups[y]) for k, x in enumerate(names) for y in names[k + 1:]]
    return [agreement(a, b, resamples) for a, b in pairs], left


def pooled_tasks(results: list[dict], groups: dict, leave: set) -> list[Group]:
    """Per task x N of a run with more than one benchmark (tracks, negative kinds): the
    benchmarks pooled (the items of all of them, each model's accuracy over the pool)."""
    by_task: dict[str, list[str]] = defaultdict(list)
    for r in results:
        if r.get("task") and r.get("n") and r["benchmark"] in groups and \
                r["benchmark"] not in leave:
            key = f"{r['task']} N={r['n']} (pooled)"
            if r["benchmark"] not in by_task[key]:
                by_task[key].append(r["benchmark"])
    out = []
    for key, names in by_task.items():
        if len(names) < 2:
            continue
        out.append(pooled(key, names, {b: groups[b].outcomes for b in names}))
    return out


def _r2(x: float) -> str:
    return f"{x:.2f}".replace("-0.00", "0.00")


def _stat(got: dict | None) -> tuple[str, str]:
    """(the value with its interval, the leave-one-model-out range) as printed."""
    if got is None:
        return "-", "-"
    iv = got["interval"]
    value = _r2(got["value"]) + (f" [{_r2(iv[0])}, {_r2(iv[1])}]" if iv else "")
    spread = got["leave_one_out"]
    return value, (f"{_r2(spread[0])} to {_r2(spread[1])}" if spread else "-")


def agreement_table(rows: list[dict], left: list[str], labels: dict | None = None):
    """The rank agreement table: a row per comparison, its model and item counts, tau-b and
    rho with their intervals and leave-one-model-out ranges; the notes say what is thin."""
    from autocomp.report.table import Table

    body, notes = [], []
    few = [r for r in rows if 0 < len(r["models"]) < MIN_MODELS]
    thin = {id(r) for r in few}
    for r in rows:
        tau, tau_spread = _stat(r["kendall"])
        rho_, rho_spread = _stat(r["spearman"])
        models = f"{len(r['models'])}{'*' if id(r) in thin else ''}"
        body.append([r["a"], r["b"], models, f"{r['items'][0]:,} / {r['items'][1]:,}",
                     tau, tau_spread, rho_, rho_spread])
    notes.append(f"95% interval in brackets: a percentile bootstrap over items ({RESAMPLES:,} "
                 "resamples; each benchmark's items drawn with replacement, the same draw "
                 "for every model); LOO: the range over the model lists leaving one model "
                 "out; accuracies on the items every compared model scored")
    if few:
        notes.append(f"* fewer than {MIN_MODELS} models: a rank correlation of so few takes "
                     "few values (3 models: tau is -1, -1/3, 1/3 or 1); score more models "
                     "before reading it")
    if any(len(r["models"]) < 3 or r["kendall"] is None for r in rows):
        notes.append("-: undefined (fewer than 3 models, or every model scored the same on "
                     "one side)")
    undefined = sum((r["kendall"] or {}).get("undefined_resamples", 0) for r in rows)
    if undefined:
        notes.append(f"{undefined:,} resamples left one side's accuracies all equal (no rank "
                     "correlation) and were left out of the intervals")
    partial = [(r["a"], r["b"], r["partial_items"]) for r in rows if any(r["partial_items"])]
    for a, b, (pa, pb) in partial:
        notes.append(f"{a} vs {b}: items scored by some models and not all left out "
                     f"({pa:,} / {pb:,})")
    if left:
        notes.append(f"left out ({len(left)}): " + "; ".join(left))
    return Table("Rank agreement of models between benchmarks (Kendall tau-b, Spearman rho)",
                 ["Benchmark", "Against", "Models", "Items", "Kendall tau-b", "tau LOO range",
                  "Spearman rho", "rho LOO range"], body, notes)

"""Do models rank the same on two benchmarks? (`autocomp report --agreement`; BenchBench's
practice: rank agreement over a model zoo, with intervals, varying the model subset.)

For two benchmarks (or a benchmark and a reference: one benchmark, or every benchmark of a
format pooled, "sugarcrepe/"), the models that scored both, each model's accuracy on the
items every one of them scored (its predictions file, under the tie rule its result was
scored with), and between the two lists of accuracies:

  Kendall tau-b and Spearman rho (scipy), each with
  a 95% two-way percentile bootstrap interval: each resample draws the models with
    replacement (the zoo is a sample of models too: with 7 models the items alone gave
    [0.57, 0.98] where models and items give [0.29, 1.00]) and each benchmark's items with
    replacement, the same items for every model, the two benchmarks independently; a
    resample where one side's accuracies are all equal has no rank correlation and is
    counted and left out; an interval that reaches -1 or 1 is said to sit on its boundary
  a leave-one-model-out spread: the smallest and largest value over the model lists that
    leave one model out (how much one model moves it), and how many of those lists have no
    rank correlation (one side all equal), shown, not dropped

Baselines (the scorers that declare themselves blind or reference: the oracle at 100,
blind scorers near 0) are not models of the zoo and are left out unless asked for: with 2
models and 5 baselines tau-b read 0.72-1.00 where the 2 models alone are undefined. A
benchmark whose results hold different items under one name (their fingerprints differ:
two runs) is left out, as `--compare` does.

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
    prints: dict[str, set] = defaultdict(set)
    for r in results:
        if r.get("benchmark_fingerprint"):
            prints[r["benchmark"]].add(r["benchmark_fingerprint"])
    differ = {b for b, got in prints.items() if len(got) > 1}
    left += [f"{b} (its results hold different items under one name: their benchmark "
             "fingerprints differ; score every model on one copy)" for b in sorted(differ)]
    for r in results:
        if r["benchmark"] in differ:
            continue
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
    pick = rng.integers(0, len(models), size=(resamples, len(models)))  # models resampled
    ra, rb = np.take_along_axis(ra, pick, 1), np.take_along_axis(rb, pick, 1)
    tail = 100.0 * (1 - level) / 2
    for key, stat, vector in (("kendall", kendalltau, tau_b), ("spearman", spearmanr, rho)):
        boot = vector(ra, rb)
        ok = boot[~np.isnan(boot)]
        lo, hi = (np.percentile(ok, [tail, 100.0 - tail]) if len(ok) else (np.nan, np.nan))
        spread, undefined = _spread(vector, acc_a, acc_b)
        out[key] = {"value": float(stat(acc_a, acc_b).statistic),
                    "interval": [float(lo), float(hi)] if len(ok) else None,
                    "undefined_resamples": int(len(boot) - len(ok)),
                    "leave_one_out": spread, "leave_one_out_undefined": undefined}
    return out


def _interval(row: np.ndarray) -> list[float] | None:
    from autocomp.eval.intervals import exact

    got = exact(float(row.sum()), len(row))
    return list(got) if got else None


def _spread(vector, x: np.ndarray, y: np.ndarray) -> tuple[list[float] | None, int]:
    """([min, max] of the statistic over the model lists leaving one model out, how many
    of those lists have none: one side all equal); (None, 0) below 4 models (2 left cannot
    be ranked)."""
    m = len(x)
    if m < 4:
        return None, 0
    keep = ~np.eye(m, dtype=bool)
    values = vector(x[None, :].repeat(m, 0)[keep].reshape(m, m - 1),
                    y[None, :].repeat(m, 0)[keep].reshape(m, m - 1))
    defined = values[~np.isnan(values)]
    spread = [float(defined.min()), float(defined.max())] if len(defined) else None
    return spread, int(m - len(defined))


def comparisons(results: list[dict], reference: str | None = None,
                resamples: int = RESAMPLES, include_baselines: bool = False,
                models: list[str] | None = None) -> tuple[list[dict], list[str]]:
    """Every benchmark against the reference (given), else every pair of benchmarks; the
    results left out and why. Baselines are left out unless `include_baselines`; `models`
    (a models file's specs): only those."""
    from autocomp.core.errors import AutocompError
    from autocomp.report.categories import baseline_of

    kept = [r for r in results if (include_baselines or baseline_of(r) is None)
            and (models is None or r.get("spec", r["model"]) in models)]
    left_models = sorted({r["model"] for r in results} - {r["model"] for r in kept})
    groups, left = groups_of(kept, reference)
    if left_models:
        why = "baselines and models not listed" if models is not None else "baselines"
        left = [f"{len(left_models)} {why} ({', '.join(left_models[:6])}"
                f"{', ...' if len(left_models) > 6 else ''}"
                f"{'; --include-baselines adds baselines' if not include_baselines else ''})",
                *left]
    if not kept and results:
        raise AutocompError(f"no model to compare: the {len(left_models)} scorers here are "
                            "baselines or not in the models file (--include-baselines counts "
                            "baselines as models)", field="--agreement")
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

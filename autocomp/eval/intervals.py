"""95% intervals and paired tests for every number the tables print.

  proportion   an accuracy (or text / image / group score) of n items: the Clopper-Pearson
               (exact) interval (statsmodels' numbers, from scipy.special's beta
               quantiles as statsmodels gets them), whose coverage is at least 95% at any
               accuracy; where items share a concept (several items of one concept in a
               cell), a percentile bootstrap that resamples whole concepts (scipy), so
               items of one concept are not counted as independent. Wilson's interval was
               tried first and dropped: at chance levels of 0.1% (confusion, N = 3) one
               right item out of 80 puts its lower bound above chance, and 20 seeds of
               reference:random on the demo had 6.9% of cells exclude the true chance
               (Clopper-Pearson: 4.1%; scripts/bench_trust.py)
  paired       a difference of two accuracies on the same items (Min vs Ctx on the paired
               set; two models on one benchmark): Newcombe's hybrid score interval for
               paired proportions (method 10 of Newcombe 1998; good coverage down to a few
               discordant items, where a bootstrap is too narrow) and the exact McNemar
               test (a binomial test of the discordant pairs, scipy.special)
  holm         Holm's step-down adjustment over a family of paired tests (statsmodels'
               steps)
  rank_correlation  Spearman and Kendall of paired values (scipy), undefined when constant
  resampled_sums    column sums over bootstrap resamples of rows (items or clusters), for
               statistics scipy's bootstrap cannot take: rank agreement across models,
               kappa, where a resample can leave them undefined (counted, left out)

Every resampling uses a fixed seed, so a report prints the same numbers twice. Values are
in percent (points), as the tables print them.
"""

from __future__ import annotations

import math

import numpy as np

from autocomp.eval.exact import mcnemar, sign_flip

LEVEL = 0.95
RESAMPLES = 2000
SEED = 0


def exact(successes: float, n: int, level: float = LEVEL) -> tuple[float, float] | None:
    """Clopper-Pearson interval of successes / n, in percent (None for n = 0). A fractional
    count (tie-aware credit) is taken as it is (the beta quantiles accept it)."""
    return _confint(successes, n, level, "beta")


def wilson(successes: float, n: int, level: float = LEVEL) -> tuple[float, float] | None:
    """Wilson score interval of successes / n, in percent (Newcombe's paired interval is
    built on it)."""
    return _confint(successes, n, level, "wilson")


def _confint(successes: float, n: int, level: float, method: str):
    """statsmodels' proportion_confint (method beta or wilson), computed from the same
    scipy.special functions its scipy.stats calls end in (bitwise equal, checked in
    tests/test_intervals.py): importing statsmodels.stats costs a process ~1.5 s, and every
    eval cell prints an interval."""
    if not n:
        return None
    import scipy.special as sc

    x = min(max(successes, 0.0), n)
    tail = (1 - level) / 2
    if method == "beta":
        lo = 0.0 if x == 0 else sc.betaincinv(x, n - x + 1, tail)
        hi = 1.0 if x == n else sc.betainccinv(x + 1, n - x, tail)
    else:  # wilson
        q, crit = x / n, -sc.ndtri(tail)
        denom = 1 + crit**2 / n
        center = (q + crit**2 / (2 * n)) / denom
        dist = crit * np.sqrt(q * (1.0 - q) / n + crit**2 / (4.0 * n**2)) / denom
        lo, hi = np.clip(center - dist, 0, 1), np.clip(center + dist, 0, 1)
    return 100.0 * float(lo), 100.0 * float(hi)


def clustered(sums, counts, level: float = LEVEL) -> tuple[float, float] | None:
    """Percentile bootstrap interval (percent) of sum(sums) / sum(counts), resampling the
    clusters (one entry of `sums` and `counts` per concept)."""
    sums, counts = np.asarray(sums, float), np.asarray(counts, float)
    if len(sums) == 0 or counts.sum() == 0:
        return None
    if len(sums) == 1 or np.ptp(sums / counts) == 0:
        # nothing for a resample to move: the exact interval with one trial per concept
        return exact(sums.sum() * len(sums) / counts.sum(), len(sums), level)
    from scipy.stats import bootstrap

    res = bootstrap((sums, counts), _ratio, paired=True, vectorized=True, axis=-1,
                    confidence_level=level, n_resamples=RESAMPLES, method="percentile",
                    random_state=np.random.default_rng(SEED))
    return 100.0 * float(res.confidence_interval.low), 100.0 * float(res.confidence_interval.high)


def _ratio(sums, counts, axis=-1):
    return sums.sum(axis=axis) / counts.sum(axis=axis)


def proportion(units: dict, level: float = LEVEL) -> tuple[float, float] | None:
    """The interval of a score from its units ({concept: [items, sum]}): Clopper-Pearson
    when every unit is one item, else the concept-clustered bootstrap."""
    if not units:
        return None
    counts = np.array([u[0] for u in units.values()], float)
    sums = np.array([u[1] for u in units.values()], float)
    if counts.max() <= 1:
        return exact(float(sums.sum()), int(counts.sum()), level)
    return clustered(sums, counts, level)


def method_of(units: dict) -> str:
    if units and max(u[0] for u in units.values()) > 1:
        return f"bootstrap over {len(units)} concepts (items of a concept resampled together)"
    return "clopper-pearson"


def paired(a, b, level: float = LEVEL) -> dict | None:
    """a - b (points) for outcomes of the same items: Newcombe's hybrid score interval
    for a paired difference (his method 10, built on the two Wilson intervals and the
    outcomes' correlation; not in scipy or statsmodels, so written here), and the exact
    McNemar p (the binomial test of the discordant items), or under tie credits the paired
    sign-flip p.

    Outcomes are 0 / 1, or a tie credit in [0, 1] under `--ties aware` (the chance that a
    random pick among the captions tied at the top picks the positive): the 2 x 2 table
    then holds the expected counts when each side's ties are broken at random, apart
    (both = sum of a*b, a only = sum of a*(1-b), ...), so a - b is exactly the difference
    of the two tie-aware accuracies; its p is the paired sign-flip test of the per-item
    credit differences (sign_flip: exact, and equal to the exact McNemar p on 0 / 1
    outcomes; before issue 67 McNemar ran on the expected discordant counts rounded to
    whole items, which assumed the two sides' ties broken apart and rejected 0.8-1.3% under
    no difference). With 0 / 1 outcomes the table is the usual one."""
    a = np.clip(np.asarray(a, dtype=float), 0.0, 1.0)
    b = np.clip(np.asarray(b, dtype=float), 0.0, 1.0)
    n = len(a)
    if n == 0:
        return None
    both, a_only = float((a * b).sum()), float((a * (1 - b)).sum())
    b_only, neither = float(((1 - a) * b).sum()), float(((1 - a) * (1 - b)).sum())
    if np.isin(a, (0.0, 1.0)).all() and np.isin(b, (0.0, 1.0)).all():
        both, a_only, b_only, neither = (round(x) for x in (both, a_only, b_only, neither))
    p1, p2 = (both + a_only) / n, (both + b_only) / n
    l1, u1 = (x / 100.0 for x in wilson(both + a_only, n, level))
    l2, u2 = (x / 100.0 for x in wilson(both + b_only, n, level))
    denom = math.sqrt(float((both + a_only) * (b_only + neither) * (both + b_only)
                            * (a_only + neither)))
    # the outcomes' correlation, with Newcombe's correction (ad - bc shrunk by n/2 when
    # positive): uncorrected, identical outcomes give phi = 1 and an interval of width 0
    cross = both * neither - a_only * b_only
    if cross > 0:
        cross = max(cross - n / 2, 0.0)
    phi = cross / denom if denom else 0.0
    down = math.sqrt(max((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2,
                         0.0))
    up = math.sqrt(max((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2,
                       0.0))
    credit = isinstance(a_only, float)
    # 0 / 1: the exact McNemar test; tie credits: the paired sign-flip test of the credits
    p, test = sign_flip(a - b) if credit else (mcnemar(a_only, b_only), "exact")
    delta = p1 - p2
    return {"delta": 100.0 * delta, "low": 100.0 * max(delta - down, -1.0),
            "high": 100.0 * min(delta + up, 1.0), "p": p, "n": n,
            "a": 100.0 * p1, "b": 100.0 * p2, "a_only": a_only, "b_only": b_only,
            "credit": credit, "test": "sign-flip" if credit else "McNemar",
            "p_by": test}


def paired_clustered(a, b, clusters, level: float = LEVEL) -> dict | None:
    """a - b (points) for 0 / 1 outcomes of the same items that come in clusters (a
    synthetic concept's minimal and contextual images; a VG image's several subgraphs):
    Newcombe's paired interval (paired) where every cluster is one item, else a percentile
    bootstrap resampling whole clusters (scipy, seeded), so items of one cluster are not
    counted as independent. Where no resample can move the difference (every cluster's
    difference alike), Newcombe's interval over the clusters where each cluster's outcomes
    are all alike (the oracle: one cluster, one unit, as its accuracies' intervals count
    them; over the items it was narrower than they are), else over the items."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    keys, codes = np.unique(np.asarray(clusters, dtype=str), return_inverse=True)
    base = paired(a, b, level)
    if base is None or len(keys) == len(a):
        return base
    counts = np.bincount(codes).astype(float)
    sa, sb = np.bincount(codes, weights=a), np.bincount(codes, weights=b)
    if len(keys) == 1 or np.ptp((sa - sb) / counts) == 0:
        ma, mb = sa / counts, sb / counts
        if len(keys) > 1 and np.all(np.isin(ma, (0.0, 1.0))) and np.all(np.isin(mb, (0.0, 1.0))):
            base = paired(ma, mb, level) or base  # the same unit as the accuracies' intervals
        return {**base, "clusters": len(keys)}
    from scipy.stats import bootstrap

    res = bootstrap((sa, sb, counts), _difference, paired=True, vectorized=True, axis=-1,
                    confidence_level=level, n_resamples=RESAMPLES, method="percentile",
                    random_state=np.random.default_rng(SEED))
    return {**base, "low": 100.0 * float(res.confidence_interval.low),
            "high": 100.0 * float(res.confidence_interval.high), "clusters": len(keys)}


def _difference(sa, sb, counts, axis=-1):
    return (sa.sum(axis=axis) - sb.sum(axis=axis)) / counts.sum(axis=axis)


def mean_shares(counts, level: float = LEVEL,
                weights=None) -> list[tuple[float, tuple[float, float]]]:
    """Per category: the mean over cells of the category's share (percent) of each cell's
    counts (Table 6: errors by the chosen negative's category), and its interval. One cell:
    Clopper-Pearson per category; several: a percentile bootstrap that resamples each cell's
    errors within the cell (stratified by cell; every cell keeps its count), except for a
    category no cell (or every error) falls in, or whose share is 0 or 100% in every cell
    (a resample would never move), where the pooled exact interval stands.
    `weights` (summing to 1): a weighted mean of the cells' shares instead (a mean of
    means: VL-CheckList's corpora under a TYPE, TYPEs under a heading)."""
    counts = np.asarray(counts, dtype=float)
    totals = counts.sum(axis=1)
    shares = counts / totals[:, None]
    means = 100.0 * (shares.mean(axis=0) if weights is None
                     else np.asarray(weights, dtype=float) @ shares)
    pooled = counts.sum(axis=0)
    out = []
    if len(counts) > 1:
        rng = np.random.default_rng(SEED)
        draws = [rng.multinomial(int(t), p, size=RESAMPLES) / t
                 for t, p in zip(totals, shares, strict=True)]
        boot = (np.mean(draws, axis=0) if weights is None
                else np.tensordot(np.asarray(weights, dtype=float), draws, axes=1))
        lows, highs = 100.0 * np.quantile(boot, [(1 - level) / 2, (1 + level) / 2], axis=0)
    for j, mean in enumerate(means):
        still = bool(np.all((shares[:, j] == 0) | (shares[:, j] == 1)))  # nothing to resample
        if len(counts) == 1 or pooled[j] in (0, totals.sum()) or still:
            out.append((float(mean), exact(float(pooled[j]), int(totals.sum()), level)))
        else:
            out.append((float(mean), (float(lows[j]), float(highs[j]))))
    return out


def resampled_sums(rows, resamples: int = RESAMPLES, seed: int = SEED, rng=None):
    """resamples x columns: the column sums of `rows` (units x columns: one row per item or
    cluster) over bootstrap resamples of the rows (drawn with replacement, as many as
    there are), a hundred resamples at a time (memory: 100 x units weights). `rng`: go on
    drawing from this generator (two samples resampled independently, in turn)."""
    rows = np.asarray(rows, dtype=np.float64)
    rng = np.random.default_rng(seed) if rng is None else rng
    n = rows.shape[0]
    out = []
    for start in range(0, resamples, 100):
        weights = rng.multinomial(n, np.full(n, 1.0 / n), size=min(100, resamples - start))
        out.append(weights @ rows)
    return np.concatenate(out)


def holm(pvalues: list[float]) -> list[float]:
    """Holm-adjusted p-values, in the given order: statsmodels' multipletests(method="holm")
    step for step (equal, checked in tests/test_intervals.py), without its import (~1 s in
    every report)."""
    if not pvalues:
        return []
    p = np.asarray(pvalues, dtype=float)
    order = np.argsort(p)
    adjusted = np.maximum.accumulate(p[order] * np.arange(len(p), 0, -1))
    adjusted[adjusted > 1] = 1
    out = np.empty_like(adjusted)
    out[order] = adjusted
    return [float(x) for x in out]


def rank_correlation(pairs: list[tuple[float, float]]) -> dict:
    """Spearman's and Kendall's correlation (scipy) of (x, y) pairs with their p-values and
    n; None for both where they are undefined (fewer than 3 pairs, or a constant side)."""
    out = {"n": len(pairs), "spearman": None, "kendall": None}
    if len(pairs) < 3 or len({a for a, _ in pairs}) < 2 or len({b for _, b in pairs}) < 2:
        return out
    from scipy.stats import kendalltau, spearmanr

    a, b = zip(*pairs, strict=True)
    s, k = spearmanr(a, b), kendalltau(a, b)
    return {**out, "spearman": float(s.statistic), "spearman_p": float(s.pvalue),
            "kendall": float(k.statistic), "kendall_p": float(k.pvalue)}

"""COMPASS analyses of scored sets.

Integration gap (section 5): R@1_comp(c) = 1[s(I,c) > s(I,c~_i) for all i];
R@1_decomp(c) = prod_i 1[s(I,d_i) > s(I,d~_i)]; gap = decomp - comp, in points, per level
and complexity, and its mean +- std across complexities (Tables 2, 6-8).

Skill load (section 6): for each negative type t, R@1_t (in points) = b_O n_O + b_A n_A +
b_R n_R + a by OLS with standard errors clustered by image (statsmodels); counts that do
not vary at a level are left out; * p < 0.005, ** p < 0.001 (Table 3).
"""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np

from autocomp.compass.evaluate import predictions_path
from autocomp.core.records import read_jsonl

COUNTS = ("n_O", "n_A", "n_R")


def _correct(compass_dir: Path, model: str, name: str,
             results: Path | None = None) -> dict[str, bool]:
    path = predictions_path(compass_dir, model, name, results)
    return {p["id"]: bool(p["correct"]) for p in read_jsonl(path)} if path.exists() else {}


def integration_cells(compass_dir: Path, model: str,
                      results: Path | None = None) -> dict[tuple, list]:
    """(level, N) -> [(composed right, every decomposed pair right, image id, null gap)],
    one per scored composed item; the null gap is what a random scorer gets on average for
    that item, in points: 100 / 2^pairs (every decomposed pair right) minus
    100 / (negatives + 1) (the composed positive above all its negatives)."""
    compass_dir = Path(compass_dir)
    comp = _correct(compass_dir, model, "composed", results)
    dec = _correct(compass_dir, model, "decomposed", results)
    decomp_ok: dict[str, bool] = defaultdict(lambda: True)
    pairs: dict[str, int] = defaultdict(int)
    for item in read_jsonl(compass_dir / "decomposed.jsonl"):
        if item["id"] in dec:
            decomp_ok[item["group"]] &= dec[item["id"]]
            pairs[item["group"]] += 1
    cells: dict[tuple, list] = defaultdict(list)
    for item in read_jsonl(compass_dir / "composed.jsonl"):
        if item["id"] in comp and item["group"] in decomp_ok:
            null = 100.0 / 2 ** pairs[item["group"]] - 100.0 / (len(item["negatives"]) + 1)
            cells[(item["level"], item["n"])].append(
                (comp[item["id"]], decomp_ok[item["group"]], str(item["image_id"]), null))
    return dict(sorted(cells.items()))


def integration(compass_dir: Path, model: str, results: Path | None = None) -> list[dict]:
    """Rows (level, n, items, comp, decomp, gap, null) with accuracies in percent; `null`
    is the exact expected gap of a random scorer on those items (a gap is evidence of
    integration only as far as it differs from it); `gap_ci` the gap's 95% interval
    (Newcombe's paired interval: both outcomes are of the same items; a paired bootstrap
    over clusters where a cluster, an image on VG or a concept on a synthetic set, gives
    several items) and `comp_ci`, `decomp_ci` each accuracy's (Clopper-Pearson, or the
    cluster bootstrap)."""
    from autocomp.eval.intervals import paired_clustered, proportion

    rows = []
    for (level, n), pairs in integration_cells(compass_dir, model, results).items():
        c = 100.0 * np.mean([p[0] for p in pairs])
        d = 100.0 * np.mean([p[1] for p in pairs])
        clusters = [p[2] for p in pairs]
        ci = paired_clustered([p[1] for p in pairs], [p[0] for p in pairs], clusters)
        rows.append({"level": level, "n": n, "items": len(pairs), "comp": c, "decomp": d,
                     "gap": d - c, "gap_ci": (ci["low"], ci["high"]),
                     "comp_ci": proportion(_units(clusters, [p[0] for p in pairs])),
                     "decomp_ci": proportion(_units(clusters, [p[1] for p in pairs])),
                     "clusters": len(set(clusters)),
                     "null": float(np.mean([p[3] for p in pairs]))})
    return rows


def _units(clusters, outcomes) -> dict:
    """{cluster: [items, right]}: what eval/intervals.proportion resamples."""
    units: dict = {}
    for key, right in zip(clusters, outcomes, strict=True):
        u = units.setdefault(key, [0, 0.0])
        u[0] += 1
        u[1] += float(right)
    return units


def gap_summary(rows: list[dict], key: str = "gap") -> dict[str, tuple[float, float]]:
    """level -> (mean, std) of the gap (or, key="null", of the random scorer's expected
    gap) across complexities (Table 2). The spread is the sample standard deviation
    (ddof=1), which the paper's Table 2 values match; NaN for a level with a single
    complexity."""
    out = {}
    for level in dict.fromkeys(r["level"] for r in rows):
        gaps = [r[key] for r in rows if r["level"] == level]
        std = float(np.std(gaps, ddof=1)) if len(gaps) > 1 else math.nan
        out[level] = (float(np.mean(gaps)), std)
    return out


def fit_ols(y, X, groups, names) -> dict:
    """OLS with image-clustered standard errors; name -> {coef, se, p}; plus n, clusters.
    p-values come from Student's t with (clusters - 1) degrees of freedom (use_t=True), as
    the paper's t-tests do, not from the normal distribution."""
    import statsmodels.api as sm

    y = np.asarray(y, dtype=float)
    X = np.asarray(X, dtype=float)
    design = sm.add_constant(X, has_constant="add")
    codes = np.unique(np.asarray(groups, dtype=str), return_inverse=True)[1]
    out = {"n": len(y), "clusters": int(codes.max() + 1) if len(codes) else 0}
    if len(y) <= design.shape[1] or np.ptp(y) == 0:
        mean = float(y.mean()) if len(y) else math.nan
        for name in names:
            out[name] = {"coef": 0.0 if len(y) and np.ptp(y) == 0 else math.nan,
                         "se": math.nan, "p": math.nan}
        out["const"] = {"coef": mean, "se": math.nan, "p": math.nan}
        return out
    with warnings.catch_warnings():  # a NaN SE (too few clusters) is reported as "SE n/a"
        warnings.simplefilter("ignore", RuntimeWarning)
        fit = sm.OLS(y, design).fit(cov_type="cluster", cov_kwds={"groups": codes},
                                    use_t=True)
        params, bse, pvalues = fit.params, fit.bse, fit.pvalues
    for i, name in enumerate(["const", *names]):
        out[name] = {"coef": float(params[i]), "se": float(bse[i]), "p": float(pvalues[i])}
    return out


def stars(p: float) -> str:
    if p is None or math.isnan(p):
        return ""
    return "**" if p < 0.001 else "*" if p < 0.005 else ""


def skill_load(compass_dir: Path, model: str, results: Path | None = None) -> dict:
    """level -> negative type -> OLS result (coefficients in points per primitive)."""
    out: dict = defaultdict(dict)
    for primitive in ("O", "A", "R"):
        for level, fit in count_regression(compass_dir, model, f"skill-{primitive}",
                                           results).items():
            out[level][primitive] = fit
    return dict(out)


def count_regression(compass_dir: Path, model: str, name: str,
                     results: Path | None = None) -> dict:
    """level -> OLS of an item set's R@1 (points) on n_O, n_A, n_R, clustered by image.
    On skill-X sets (K = 4 negatives each) this is the skill load; on the composed set the
    number of negatives grows with the counts, so chance itself falls with them."""
    compass_dir = Path(compass_dir)
    correct = _correct(compass_dir, model, name, results)
    by_level: dict[str, list] = defaultdict(list)
    for item in read_jsonl(compass_dir / f"{name}.jsonl"):
        if item["id"] in correct:
            by_level[item["level"]].append((100.0 * correct[item["id"]],
                                            [item["counts"][c] for c in COUNTS],
                                            str(item["image_id"])))
    out = {}
    for level, rows in by_level.items():
        X = np.array([r[1] for r in rows], dtype=float)
        keep, collinear = identifiable(X)
        fit = fit_ols([r[0] for r in rows], X[:, keep], [r[2] for r in rows],
                      [COUNTS[i] for i in keep])
        for i in collinear:  # e.g. every synthetic OA concept has n_A = n_O
            fit[COUNTS[i]] = {"coef": math.nan, "se": math.nan, "p": math.nan,
                              "collinear": True}
            for j in determined_by(X, keep, i):  # its effect is folded into theirs
                fit[COUNTS[j]].setdefault("joint", []).append(COUNTS[i])
        out[level] = fit
    return out


def identifiable(X: np.ndarray) -> tuple[list[int], list[int]]:
    """Columns that vary and add rank (in n_O, n_A, n_R order), and varying columns left out
    because the others (with the intercept) already determine them."""
    keep, collinear = [], []
    for i in range(X.shape[1]):
        if np.ptp(X[:, i]) == 0:
            continue
        trial = np.column_stack([np.ones(len(X)), X[:, keep + [i]]])
        if np.linalg.matrix_rank(trial) == trial.shape[1]:
            keep.append(i)
        else:
            collinear.append(i)
    return keep, collinear


def determined_by(X: np.ndarray, keep: list[int], i: int) -> list[int]:
    """The kept columns that (with the intercept) determine column i: their coefficients
    carry i's effect too, so they are joint effects, not their own."""
    design = np.column_stack([np.ones(len(X)), X[:, keep]])
    coef = np.linalg.lstsq(design, X[:, i], rcond=None)[0][1:]
    return [k for k, c in zip(keep, coef, strict=True) if abs(c) > 1e-9]


def vifs(X: np.ndarray) -> list[float]:
    """Variance inflation factor of each column of X (n_O, n_A, n_R), with an intercept
    (statsmodels): 1 when a count is uncorrelated with the others; inf when the others
    determine it; NaN for a count that does not vary."""
    from statsmodels.stats.outliers_influence import variance_inflation_factor

    X = np.asarray(X, dtype=float)
    out = []
    design = np.column_stack([np.ones(len(X)), X])
    for i in range(X.shape[1]):
        if len(X) < 3 or np.ptp(X[:, i]) == 0:
            out.append(math.nan)
            continue
        varying = [j for j in range(X.shape[1]) if np.ptp(X[:, j]) > 0]
        cols = [0, *[j + 1 for j in varying]]
        with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a determined count is reported as inf below
            v = variance_inflation_factor(design[:, cols], cols.index(i + 1))
        # an exactly determined count gives 1 / (1 - R^2) with R^2 = 1 up to rounding
        out.append(float(v) if np.isfinite(v) and v < 1e8 else math.inf)
    return out


def design_vifs(compass_dir: Path) -> dict[str, list[float]]:
    """level -> VIFs of (n_O, n_A, n_R) over the skill-load items of that level (every
    skill set pooled, as the regressions see them); "all" pools the levels."""
    rows: dict[str, list] = defaultdict(list)
    for primitive in ("O", "A", "R"):
        path = Path(compass_dir) / f"skill-{primitive}.jsonl"
        if not path.exists():
            continue
        for item in read_jsonl(path):
            counts = [item["counts"][c] for c in COUNTS]
            rows[item["level"]].append(counts)
            rows["all"].append(counts)
    return {level: vifs(np.array(x)) for level, x in sorted(rows.items()) if x}


def skill_cells(compass_dir: Path, model: str, primitive: str,
                results: Path | None = None) -> dict[tuple, list]:
    """(level, count of `primitive`) -> [(right, image id)] on the skill-`primitive` items
    scored."""
    correct = _correct(Path(compass_dir), model, f"skill-{primitive}", results)
    cells: dict[tuple, list] = defaultdict(list)
    for item in read_jsonl(Path(compass_dir) / f"skill-{primitive}.jsonl"):
        if item["id"] in correct:
            cells[(item["level"], item["counts"][f"n_{primitive}"])].append(
                (correct[item["id"]], str(item["image_id"])))
    return dict(sorted(cells.items()))

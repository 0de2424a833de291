"""`autocomp compass report DIR...`: synthetic and Visual Genome side by side, per model.

Table 2 layout (gap mean +- std across complexities, per level), Tables 6-8 (per
complexity: D, C, gap) and Table 3 (skill-load coefficients with stars), for every COMPASS
set given (e.g. one built from a run, one from Visual Genome) and every model scored on it;
appendix-E plots go to DIR/figures/.
"""

from __future__ import annotations

from pathlib import Path

from autocomp.compass.analysis import (
    COUNTS,
    design_vifs,
    gap_summary,
    integration,
    skill_load,
    stars,
)
from autocomp.report.table_format import ci
from autocomp.report.tables import Table

THIN = 30  # a level/N row with fewer items than this is flagged: its accuracy is noisy
# cluster-robust standard errors need many clusters; with fewer, a coefficient is printed
# without stars (the t-test's size is not to be trusted)
MIN_CLUSTERS = 30


def _source(d: Path) -> str:
    from autocomp.compass.sets import check_set

    m = check_set(d)
    return {"visual-genome": "VG", "synthetic": "synthetic"}.get(m.get("source"), d.name)


def models_of(d: Path, results: Path | None = None) -> list[str]:
    res = Path(results) if results is not None else Path(d) / "results"
    if not res.is_dir():
        return []
    out = []
    for sub in sorted(res.iterdir()):
        first = next(sub.glob("*.predictions.jsonl"), None)
        if first:
            out.append(_model_name(sub))
    return out


def _model_name(sub: Path) -> str:
    marker = sub / "model.txt"
    return marker.read_text(encoding="utf-8").strip() if marker.exists() else sub.name


def _mean_std(mean: float, std: float) -> str:
    return f"{_signed(mean)}±{std:.2f}" if std == std else f"{_signed(mean)} (one N)"


def _signed(x: float, digits: int = 2) -> str:
    """+1.25 / -0.50 / 0.00 (never -0.00)."""
    text = f"{x:+.{digits}f}"
    return text[1:] if float(text) == 0 else text


def cluster_unit(source: str) -> str:
    """What a set's regressions cluster by, from its source label (source_labels): the
    image on Visual Genome; on a synthetic set the concept (its minimal and contextual
    images share one)."""
    return "image" if source.split(" (")[0] == "VG" else "concept"


def coefficient(cell: dict | None, fit: dict) -> str:
    """A Table 3 cell: the coefficient, stars only where the SE is defined and the fit has
    MIN_CLUSTERS clusters, "thin" under THIN items, "joint" where a collinear count's
    effect is folded in."""
    if cell is None:
        return "-"
    if cell.get("collinear"):
        return "collinear"
    text = _signed(cell["coef"])
    if cell["se"] != cell["se"]:
        text += " (SE n/a)"
    elif fit["clusters"] >= MIN_CLUSTERS:
        text += stars(cell["p"])
    if cell.get("joint"):
        text += " joint with " + "+".join(cell["joint"])
    if fit["n"] < THIN:
        text += " thin"
    return text


def _vif(v: float) -> str:
    return "-" if v != v else "inf" if v == float("inf") else f"{v:.2f}"


def source_labels(dirs: list[Path]) -> list[str]:
    """"synthetic" or "VG" per set; sets that would read the same get their folder's name
    (two runs, two seeds)."""
    from autocomp.report.gather import folder_names

    kinds = [_source(d) for d in dirs]
    names = folder_names(dirs)
    return [f"{k} ({n})" if kinds.count(k) > 1 else k for k, n in zip(kinds, names, strict=True)]


def tables(folders: list[Path]) -> list[Table]:
    """The tables of each set (or results folder `compass eval --output` wrote)."""
    from autocomp.compass.evaluate import set_and_results

    t2_rows, t3_rows, detail, vif_rows = [], [], [], []
    units = set()
    views = [set_and_results(f) for f in folders]
    dirs = [d for d, _ in views]
    for (d, res), src in zip(views, source_labels(dirs), strict=True):
        unit = cluster_unit(src)
        units.add(unit)
        for level, v in design_vifs(d).items():
            vif_rows.append([src, level, *[_vif(x) for x in v],
                             "yes" if all(x != x or x < 5 for x in v) else "no"])
        for model in models_of(d, res):
            rows = integration(d, model, res)
            summary, null = gap_summary(rows), gap_summary(rows, "null")
            t2_rows.append([model, src, *[
                f"{_mean_std(*summary[lv])} (null {_signed(null[lv][0])})" if lv in summary
                else "-" for lv in ("OAR", "OA", "OR")]])
            for r in rows:
                detail.append([model, src, r["level"], str(r["n"]),
                               f"{r['items']} ({r['clusters']} {unit}s)",
                               ci(r["decomp"], r["decomp_ci"]), ci(r["comp"], r["comp_ci"]),
                               f"{_signed(r['gap'], 1)} [{_signed(r['gap_ci'][0], 1)}, "
                               f"{_signed(r['gap_ci'][1], 1)}]", _signed(r["null"], 1),
                               f"thin (< {THIN})" if r["items"] < THIN else ""])
            thin = {lv: sum(r["items"] < THIN for r in rows if r["level"] == lv)
                    for lv in ("OAR", "OA", "OR")}
            t2_rows[-1].append(", ".join(f"{lv} {k}" for lv, k in thin.items() if k) or "-")
            load = skill_load(d, model, res)
            for level, by_type in sorted(load.items()):
                row = [model, src, level]
                for kind in ("O", "A", "R"):
                    fit = by_type.get(kind)
                    row.append("-" if not fit else f"{fit['n']} ({fit['clusters']} {unit}s)")
                    row += [coefficient((fit or {}).get(c), fit or {}) for c in COUNTS]
                t3_rows.append(row)
    unit = " or ".join(sorted(units)) or "image"
    out = [Table("Table 2: integration gap, decomposed - composed R@1 (points), mean ± std "
                 "(sample, ddof=1) across complexities, beside the null: the gap a random "
                 f"scorer is expected to show on the same items; thin: N rows with < {THIN} "
                 "items", ["Model", "Source", "OAR", "OA", "OR", "Thin N rows"], t2_rows,
                 ["A gap is evidence of an integration deficit only as far as it departs "
                  "from its null: a random scorer's composed R@1 is 1/(negatives + 1) and "
                  "its decomposed R@1 1/2^pairs, so its gap is not 0."]),
           Table("Tables 6-8: per complexity, decomposed (D) and composed (C) R@1, the gap "
                 "and its null (a random scorer's expected gap on these items); 95% "
                 "intervals in brackets, clustered as Table 3 clusters",
                 ["Model", "Source", "Level", "N", "Items (clusters)", "D", "C", "Δ",
                  "Null Δ", "Note"], detail,
                 [f"Intervals over {unit}s: one {unit} gives several items (a synthetic "
                  "concept its minimal and contextual images; a VG image several "
                  "subgraphs), so D and C take Clopper-Pearson where every cluster is one "
                  "item and else a bootstrap resampling whole clusters; Δ Newcombe's paired "
                  "interval, or a paired bootstrap over clusters."]),
           Table("Table 3: skill load, change in R@1 (points) per primitive, OLS with "
                 f"{unit}-clustered SE; * p < 0.005, ** p < 0.001",
                 ["Model", "Source", "Level",
                  *[h for k in ("O", "A", "R") for h in (
                      f"{k} neg items ({unit}s)", *[f"{k} neg {c[2:]}" for c in COUNTS])]],
                 t3_rows,
                 [f"Stars only where the fit has at least {MIN_CLUSTERS} clusters and the "
                  "SE is defined (SE n/a: the outcome does not vary or there are too few "
                  "items); cluster-robust tests with fewer clusters over-reject.",
                  f"thin: a fit on fewer than {THIN} items. collinear: a count the others "
                  "fix (every synthetic OA concept has n_A = n_O), left out; the count it "
                  "depends on is marked joint, its coefficient the two effects together.",
                  "Clusters: the image on Visual Genome; on a synthetic set the concept "
                  "(its minimal and contextual images show one scene graph)."]),
           Table("Variance inflation factors of the skill-load regressors (statsmodels; 1 = "
                 "uncorrelated, inf = determined by the others, - = constant); all < 5: the "
                 "three coefficients can be told apart",
                 ["Source", "Level", "VIF n_O", "VIF n_A", "VIF n_R", "All < 5"], vif_rows)]
    return out


def format_filter(manifest: dict) -> str:
    """The similarity filter's rejections per set and N, and the items each N kept."""
    lines = ["Similarity filter (rejects a negative above 0.95 for N < 6, 0.90 for N >= 6; "
             "a relation replaced by its opposite, an attribute by its antonym, is kept "
             "untested):",
             f"  {'set':<14}{'N':>3}{'tested':>8}{'rejected':>10}{'rate':>8}"
             f"{'opposites kept':>16}"]
    for name, by_n in manifest.get("filter", {}).items():
        for n, c in sorted(by_n.items(), key=lambda kv: int(kv[0])):
            lines.append(f"  {name:<14}{n:>3}{c['tested']:>8}{c['rejected']:>10}"
                         f"{100 * c['rate']:>7.1f}%{c.get('opposites_kept', 0):>16}")
    kept = manifest.get("counts_by_n", {})
    if kept:
        lines.append(f"Items kept per N (thin: fewer than {THIN}):")
        for name, by_n in kept.items():
            cells = [f"N={n}: {k}{'*' if k < THIN else ''}" for n, k in by_n.items()]
            lines.append(f"  {name:<12}" + ("  ".join(cells) or "none"))
    return "\n".join(lines)


def figures(folders: list[Path], labels: dict | None = None) -> list[Path]:
    """Per set: integration.{png,pdf,svg} and skill-load.{png,pdf,svg} in the results'
    figures/ (a set's own: DIR/figures/), every model a line (compass/figures.py)."""
    from autocomp.compass.evaluate import set_and_results
    from autocomp.compass.figures import integration_figure, skill_figure
    from autocomp.report.figures import save
    from autocomp.report.gather import short_label

    out = []
    for folder in folders:
        d, res = set_and_results(folder)
        models = models_of(d, res)
        names = {m: (labels or {}).get(m) or short_label(m) for m in models}
        where = Path(d) / "figures" if res == Path(d) / "results" else Path(res) / "figures"
        for stem, draw in (("integration", integration_figure), ("skill-load", skill_figure)):
            fig = draw(Path(d), models, names, THIN, res) if models else None
            if fig is not None:
                out += save(fig, where / stem)
    return out

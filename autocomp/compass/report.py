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
from autocomp.report.tables import Table

THIN = 30  # a level/N row with fewer items than this is flagged: its accuracy is noisy


def _source(d: Path) -> str:
    from autocomp.compass.sets import check_set

    m = check_set(d)
    return {"visual-genome": "VG", "synthetic": "synthetic"}.get(m.get("source"), d.name)


def models_of(d: Path) -> list[str]:
    res = Path(d) / "results"
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
    return f"{mean:+.2f}±{std:.2f}" if std == std else f"{mean:+.2f} (one N)"


def _vif(v: float) -> str:
    return "-" if v != v else "inf" if v == float("inf") else f"{v:.2f}"


def source_labels(dirs: list[Path]) -> list[str]:
    """"synthetic" or "VG" per set; sets that would read the same get their folder's name
    (two runs, two seeds)."""
    from autocomp.report.gather import folder_names

    kinds = [_source(d) for d in dirs]
    names = folder_names(dirs)
    return [f"{k} ({n})" if kinds.count(k) > 1 else k for k, n in zip(kinds, names, strict=True)]


def tables(dirs: list[Path]) -> list[Table]:
    t2_rows, t3_rows, detail, vif_rows = [], [], [], []
    for d, src in zip(dirs, source_labels(dirs), strict=True):
        for level, v in design_vifs(d).items():
            vif_rows.append([src, level, *[_vif(x) for x in v],
                             "yes" if all(x != x or x < 5 for x in v) else "no"])
        for model in models_of(d):
            rows = integration(d, model)
            summary = gap_summary(rows)
            t2_rows.append([model, src, *[_mean_std(*summary[lv]) if lv in summary else "-"
                                          for lv in ("OAR", "OA", "OR")]])
            for r in rows:
                detail.append([model, src, r["level"], str(r["n"]), str(r["items"]),
                               f"{r['decomp']:.1f}", f"{r['comp']:.1f}", f"{r['gap']:+.1f}",
                               f"thin (< {THIN})" if r["items"] < THIN else ""])
            thin = {lv: sum(r["items"] < THIN for r in rows if r["level"] == lv)
                    for lv in ("OAR", "OA", "OR")}
            t2_rows[-1].append(", ".join(f"{lv} {k}" for lv, k in thin.items() if k) or "-")
            load = skill_load(d, model)
            for level, by_type in sorted(load.items()):
                row = [model, src, level]
                for kind in ("O", "A", "R"):
                    fit = by_type.get(kind)
                    for c in COUNTS:
                        cell = (fit or {}).get(c)
                        row.append("-" if cell is None else "collinear" if cell.get(
                            "collinear") else f"{cell['coef']:+.2f}{stars(cell['p'])}")
                t3_rows.append(row)
    out = [Table("Table 2: integration gap, decomposed - composed R@1 (points), mean ± std "
                 f"(sample, ddof=1) across complexities; thin: N rows with < {THIN} items",
                 ["Model", "Source", "OAR", "OA", "OR", "Thin N rows"], t2_rows),
           Table("Tables 6-8: per complexity, decomposed (D) and composed (C) R@1 and the gap",
                 ["Model", "Source", "Level", "N", "Items", "D", "C", "Δ", "Note"], detail),
           Table("Table 3: skill load, change in R@1 (points) per primitive; * p < 0.005, "
                 "** p < 0.001 (image-clustered SE); collinear: fixed by the other counts",
                 ["Model", "Source", "Level",
                  *[f"{k} neg {c[2:]}" for k in ("O", "A", "R") for c in COUNTS]], t3_rows),
           Table("Variance inflation factors of the skill-load regressors (statsmodels; 1 = "
                 "uncorrelated, inf = determined by the others, - = constant); all < 5: the "
                 "three coefficients can be told apart",
                 ["Source", "Level", "VIF n_O", "VIF n_A", "VIF n_R", "All < 5"], vif_rows)]
    return out


def format_filter(manifest: dict) -> str:
    """The similarity filter's rejections per set and N, and the items each N kept."""
    lines = ["Similarity filter (rejects a negative above 0.95 for N < 6, 0.90 for N >= 6):",
             f"  {'set':<14}{'N':>3}{'tested':>8}{'rejected':>10}{'rate':>8}"]
    for name, by_n in manifest.get("filter", {}).items():
        for n, c in sorted(by_n.items(), key=lambda kv: int(kv[0])):
            lines.append(f"  {name:<14}{n:>3}{c['tested']:>8}{c['rejected']:>10}"
                         f"{100 * c['rate']:>7.1f}%")
    kept = manifest.get("counts_by_n", {})
    if kept:
        lines.append(f"Items kept per N (thin: fewer than {THIN}):")
        for name, by_n in kept.items():
            cells = [f"N={n}: {k}{'*' if k < THIN else ''}" for n, k in by_n.items()]
            lines.append(f"  {name:<12}" + ("  ".join(cells) or "none"))
    return "\n".join(lines)


def figures(dirs: list[Path], labels: dict | None = None) -> list[Path]:
    """Per set: integration.{png,pdf,svg} and skill-load.{png,pdf,svg} in DIR/figures/,
    every model a line (compass/figures.py)."""
    from autocomp.compass.figures import integration_figure, skill_figure
    from autocomp.report.figures import save
    from autocomp.report.gather import short_label

    out = []
    for d in dirs:
        models = models_of(d)
        names = {m: (labels or {}).get(m) or short_label(m) for m in models}
        for stem, draw in (("integration", integration_figure), ("skill-load", skill_figure)):
            fig = draw(Path(d), models, names, THIN) if models else None
            if fig is not None:
                out += save(fig, Path(d) / "figures" / stem)
    return out

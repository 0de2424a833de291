"""COMPASS figures, one per analysis, every model a line (PNG, PDF and SVG in DIR/figures/):

  integration.*  composed (dashed) and decomposed (solid) R@1 against N, a panel per level
  skill-load.*   R@1 with negatives of one type against that type's count, a panel per
                 level x type (appendix E pooled over the other counts)

Error bars are image-clustered standard errors (statsmodels, as Table 3's); grey lines are
chance (composed 1/(N+1), decomposed 1/2^N, skill sets 1/5); hollow markers are cells
with fewer than THIN items; a panel whose count the others determine (every synthetic OA
concept has n_A = n_O) draws nothing and says so.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import numpy as np

from autocomp.compass.analysis import count_regression, fit_ols, integration_cells, skill_cells
from autocomp.compass.negatives import K_SKILL

PANELS = (("OA", "O"), ("OA", "A"), ("OR", "O"), ("OR", "R"), ("OAR", "O"), ("OAR", "A"),
          ("OAR", "R"))


def mean_se(values, groups) -> tuple[float, float]:
    """Mean (%) and its image-clustered SE (NaN with one image or no spread)."""
    y = 100.0 * np.asarray(values, dtype=float)
    if len(set(groups)) < 2:  # one image: no spread between clusters to measure
        return float(y.mean()), math.nan
    fit = fit_ols(y, np.zeros((len(y), 0)), groups, [])
    return float(y.mean()), fit["const"]["se"]


def integration_points(d: Path, model: str, results: Path | None = None) -> dict:
    """level -> {"composed"|"decomposed": {N: (mean, se, items)}}."""
    out: dict = defaultdict(lambda: {"composed": {}, "decomposed": {}})
    for (level, n), rows in integration_cells(d, model, results).items():
        groups = [r[2] for r in rows]
        for i, name in ((0, "composed"), (1, "decomposed")):
            out[level][name][n] = (*mean_se([r[i] for r in rows], groups), len(rows))
    return dict(out)


def skill_points(d: Path, model: str, results: Path | None = None) -> dict:
    """(level, primitive) -> {count of `primitive`: (mean, se, items)} on skill-`primitive`
    items."""
    out: dict = defaultdict(dict)
    for primitive in "OAR":
        for (level, x), rows in skill_cells(d, model, primitive, results).items():
            out[(level, primitive)][x] = (*mean_se([r[0] for r in rows], [r[1] for r in rows]),
                                     len(rows))
    return dict(out)


def _line(ax, points: dict, thin: int, **style):
    xs = sorted(points)
    ys = [points[x][0] for x in xs]
    se = [0.0 if math.isnan(points[x][1]) else points[x][1] for x in xs]
    line = ax.errorbar(xs, ys, yerr=se, capsize=2, lw=1.3, ms=4, **style)
    color = line[0].get_color()
    for x, y in zip(xs, ys, strict=True):
        if points[x][2] < thin:  # hollow: too few items to read much into
            # its own color given: a plot call without one would take the next color of
            # the cycle, and the lines after it would stop matching the legend
            ax.plot([x], [y], marker="o", ms=6, color=color, mfc="white", mec=color,
                    zorder=5)
    return line


def _integer_axis(ax, xs) -> None:
    """A tick at every count from the least to the greatest drawn (never 1.5 or 1.925),
    and R@1 from 0 to 100 with room for a line at either end."""
    lo, hi = int(min(xs)), int(max(xs))
    step = max(1, math.ceil((hi - lo + 1) / 12))
    ax.set_xticks(range(lo, hi + 1, step))
    ax.set_xlim(lo - 0.4, hi + 0.4)
    ax.set_yticks(range(0, 101, 20))
    ax.set_ylim(-3, 103)


def integration_figure(d: Path, models: list[str], labels: dict, thin: int,
                       results: Path | None = None):
    from autocomp.report.figures import pyplot

    plt = pyplot()
    data = {m: integration_points(d, m, results) for m in models}
    levels = [lv for lv in ("OAR", "OA", "OR") if any(lv in v for v in data.values())]
    if not levels:
        return None
    fig, axes = plt.subplots(1, len(levels), figsize=(4 * len(levels), 3.4), squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, level in zip(axes[0], levels, strict=True):
        ns = sorted({n for v in data.values() for n in v.get(level, {}).get("composed", {})})
        grid = np.linspace(min(ns), max(ns), 50) if ns else []
        ax.plot(grid, [100 / (n + 1) for n in grid], color="0.6", ls="--", lw=0.9)
        ax.plot(grid, [100 / 2 ** n for n in grid], color="0.6", ls="-", lw=0.9)
        for k, m in enumerate(models):
            pts = data[m].get(level)
            if not pts:
                continue
            c = colors[k % len(colors)]
            _line(ax, pts["decomposed"], thin, color=c, marker="o", ls="-",
                  label=labels.get(m, m))
            _line(ax, pts["composed"], thin, color=c, marker="s", ls="--")
        _integer_axis(ax, ns)
        ax.set_title(level)
        ax.set_xlabel("N (primitives in the caption)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("R@1 (%)")
    _legend(fig, axes[0][-1], thin, "solid: decomposed, dashed: composed; grey: chance")
    return fig


def skill_figure(d: Path, models: list[str], labels: dict, thin: int,
                 results: Path | None = None):
    from autocomp.report.figures import pyplot

    plt = pyplot()
    points = {m: skill_points(d, m, results) for m in models}  # each file read once per model
    panels = [p for p in PANELS if any(p in points[m] for m in models)]
    if not panels:
        return None
    cols = min(4, len(panels))
    rows = math.ceil(len(panels) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 3.1 * rows), squeeze=False)
    fits = {m: {f"skill-{k}": count_regression(d, m, f"skill-{k}", results) for k in "OAR"}
            for m in models}
    for ax, (level, primitive) in zip(axes.flat, panels, strict=False):
        count = f"n_{primitive}"
        collinear = any(fits[m][f"skill-{primitive}"].get(level, {}).get(count, {}).get("collinear")
                        for m in models)
        ax.set_title(f"{level}: {primitive} negatives", fontsize=10)
        ax.set_xlabel(count)
        if collinear:
            ax.text(0.5, 0.5, f"{count} is fixed by the\nother counts: not drawn",
                    ha="center", va="center", transform=ax.transAxes, fontsize=9, color="0.4")
            ax.set_xticks([])
            ax.set_yticks([])
            continue
        ax.axhline(100 / (K_SKILL + 1), color="0.6", lw=0.9)
        xs = []
        for m in models:
            pts = points[m].get((level, primitive))
            if pts:
                _line(ax, pts, thin, marker="o", label=labels.get(m, m))
                xs += list(pts)
        _integer_axis(ax, xs)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    for row in axes:
        row[0].set_ylabel("R@1 (%)")
    _legend(fig, axes.flat[0], thin, f"grey: chance (1 in {K_SKILL + 1})")
    return fig


def _legend(fig, ax, thin: int, note: str) -> None:
    handles, names = ax.get_legend_handles_labels()
    fig.legend(handles, names, loc="upper center", ncol=min(4, max(1, len(names))),
               fontsize=8, frameon=False, bbox_to_anchor=(0.5, 1.0))
    fig.text(0.5, 0.005, f"{note}; hollow: fewer than {thin} items; bars: image-clustered SE",
             ha="center", va="bottom", fontsize=7.5, color="0.3")
    fig.tight_layout(rect=(0, 0.04, 1, 0.9))

"""The figure of `autocomp report --agreement`: per comparison a panel of the models'
accuracy on one benchmark against the other, each point with both 95% intervals
(Clopper-Pearson over the items it is on), the line y = x, the panel titled with the pair
and tau-b and rho with their intervals. Models at the same place are drawn side by side
(0.8 points apart along x), not over one another, and the panel says so."""

from __future__ import annotations

import math
from pathlib import Path

from autocomp.report.figures import MARKERS, pyplot, save

MOST_PANELS = 12


def agreement_figure(rows: list[dict], stem: Path, labels: dict | None = None) -> tuple:
    """(the files written, how many comparisons were left out of the figure: the first
    MOST_PANELS with accuracies are drawn, every one is in the table)."""
    drawable = [r for r in rows if r.get("accuracy")]
    shown = drawable[:MOST_PANELS]
    if not shown:
        return [], 0
    plt = pyplot()
    cols = min(3, len(shown))
    lines = math.ceil(len(shown) / cols)
    fig, axes = plt.subplots(lines, cols, figsize=(4.2 * cols, 3.9 * lines), squeeze=False)
    models = list(dict.fromkeys(m for r in shown for m in r["models"]))
    colors = plt.get_cmap("tab10")
    for ax, r in zip(axes.flat, shown, strict=False):
        offsets, moved = _side_by_side(r)
        for m in r["models"]:
            k = models.index(m)
            (x, y), (ix, iy) = r["accuracy"][m][::-1], r["intervals"][m][::-1]
            dx = offsets[m]
            ax.errorbar(x + dx, y, xerr=[[x - ix[0]], [ix[1] - x]],
                        yerr=[[y - iy[0]], [iy[1] - y]], fmt=MARKERS[k % len(MARKERS)],
                        color=colors(k % 10), capsize=2, markersize=5,
                        label=(labels or {}).get(m, m))
        ax.plot([0, 100], [0, 100], color="0.6", linewidth=0.8, linestyle="--", zorder=0)
        ax.set_xlabel(f"{r['b']} accuracy (%)", fontsize=8)
        ax.set_ylabel(f"{r['a']} accuracy (%)", fontsize=8)
        ax.set_title(f"{r['a']} vs {r['b']}\ntau-b {_stat(r['kendall'])}, rho "
                     f"{_stat(r['spearman'])}, {len(r['models'])} models", fontsize=8)
        if moved:
            ax.text(0.02, 0.98, f"{moved} at the same place: side by side", fontsize=6,
                    transform=ax.transAxes, va="top")
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(shown):]:
        ax.set_visible(False)
    handles, names = axes.flat[0].get_legend_handles_labels()
    seen = dict(zip(names, handles, strict=True))
    for ax in list(axes.flat)[1:len(shown)]:
        h, n = ax.get_legend_handles_labels()
        seen.update({k: v for k, v in zip(n, h, strict=True) if k not in seen})
    fig.legend(list(seen.values()), list(seen), loc="lower center", fontsize=7,
               ncol=min(4, len(seen)), frameon=False)
    room = (0.25 * math.ceil(len(seen) / 4) + 0.15) / fig.get_figheight()
    fig.tight_layout(rect=(0, room, 1, 1))
    return save(fig, stem), len(drawable) - len(shown)


def _stat(got: dict | None) -> str:
    """"0.52 [0.10, 0.90]", or "-" where undefined."""
    if not got:
        return "-"
    iv = got.get("interval")
    return f"{got['value']:.2f}" + (f" [{iv[0]:.2f}, {iv[1]:.2f}]" if iv else "")


def _side_by_side(r: dict) -> tuple[dict, int]:
    """(model -> x offset in points, how many models share a place with another): models
    at one (x, y) spread 0.8 points apart around it."""
    places: dict = {}
    for m in r["models"]:
        places.setdefault(tuple(round(v, 1) for v in r["accuracy"][m]), []).append(m)
    out, moved = {}, 0
    for group in places.values():
        moved += len(group) if len(group) > 1 else 0
        for k, m in enumerate(group):
            out[m] = 0.8 * (k - (len(group) - 1) / 2)
    return out, moved

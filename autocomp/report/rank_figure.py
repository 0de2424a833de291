"""The figure of `autocomp report --agreement`: per comparison a panel of the models'
accuracy on one benchmark against the other, each point with both 95% intervals
(Clopper-Pearson over the items it is on), the panel titled with tau and rho."""

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
        for m in r["models"]:
            k = models.index(m)
            (x, y), (ix, iy) = r["accuracy"][m][::-1], r["intervals"][m][::-1]
            ax.errorbar(x, y, xerr=[[x - ix[0]], [ix[1] - x]], yerr=[[y - iy[0]], [iy[1] - y]],
                        fmt=MARKERS[k % len(MARKERS)], color=colors(k % 10), capsize=2,
                        markersize=5, label=(labels or {}).get(m, m))
        ax.set_xlabel(f"{r['b']} accuracy (%)", fontsize=8)
        ax.set_ylabel(f"{r['a']} accuracy (%)", fontsize=8)
        tau = r["kendall"]["value"] if r["kendall"] else None
        rho = r["spearman"]["value"] if r["spearman"] else None
        ax.set_title(f"tau-b {_num(tau)}, rho {_num(rho)}, {len(r['models'])} models",
                     fontsize=9)
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


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"

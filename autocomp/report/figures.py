"""Figures of a run, as PNG in `<run>/figures/`: the survival funnel, and the distribution
of validated samples over each task's values (Auto-Comp Fig. 3: per color, per relation)."""

from __future__ import annotations

from pathlib import Path

from autocomp.core.records import TRACKS
from autocomp.report.funnel import columns


def pyplot():
    """matplotlib.pyplot on the file-only Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def funnel_figure(rows: list[dict], path: Path) -> Path:
    plt = pyplot()
    labels = dict(columns())
    stages = {t: ["captions", *(k for k in labels if k.startswith(f"{t}:"))] for t in TRACKS}
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, track in zip(axes, TRACKS, strict=True):
        cols = stages[track]
        xs = list(range(len(cols) + 1))
        for r in rows:
            ys = [100.0, *[float("nan") if r["percent"][c] is None else r["percent"][c]
                           for c in cols]]  # a stage not run yet: no point
            ax.plot(xs, ys, marker="o", label=f"{r['task']} N={r['n']}")
        ax.set_xticks(xs, ["Concepts", *[labels[c].replace("Min ", "").replace("Ctx ", "")
                                         for c in cols]])
        ax.set_title(f"{track.capitalize()} track")
        ax.set_ylim(0, 105)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("surviving concepts (%)")
    axes[1].legend(fontsize=8, loc="lower left")
    fig.suptitle("Survival after each validation stage")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def distribution_figure(values: dict, path: Path) -> Path:
    plt = pyplot()
    tasks = sorted(values)
    fig, axes = plt.subplots(1, max(1, len(tasks)), figsize=(5.5 * max(1, len(tasks)), 4),
                             squeeze=False)
    for ax, task in zip(axes[0], tasks, strict=False):
        # most samples first; equal counts by name, so the same run draws the same bytes
        names = sorted({v for tr in values[task].values() for v in tr},
                       key=lambda v: (-sum(values[task][t].get(v, 0) for t in TRACKS), v))
        bottom = [0] * len(names)
        for track in TRACKS:
            counts = [values[task][track].get(v, 0) for v in names]
            ax.bar(names, counts, bottom=bottom, label=track)
            bottom = [b + c for b, c in zip(bottom, counts, strict=True)]
        ax.set_title(f"{task}: validated samples per value")
        ax.tick_params(axis="x", rotation=60, labelsize=8)
        ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path

"""Score against N, a line per model, a panel per metric (with 95% intervals)."""

from __future__ import annotations

from pathlib import Path

from autocomp.report.figures import legend_columns, legend_room, pyplot, save, style
from autocomp.t2i.summary import columns


def by_n_figure(summary: dict, stem: Path, labels: dict | None = None) -> list[Path]:
    """`stem`.png/.pdf/.svg; None of a metric no model has."""
    labels = labels or {}
    heads = columns()
    keys = [k for k in heads if any(
        (got.get(k) or None) for s in summary.values() for got in s["by_n"].values())]
    if not keys:  # no model scored any image (every image missing): nothing to draw
        return []
    plt = pyplot()
    fig, axes = plt.subplots(1, len(keys), figsize=(3.2 * len(keys), 3.2), squeeze=False)
    names = []
    for i, (model, s) in enumerate(summary.items()):
        names.append(labels.get(model, model))
        for ax, key in zip(axes[0], keys, strict=True):
            points = [(int(n), got[key]) for n, got in s["by_n"].items() if got.get(key)]
            if not points:
                continue
            xs = [n for n, _ in points]
            ys = [g["mean"] for _, g in points]
            err = [[g["mean"] - g["interval"][0] for _, g in points],
                   [g["interval"][1] - g["mean"] for _, g in points]]
            ax.errorbar(xs, ys, yerr=err, capsize=3, label=names[-1], **style(i))
    ns = sorted({int(n) for s in summary.values() for n in s["by_n"]})
    for ax, key in zip(axes[0], keys, strict=True):
        ax.set_title(heads[key], fontsize=9)
        ax.set_xlabel("N (bindings per prompt)", fontsize=8)
        ax.set_xticks(ns)  # N is a count: whole numbers, not 2.0, 2.2, ...
        ax.set_ylim(0, 101)  # every metric is on a 0-100 scale: panels compare at a glance
        ax.tick_params(labelsize=8)
        ax.grid(alpha=0.3)
    ncol = legend_columns(fig, names)
    room = legend_room(fig, len(names), ncol)
    handles, texts = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, texts, loc="lower center", ncol=ncol, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, room, 1, 1))
    return save(fig, stem)

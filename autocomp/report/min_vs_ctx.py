"""The Min-vs-Ctx figure (Table 5 drawn): on the paired set, contextual minus minimal
accuracy per model, grouped by task and N, a panel for swap and one for confusion. Every
bar carries its value; a zero is a marker on the axis with "0.0", a missing cell (a model
or track not scored) is "n/a", so the two never look alike. Where the bars are too narrow
to write on (many models and groups), zero stays a marker and missing is a grey cross.
Each bar carries its 95% interval (Newcombe's paired score interval over the concepts in
both tracks, as Table 5 prints it) as an error bar, and the paired items are written under
each group.
"""

from __future__ import annotations

from pathlib import Path

from autocomp.report.figures import legend_columns, legend_room, pyplot, save
from autocomp.report.gather import short_label
from autocomp.report.table5 import delta_text
from autocomp.report.table_format import index_results

MIN_VS_CTX_NEGATIVES = (("swap", "Swap"), ("confusion", "Confusion"))


def deltas(results, intervals: dict | None = None) -> tuple[list[str], list[tuple], dict]:
    """Models, (task, N) groups and (kind, model, task, N) -> Ctx - Min points (None where
    either track is missing) for the kinds with results; `intervals`, when given, gets the
    same keys -> the paired comparison (delta, low, high, n) where predictions are at hand."""
    from autocomp.report.paired import min_vs_ctx

    idx, models = index_results(results)
    kinds = {r["kind"] for r in results}
    compared = dict(MIN_VS_CTX_NEGATIVES)
    groups = sorted({(r["task"], r["n"]) for r in results if r["kind"] in compared})
    out = {}
    for kind, _ in MIN_VS_CTX_NEGATIVES:
        if kind not in kinds:
            continue
        for m in models:
            for t, n in groups:
                acc = [(idx.get((m, t, n, track, kind)) or {}).get("metrics", {}).get(
                    "accuracy_paired") for track in ("contextual", "minimal")]
                out[(kind, m, t, n)] = (None if None in acc else acc[0] - acc[1])
                if intervals is not None and out[(kind, m, t, n)] is not None:
                    intervals[(kind, m, t, n)] = min_vs_ctx(idx, m, t, n, kind)
    return models, groups, out


def min_vs_ctx_figure(results, path: Path, labels=None) -> Path | None:
    """The figure as `path` (PNG) with PDF and SVG beside it; None without paired results."""
    fig = draw_min_vs_ctx(results, labels)
    return None if fig is None else save(fig, path.with_suffix(""))[0]


def draw_min_vs_ctx(results, labels=None):
    labels = labels or {}
    ci: dict = {}
    models, groups, data = deltas(results, ci)
    if all(v is None for v in data.values()):
        return None
    kinds = [(k, title) for k, title in MIN_VS_CTX_NEGATIVES if any(key[0] == k for key in data)]
    plt = pyplot()
    width = 0.8 / len(models)
    fig_w = min(16.0, max(6.0, 1.2 + len(groups) * (0.55 + 0.32 * len(models))))
    fig, axes = plt.subplots(len(kinds), 1, figsize=(fig_w, 1.2 + 2.9 * len(kinds)),
                             sharex=True, squeeze=False)
    values = [v for v in data.values() if v is not None]
    values += [x for d in ci.values() if d for x in (d["low"], d["high"])]
    lo, hi = min(0.0, *values), max(0.0, *values)
    pad = max(4.0, 0.45 * (hi - lo))  # room for the labels above and below the bars
    # a value on each bar where the bars are wide enough for it (0.13 in: 7 pt text)
    written = (fig_w - 1.2) / len(groups) * width >= 0.13
    looks = [bar_look(i, len(models)) for i in range(len(models))]
    for ax, (kind, title) in zip(axes[:, 0], kinds, strict=True):
        for i, m in enumerate(models):
            for g, (t, n) in enumerate(groups):
                x = g + (i - (len(models) - 1) / 2) * width
                d = ci.get((kind, m, t, n))
                _bar(ax, x, width, data.get((kind, m, t, n)), looks[i], pad, written,
                     (d["low"], d["high"]) if d else None)
                if d:
                    ax.errorbar([x], [d["delta"]], yerr=[[d["delta"] - d["low"]],
                                                         [d["high"] - d["delta"]]],
                                fmt="none", ecolor="black", elinewidth=0.8, capsize=2,
                                zorder=4)
        ax.axhline(0, color="black", lw=0.8)
        ax.set_ylim(lo - (pad if lo < 0 else 0.4 * pad), hi + pad)
        ax.set_ylabel("Ctx − Min (points)")
        ax.set_title(f"{title}: paired set, context helps (> 0) or hurts (< 0)", fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    axes[-1, 0].set_xticks(range(len(groups)), [f"{t}\nN={n}{_paired_n(ci, t, n)}"
                                                for t, n in groups], fontsize=8)
    axes[-1, 0].set_xlim(-0.5, len(groups) - 0.5)
    from matplotlib.patches import Patch

    names = [labels.get(m) or short_label(m) for m in models]
    ncol = legend_columns(fig, names)
    fig.legend([Patch(**look, edgecolor="0.3") for look in looks], names,
               loc="lower center", ncol=ncol, fontsize=8, frameon=False)
    key = "95% interval: Newcombe, paired" if ci else "no predictions: no intervals"
    fig.text(0.99, 0.995, ("" if written else "◆ 0.0   × not scored   (values: Table 5)   ")
             + key, ha="right", va="top", fontsize=7, color="0.3")
    fig.tight_layout(rect=(0, legend_room(fig, len(models), ncol), 1, 0.98), h_pad=2.0)
    return fig


def _paired_n(ci: dict, task: str, n: int) -> str:
    """"\nn=77" (or a range) under a group: the paired items its bars compare."""
    got = sorted({d["n"] for (_, _, t, k), d in ci.items() if d and (t, k) == (task, n)})
    if not got:
        return ""
    return f"\nn={got[0]}" if len(got) == 1 else f"\nn={got[0]}-{got[-1]}"


def bar_look(i: int, models: int) -> dict:
    """The i-th model's fill: the ten default colors, tab20 past ten models, hatched past
    twenty, so no two models look alike."""
    if models <= 10:
        return {"facecolor": f"C{i}"}
    from matplotlib import colormaps

    return {"facecolor": colormaps["tab20"](i % 20), "hatch": ("", "//", "..", "xx")[i // 20 % 4]}


def _bar(ax, x: float, width: float, value, look: dict, pad: float, written: bool,
         reach: tuple | None = None) -> None:
    """One model's bar with its value written past it (and past its interval, `reach`):
    zero as a marker, missing as n/a (a grey cross where the bars are too narrow to write
    on)."""
    text = dict(ha="center", fontsize=7, rotation=90)
    if value is None:
        if written:
            ax.text(x, 0.15 * pad, "n/a", va="bottom", color="0.45", **text)
        else:
            ax.plot([x], [0], marker="x", ms=4, color="0.45", zorder=3)
        return
    label = delta_text(value, 0.0)  # as Table 5 prints it
    if float(label) == 0:  # a bar of no height would not show: a marker on the axis
        ax.plot([x], [0], marker="D", ms=4, color=look["facecolor"], mec="black", mew=0.5,
                zorder=3)
        if written:
            ax.text(x, max(0.15 * pad, (reach or (0, 0))[1] + 0.05 * pad), "0.0",
                    va="bottom", **text)
        return
    ax.bar(x, value, width, edgecolor="0.3", linewidth=0.5, **look)
    if written:
        end = value if reach is None else (reach[1] if value > 0 else reach[0])
        ax.text(x, end + (0.05 if value > 0 else -0.05) * pad, label,
                va="bottom" if value > 0 else "top", **text)

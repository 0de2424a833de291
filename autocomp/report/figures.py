"""Figures of a run in `<run>/figures/`, each as PNG, PDF and SVG (the same bytes for the
same run: no dates in the vector files, fixed SVG ids):

  funnel.*        survival after each validation stage, a panel per track; every (task, N)
                  its own color, marker and line style, the y axis zoomed to the data
  distribution.*  validated images per value (Auto-Comp Fig. 3), a panel per task x
                  vocabulary (scenes: sizes, textures, colors and relations apart), minimal
                  solid and contextual hatched, color values drawn in their own colors
"""

from __future__ import annotations

import math
from pathlib import Path

from autocomp.core.records import TRACKS, atomic_open
from autocomp.report.funnel import columns

FORMATS = ("png", "pdf", "svg")
KEY_FIELD = "autocomp-drawn-from"  # the PNG text field holding figure_key
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
LINESTYLES = ("-", "--", "-.", ":")
MOST_VALUES = 25  # a panel shows at most this many values (the most validated)


def pyplot():
    """matplotlib.pyplot on the file-only Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "autocomp"  # SVG ids from a fixed salt: same bytes
    return plt


def save(fig, stem: Path, key: str | None = None) -> list[Path]:
    """`stem`.png, .pdf and .svg (PNG first); closes the figure. `key` (figure_key): what
    it was drawn from, recorded in the PNG so the next call can skip it (drawn_already)."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    out = []
    for fmt in FORMATS:
        path = stem.with_suffix(f".{fmt}")
        meta = {"png": {KEY_FIELD: key} if key else None, "pdf": {"CreationDate": None},
                "svg": {"Date": None}}[fmt]
        with atomic_open(path, "wb") as fh:  # a link standing there is replaced, not followed
            fig.savefig(fh, format=fmt, dpi=150 if fmt == "png" else None, metadata=meta)
        out.append(path)
    pyplot().close(fig)
    return out


def figure_key(name: str, *inputs) -> str:
    """A digest of what a figure is drawn from, with the code and the matplotlib that draw
    it: the same key, the same bytes."""
    import hashlib
    import json
    from importlib.metadata import version

    try:
        data = json.dumps([name, version("matplotlib"), inputs], sort_keys=True, default=str)
    except TypeError:  # a key json cannot write: the inputs' repr (ordered as built)
        data = repr([name, version("matplotlib"), inputs])
    return hashlib.sha256(Path(__file__).read_bytes() + data.encode()).hexdigest()


def drawn_already(stem: Path, key: str) -> bool:
    """Whether `stem`'s PNG, PDF and SVG are there (plain files, not links) and the PNG was
    drawn from `key`: a run summarised again with nothing changed keeps its figures rather
    than drawing them again (1.6 s of the 2.3 s `autocomp run` takes on a done demo run)."""
    from PIL import Image

    paths = [stem.with_suffix(f".{fmt}") for fmt in FORMATS]
    if not all(p.is_file() and not p.is_symlink() for p in paths):
        return False
    try:
        with Image.open(paths[0]) as image:
            return image.text.get(KEY_FIELD) == key
    except (OSError, ValueError, SyntaxError):  # a damaged PNG is drawn again
        return False


def legend_room(fig, entries: int, ncol: int) -> float:
    """The share of the figure's height a legend of `entries` in `ncol` columns at the
    bottom needs (for tight_layout's rect)."""
    rows = math.ceil(entries / ncol)
    return (0.22 * rows + 0.12) / fig.get_figheight()


def legend_columns(fig, names: list[str], most: int = 4) -> int:
    """Columns for a legend along the figure's width: as many as fit (at most `most`)."""
    longest = max(map(len, names), default=1)
    fits = int(fig.get_figwidth() * 72 / (5.2 * longest + 40))  # 8 pt text and its key
    return max(1, min(len(names), most, fits))


def style(i: int) -> dict:
    """The i-th line's color, marker and line style: no two lines of a figure alike."""
    return {"color": f"C{i % 10}", "marker": MARKERS[i % len(MARKERS)],
            "linestyle": LINESTYLES[(i // 2) % len(LINESTYLES)]}


def funnel_figure(rows: list[dict], path: Path) -> Path:
    """The funnel as `path` (PNG) with PDF and SVG beside it (kept if drawn from the same
    rows already)."""
    stem, key = path.with_suffix(""), figure_key("funnel", rows)
    if drawn_already(stem, key):
        return stem.with_suffix(".png")
    return save(draw_funnel(rows), stem, key)[0]


def draw_funnel(rows: list[dict]):
    """A row of panels per task (minimal and contextual track side by side), a line per N
    in each, every marker on its stage: identical lines differ in marker and dash, never
    shifted off the stage they stand for."""
    plt = pyplot()
    labels = dict(columns())
    # one stage axis for both tracks (a check the minimal track alone runs, such as the
    # background, leaves a gap in the contextual panel instead of shifting later stages)
    names = list(dict.fromkeys(k.split(":", 1)[1] for k in labels if ":" in k))
    stages = {t: ["captions", *(f"{t}:{n}" for n in names)] for t in TRACKS}
    short = {n: next(labels[k] for k in labels if k.endswith(f":{n}")).split(" ", 1)[1]
             for n in names}
    tasks = list(dict.fromkeys(r["task"] for r in rows)) or [""]
    ns = sorted({r["n"] for r in rows})
    fig, axes = plt.subplots(len(tasks), 2, figsize=(11, 1.3 + 2.7 * len(tasks)),
                             sharey=True, squeeze=False)
    lowest = 100.0
    for row_axes, task in zip(axes, tasks, strict=True):
        for ax, track in zip(row_axes, TRACKS, strict=True):
            cols = stages[track]
            for r in (r for r in rows if r["task"] == task):
                points = [(0, 100.0)] + [  # a stage not run yet, or not of this track: none
                    (i, r["percent"][c]) for i, c in enumerate(cols, 1)
                    if c in labels and r["percent"].get(c) is not None]
                lowest = min([lowest, *(y for _, y in points)])
                ax.plot([x for x, _ in points], [y for _, y in points], lw=1.4, ms=6,
                        fillstyle="none", label=f"N={r['n']}", **style(ns.index(r["n"])))
            ax.set_xticks(range(len(cols) + 1),
                          ["Concepts", "Captions", *[short[n] if f"{track}:{n}" in labels
                                                     else f"({short[n]}: n/a)"
                                                     for n in names]])
            ax.set_title(f"{task}: {track} track" if task else f"{track.capitalize()} track",
                         fontsize=10)
            ax.grid(alpha=0.3)
        row_axes[0].set_ylabel("surviving (%)")
    bottom = max(0.0, 5 * math.floor((lowest - 3) / 5))  # zoomed: the drop is what matters
    axes[0][0].set_ylim(bottom, 101.5)
    axes[0][0].set_yticks(range(int(bottom), 101, 5 if 100 - bottom <= 40 else 10))
    names = [f"N={n}" for n in ns]
    handles = [plt.Line2D([], [], lw=1.4, ms=6, fillstyle="none", **style(i))
               for i in range(len(ns))]
    ncol = legend_columns(fig, names)
    fig.legend(handles, names, loc="lower center", ncol=ncol, fontsize=8, frameon=False)
    fig.suptitle("Survival after each validation stage (% of concepts)")
    fig.tight_layout(rect=(0, legend_room(fig, len(names), ncol), 1,
                           1 - 0.35 / fig.get_figheight()))  # room for the title
    return fig


def _bar_colors(values, colors):
    """Each value's own color where every value has one, else None (the panel's one color)."""
    if values and all(colors.get(v) for v in values):
        return [tuple(c / 255 for c in colors[v]) for v in values]
    return None


def _contrast(rgb) -> str:
    """Hatching that shows on this fill: white on dark colors, black on light ones."""
    return "white" if 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] < 0.5 else "black"


def distribution_panel(ax, title: str, counts: dict, colors: dict,
                       order: dict | None = None) -> None:
    """Validated images per value of one vocabulary: minimal and contextual side by side,
    in the vocabulary's own order (`order`: value -> its place; "two, three, four", not by
    count), else most samples first; over MOST_VALUES values, the most sampled."""
    from matplotlib.ticker import MaxNLocator

    total = {v: sum(counts[t].get(v, 0) for t in TRACKS)
             for v in {v for t in TRACKS for v in counts[t]}}
    # equal counts by name, so the same run draws the same bytes
    names = sorted(total, key=lambda v: (-total[v], v))
    if len(names) > MOST_VALUES:
        title += f" (top {MOST_VALUES} of {len(names)})"
        names = names[:MOST_VALUES]
    if order:
        names.sort(key=lambda v: (order.get(v, len(order)), v))
    fills = _bar_colors(names, colors)
    width = 0.4
    for j, track in enumerate(TRACKS):
        xs = [i + (j - 0.5) * width for i in range(len(names))]
        heights = [counts[track].get(v, 0) for v in names]
        bars = ax.bar(xs, heights, width, color=fills or "C0", edgecolor="0.3",
                      linewidth=0.6, hatch="////" if j else None)
        for bar in bars if j else ():
            bar.set_hatchcolor(_contrast(bar.get_facecolor()))
        for x, h in zip(xs, heights, strict=True):
            if h == 0:  # zero is drawn as zero, not left blank
                ax.text(x, 0, "0", ha="center", va="bottom", fontsize=6, color="0.3")
    upright = len(names) * max(map(len, names), default=0) > 64  # long or many: upright
    ax.set_xticks(range(len(names)), names, rotation=90 if upright else 0,
                  ha="right" if upright else "center", va="center" if upright else "top",
                  fontsize=8, rotation_mode="anchor")
    ax.set_xlim(-0.6, len(names) - 0.4)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("validated images")
    ax.set_title(title, fontsize=10)
    ax.grid(axis="y", alpha=0.3)


def distribution_figure(values: dict, path: Path, colors: dict | None = None,
                        order: dict | None = None) -> Path:
    """`values`: task -> vocabulary -> track -> value -> validated images; `colors`:
    value -> RGB (0-255) for values that are colors; `order`: value -> its place in its
    vocabulary. PNG at `path`, PDF and SVG beside (kept if drawn from the same already)."""
    stem, key = path.with_suffix(""), figure_key("distribution", values, colors, order)
    if drawn_already(stem, key):
        return stem.with_suffix(".png")
    return save(draw_distribution(values, colors, order), stem, key)[0]


def draw_distribution(values: dict, colors: dict | None = None, order: dict | None = None):
    from matplotlib.patches import Patch

    plt = pyplot()
    panels = [(f"{task}: {vocab}", values[task][vocab])
              for task in sorted(values) for vocab in sorted(values[task])]
    cols = min(3, max(1, len(panels)))
    rows = max(1, math.ceil(len(panels) / cols))
    most = max((len({v for t in c.values() for v in t}) for _, c in panels), default=0)
    width = max(5.2, 1.2 + 0.2 * min(most, MOST_VALUES))  # a value's bars ~0.2 in wide
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, 3.9 * rows), squeeze=False)
    for ax, (title, counts) in zip(axes.flat, panels, strict=False):
        distribution_panel(ax, title, counts, colors or {}, order)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    grey = "0.75"
    fig.legend([Patch(facecolor=grey, edgecolor="0.3"),
                Patch(facecolor=grey, edgecolor="0.3", hatch="////")],
               [f"{t} track" for t in TRACKS], loc="upper right", fontsize=8, ncol=2,
               frameon=False)
    fig.suptitle("Validated images per value", x=0.02, ha="left")
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    return fig

"""The Auto-Comp figures at paper quality: Min-vs-Ctx with zeros drawn as zeros and missing
cells as n/a, the distribution a panel per vocabulary with colors in their own colors and
integer counts, the funnel with lines that cannot hide each other; no text overlapping
(text bounding boxes), and PDF and SVG beside every PNG."""

import pytest

from autocomp.report.figures import draw_distribution, draw_funnel, funnel_figure
from autocomp.report.min_vs_ctx import draw_min_vs_ctx, min_vs_ctx_figure

MODELS = ["open_clip:ViT-B-32@laion2b_s34b_b79k", "hf:google/siglip-base-patch16-224",
          "reference:random"]
GROUPS = [("shape_color", 2), ("shape_color", 3), ("shape_position", 2)]


def _texts(fig):
    """Every visible piece of text: titles, axis and tick labels, bar labels, legends."""
    out = list(dict.fromkeys([*([fig._suptitle] if fig._suptitle else []), *fig.texts]))
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        lo, hi = sorted(ax.get_xlim())
        out += [t for t in ax.get_xticklabels() if lo <= t.get_position()[0] <= hi]
        lo, hi = sorted(ax.get_ylim())  # labels of ticks outside the view are not drawn
        out += [t for t in ax.get_yticklabels() if lo <= t.get_position()[1] <= hi]
        out += [ax.title, ax.yaxis.label, *ax.texts]
    for legend in fig.legends:
        out += legend.get_texts()
    return [t for t in out if t.get_visible() and t.get_text()]


def _overlaps(fig) -> list[tuple[str, str]]:
    fig.canvas.draw()  # the layout as saved
    renderer = fig.canvas.get_renderer()
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in _texts(fig)]
    page = fig.bbox
    cut = [(a, "the figure's edge") for a, box in boxes  # every text inside the figure
           if box.x0 < page.x0 or box.x1 > page.x1 or box.y0 < page.y0 or box.y1 > page.y1]
    return cut + [(a, b) for i, (a, ba) in enumerate(boxes) for b, bb in boxes[i + 1:]
                  if ba.overlaps(bb)]


def _paired(acc: dict) -> list[dict]:
    """Eval cells: acc[(model, task, n, kind)] = (minimal, contextual) paired accuracy."""
    return [{"model": m, "task": t, "n": n, "kind": kind, "track": track,
             "metrics": {"accuracy_paired": value}}
            for (m, t, n, kind), pair in acc.items()
            for track, value in zip(("minimal", "contextual"), pair, strict=True)
            if value is not None]


@pytest.fixture
def results():
    acc = {}
    for i, m in enumerate(MODELS):
        for j, (t, n) in enumerate(GROUPS):
            acc[(m, t, n, "swap")] = (50.0 + i, 50.0 + i + 3 * j - 2)
            acc[(m, t, n, "confusion")] = (30.0, 29.0 - j - i)
    acc[(MODELS[0], "shape_color", 2, "swap")] = (61.0, 61.0)  # zero: context changes nothing
    acc[(MODELS[1], "shape_position", 2, "confusion")] = (40.0, None)  # Ctx not scored
    return _paired(acc)


def test_min_vs_ctx_zero_is_drawn_and_missing_is_na(results, tmp_path):
    labels = {MODELS[0]: "ViT-B-32", MODELS[1]: "SigLIP-B"}
    fig = draw_min_vs_ctx(results, labels)
    swap, confusion = fig.axes
    assert swap.get_title().startswith("Swap") and confusion.get_title().startswith("Confusion")
    # the zero (first model, first group): a marker on the axis, labelled 0.0
    markers = [ln for ln in swap.get_lines() if ln.get_marker() == "D"]
    assert [(ln.get_ydata()[0]) for ln in markers] == [0]
    x0 = markers[0].get_xdata()[0]
    renderer = fig.canvas.get_renderer()
    box = markers[0].get_window_extent(renderer)
    assert box.width > 3 and box.height > 3  # visible, not a bar of no height
    zeros = [t for t in swap.texts if t.get_text() == "0.0"]
    assert len(zeros) == 1 and zeros[0].get_position()[0] == pytest.approx(x0)
    # the missing cell is n/a, never 0.0; every other cell carries its delta
    assert [t.get_text() for t in confusion.texts].count("n/a") == 1
    assert [t.get_text() for t in swap.texts].count("n/a") == 0
    assert "0.0" not in [t.get_text() for t in confusion.texts]
    assert len(swap.patches) == len(MODELS) * len(GROUPS) - 1
    assert {"+1.0", "-2.0"} <= {t.get_text() for t in swap.texts}
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["ViT-B-32", "SigLIP-B",
                                                                  "reference:random"]
    assert not _overlaps(fig)
    unlabelled = draw_min_vs_ctx(results)  # the short forms, and they fit
    assert [t.get_text() for t in unlabelled.legends[0].get_texts()] == [
        "ViT-B-32 (laion2b)", "siglip-base-patch16-224", "reference:random"]
    assert not _overlaps(unlabelled)
    path = min_vs_ctx_figure(results, tmp_path / "figures" / "min_vs_ctx.png", labels)
    for fmt in ("png", "pdf", "svg"):
        assert path.with_suffix(f".{fmt}").stat().st_size > 1000


def test_min_vs_ctx_without_paired_results_draws_nothing():
    cells = [{"model": "m", "task": "t", "n": 2, "kind": "swap", "track": "minimal",
              "metrics": {"accuracy_paired": 50.0}}]
    assert draw_min_vs_ctx(cells) is None


VALUES = {"scenes": {
    "colors": {"minimal": {"red": 12, "white": 7, "navy": 0}, "contextual": {"red": 9,
                                                                              "white": 8}},
    "relations": {"minimal": {"to the left of": 30, "under": 21},
                  "contextual": {"to the left of": 28, "under": 25}},
    "sizes": {"minimal": {"large": 3, "small": 5}, "contextual": {"large": 4, "small": 1}}}}
RGB = {"red": (255, 0, 0), "white": (255, 255, 255), "navy": (0, 0, 128)}


def test_distribution_panel_per_vocabulary_in_the_values_colors():
    fig = draw_distribution(VALUES, RGB)
    panels = {ax.get_title(): ax for ax in fig.axes if ax.get_visible()}
    assert sorted(panels) == ["scenes: colors", "scenes: relations", "scenes: sizes"]
    colors = panels["scenes: colors"]
    names = [t.get_text() for t in colors.get_xticklabels()]
    assert names == ["red", "white", "navy"]  # most validated first
    minimal, contextual = colors.patches[:3], colors.patches[3:]
    assert minimal[0].get_facecolor()[:3] == (1.0, 0.0, 0.0)
    assert contextual[2].get_facecolor()[:3] == pytest.approx((0, 0, 128 / 255))
    assert contextual[0].get_hatch() and not minimal[0].get_hatch()
    assert [p.get_height() for p in minimal] == [12, 7, 0]
    assert [t.get_text() for t in colors.texts].count("0") == 2  # navy: 0 in both tracks
    for ax in panels.values():
        assert ax.get_ylabel() == "validated images"
        assert all(float(t).is_integer() for t in ax.get_yticks())  # counts: 1, 2, not 1.5
    sizes = panels["scenes: sizes"]
    assert len({p.get_facecolor() for p in sizes.patches}) == 1  # not colors: one color
    assert not _overlaps(fig)


def test_distribution_follows_the_vocabularys_order():
    """Count words were drawn "three, two, four" (most validated first)."""
    values = {"shape_count": {"numbers": {"minimal": {"three": 9, "two": 5, "four": 7},
                                          "contextual": {"two": 1}}}}
    fig = draw_distribution(values, order={"one": 0, "two": 1, "three": 2, "four": 3})
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["two", "three", "four"]


def test_distribution_many_values_slant_without_overlap():
    names = [f"color number {i}" for i in range(30)]
    values = {"t": {"colors": {"minimal": {n: i for i, n in enumerate(names)},
                               "contextual": {}}}}
    fig = draw_distribution(values)
    ax = fig.axes[0]
    assert "top 25 of 30" in ax.get_title()
    assert ax.get_xticklabels()[0].get_rotation() == 90
    assert not _overlaps(fig)


def _rows(percents: dict) -> list[dict]:
    keys = ["captions", "minimal:objects", "minimal:background", "minimal:attributes",
            "contextual:objects", "contextual:attributes"]
    return [{"task": t, "n": n, "percent": dict(zip(keys, p, strict=True))}
            for (t, n), p in percents.items()]


def test_funnel_lines_distinguishable_and_axis_zoomed(tmp_path):
    """A row of panels per task, a line per N; identical lines differ in look, and every
    marker sits on its stage (a run of 8 tasks once drew 16 lines, jittered, in one panel)."""
    same = [100.0, 97.0, 95.0, 90.0, 96.0, 91.0]
    rows = _rows({("shape_color", 2): same, ("shape_color", 3): same,  # identical lines
                  ("shape_position", 2): [100.0, 99.0, 98.0, 86.0, 97.0, 92.0],
                  ("shape_position", 3): [100.0, 100.0, None, None, None, None]})
    fig = draw_funnel(rows)
    assert [ax.get_title() for ax in fig.axes] == [
        "shape_color: minimal track", "shape_color: contextual track",
        "shape_position: minimal track", "shape_position: contextual track"]
    for ax in fig.axes:
        lines = ax.get_lines()
        assert len(lines) == 2
        looks = {(ln.get_color(), ln.get_marker(), ln.get_linestyle()) for ln in lines}
        assert len(looks) == 2  # no two alike
        # every marker on its stage: one stage axis for both tracks (issue 53: the
        # contextual panel, with no background check, drew its attributes where the
        # minimal panel draws the background)
        ticks = [t.get_text() for t in ax.get_xticklabels()]
        assert ticks[:3] == ["Concepts", "Captions", "Obj."] and ticks[4] == "Attr."
        assert ticks[3] == ("BG" if "minimal" in ax.get_title() else "(BG: n/a)")
        full = [0, 1, 2, 3, 4] if "minimal" in ax.get_title() else [0, 1, 2, 4]
        assert all(list(ln.get_xdata()) == full[:len(ln.get_xdata())] for ln in lines)
        bottom, top = ax.get_ylim()
        assert 80 <= bottom < 86 and 100 < top <= 102  # zoomed to the data
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["N=2", "N=3"]
    assert not _overlaps(fig)
    eight = draw_funnel(_rows({(f"task_{k}", n): same for k in range(8) for n in (2, 3)}))
    assert len(eight.axes) == 16 and not _overlaps(eight)  # the title above 8 rows too
    path = funnel_figure(rows, tmp_path / "funnel.png")
    assert all(path.with_suffix(f".{f}").stat().st_size > 1000 for f in ("png", "pdf", "svg"))


def test_min_vs_ctx_many_models_stay_apart_and_readable():
    models = [f"hf:org/model-{i}" for i in range(23)]
    groups = [(f"task{g}", n) for g in range(4) for n in (2, 3)]
    acc = {(m, t, n, "swap"): (50.0, 50.0 + (i % 7) - 3) for i, m in enumerate(models)
           for t, n in groups}
    acc[(models[5], "task0", 2, "swap")] = (50.0, None)
    fig = draw_min_vs_ctx(_paired(acc))
    (ax,) = fig.axes
    assert not ax.texts  # too narrow to write on: no labels piled on each other
    crosses = [ln for ln in ax.get_lines() if ln.get_marker() == "x"]
    zeros = [ln for ln in ax.get_lines() if ln.get_marker() == "D"]
    assert len(crosses) == 1 and len(zeros) == sum(1 for i in range(23) if i % 7 == 3) * 8
    looks = {(tuple(p.get_facecolor()), p.get_hatch()) for p in fig.legends[0].get_patches()}
    assert len(looks) == 23  # past ten models: no two alike
    assert not _overlaps(fig)


def test_a_figure_drawn_from_the_same_inputs_is_kept_and_any_change_draws_it_again(tmp_path):
    """`autocomp run` on a done run summarises it again: its figures are kept, not drawn
    again, when the PNG records the same inputs (figure_key); other rows, a missing PDF or
    SVG, or a damaged PNG draw all three again."""
    from autocomp.report.figures import KEY_FIELD, figure_key

    rows = _rows({("shape_color", 2): [100.0, 97.0, 95.0, 90.0, 96.0, 91.0]})
    png = funnel_figure(rows, tmp_path / "funnel.png")
    files = [png.with_suffix(f".{f}") for f in ("png", "pdf", "svg")]
    first = [p.stat().st_ino for p in files]  # every write is a new file (atomic rename)
    from PIL import Image

    with Image.open(png) as image:
        assert image.text[KEY_FIELD] == figure_key("funnel", rows)
    assert funnel_figure(rows, tmp_path / "funnel.png") == png
    assert [p.stat().st_ino for p in files] == first  # kept: not one byte written
    files[2].unlink()  # the SVG gone: all three again
    funnel_figure(rows, tmp_path / "funnel.png")
    again = [p.stat().st_ino for p in files]
    assert all(a != b for a, b in zip(again[:2], first[:2], strict=True))
    other = _rows({("shape_color", 2): [100.0, 97.0, 95.0, 90.0, 96.0, 90.0]})
    funnel_figure(other, tmp_path / "funnel.png")
    assert all(p.stat().st_ino != i for p, i in zip(files, again, strict=True))
    png.write_bytes(b"\x89PNG damaged")
    funnel_figure(other, tmp_path / "funnel.png")
    with Image.open(png) as image:
        assert image.text[KEY_FIELD] == figure_key("funnel", other)

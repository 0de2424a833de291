"""Figures a paper can use: COMPASS's one figure per analysis with every model a line,
integer ticks on count axes, chance lines, nothing drawn where counts are collinear, text
that does not overlap, and vector files beside each PNG."""

import pytest
from click.testing import CliRunner
from conftest import built_run

from autocomp.cli import main
from autocomp.report.gather import short_label

CONFIG = """name: fig
concepts:
  - {task: shape_color, n: [2, 3], count: 8}
  - {task: shape_position, n: [2, 3], count: 8}
generate: {options: {size: 96}}
"""
MODELS = ["reference:oracle", "reference:random"]


@pytest.fixture(scope="module")
def compass_set(tmp_path_factory):
    from autocomp.compass.build import build_run

    tmp = tmp_path_factory.mktemp("figs")
    run = built_run(tmp, CONFIG)
    out = tmp / "set"
    build_run(run.dir, out)
    runner = CliRunner()
    got = runner.invoke(main, ["compass", "eval", str(out), *sum((["--model", m]
                                                                  for m in MODELS), [])])
    assert got.exit_code == 0, got.output
    return out


def _overlaps(fig, texts) -> list[tuple[str, str]]:
    renderer = fig.canvas.get_renderer()
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts
             if t.get_visible() and t.get_text()]
    return [(a, b) for i, (a, ba) in enumerate(boxes) for b, bb in boxes[i + 1:]
            if ba.overlaps(bb)]


def test_short_labels():
    assert short_label("open_clip:ViT-B-32@laion2b_s34b_b79k") == "ViT-B-32 (laion2b)"
    assert short_label("hf:google/siglip-base-patch16-224") == "siglip-base-patch16-224"
    assert short_label("open_clip:local-dir:/w/ckpt/my-vit") == "my-vit (local)"
    assert short_label("reference:oracle") == "reference:oracle"


def test_compass_figures_one_per_analysis_models_as_lines(compass_set):
    from autocomp.compass.figures import integration_figure, skill_figure
    from autocomp.compass.report import THIN

    labels = {m: short_label(m) for m in MODELS}
    fig = integration_figure(compass_set, MODELS, labels, THIN)
    for ax in fig.axes:
        ticks = ax.get_xticks()
        assert len(ticks) and all(float(t).is_integer() for t in ticks)
        assert ax.get_ylim()[1] < 104 and max(ax.get_yticks()) == 100
        grey = [ln for ln in ax.get_lines() if ln.get_color() == "0.6"]
        assert len(grey) == 2  # chance: composed 1/(N+1) and decomposed 1/2^N
        composed_chance = grey[0].get_ydata()
        assert composed_chance[0] == pytest.approx(100 / (grey[0].get_xdata()[0] + 1))
        for axis in (ax.get_xticklabels(), ax.get_yticklabels()):
            assert not _overlaps(fig, axis)
    names = [t.get_text() for t in fig.legends[0].get_texts()]
    assert names == ["reference:oracle", "reference:random"]
    skill = skill_figure(compass_set, MODELS, labels, THIN)
    titles = {ax.get_title(): ax for ax in skill.axes if ax.get_visible()}
    collinear = titles["OA: A negatives"]  # every synthetic OA concept has n_A = n_O
    assert not collinear.get_lines() and "not drawn" in collinear.texts[0].get_text()
    drawn = titles["OA: O negatives"]
    assert all(float(t).is_integer() for t in drawn.get_xticks())
    assert any(ln.get_ydata()[0] == pytest.approx(20.0) for ln in drawn.get_lines())
    assert not _overlaps(skill, [ax.title for ax in skill.axes if ax.get_visible()])
    # thin cells draw hollow markers (every cell here is thin): each model's line keeps
    # its own color in every panel (the legend is made from these lines)
    from matplotlib.colors import to_hex

    want = [to_hex(f"C{i}") for i in range(len(MODELS))]
    for ax in skill.axes:
        lines = [to_hex(c.lines[0].get_color()) for c in ax.containers]
        assert lines in ([], want), (ax.get_title(), lines)



def test_compass_report_writes_png_pdf_svg(compass_set):
    got = CliRunner().invoke(main, ["compass", "report", str(compass_set)])
    assert got.exit_code == 0, got.output
    for stem in ("integration", "skill-load"):
        for fmt in ("png", "pdf", "svg"):
            assert (compass_set / "figures" / f"{stem}.{fmt}").stat().st_size > 1000
    assert got.output.count("figure: ") == 2


def test_clustered_se_needs_two_images():
    import math

    from autocomp.compass.figures import mean_se

    mean, se = mean_se([1, 0, 1], ["a", "a", "a"])
    assert mean == pytest.approx(200 / 3) and math.isnan(se)
    mean, se = mean_se([1, 1, 0, 0], ["a", "a", "b", "b"])  # two perfectly split images
    assert mean == 50.0 and se == pytest.approx(50.0)

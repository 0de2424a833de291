"""`autocomp report --agreement`: rank agreement of models between benchmarks, on hand-made
results whose rankings are known, and on the demo with reference, blind and tiny models."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import write_result

from autocomp.cli import main

MODELS = ["m1", "m2", "m3", "m4", "m5"]
# ranks on X: m1 > m2 > m3 > m4 > m5; on Y the same but m3 and m4 trade places: one
# discordant pair of 10, tau = 1 - 2/10 = 0.8; sum of d^2 = 2, rho = 1 - 6 * 2 / 120 = 0.9
X = [0.9, 0.8, 0.7, 0.6, 0.5]
Y = [0.9, 0.8, 0.6, 0.7, 0.5]


def made(folder, items: int = 20, x=X, y=Y):
    for m, a, b in zip(MODELS, x, y, strict=True):
        write_result(folder, m, "sugarcrepe/replace-att", round(a * items), items)
        write_result(folder, m, "synthetic/x", round(b * items), items)
    return folder


def test_known_tau_and_rho_exactly_with_leave_one_out(tmp_path):
    from autocomp.report.gather import gather
    from autocomp.report.ranks import comparisons

    results, _ = gather([made(tmp_path / "r")])
    rows, left = comparisons(results)
    assert left == [] and len(rows) == 1
    row = rows[0]
    assert row["models"] == MODELS and row["items"] == [20, 20]
    assert row["kendall"]["value"] == pytest.approx(0.8, abs=1e-12)
    assert row["spearman"]["value"] == pytest.approx(0.9, abs=1e-12)
    # leaving out m3 or m4 leaves the same order (1.0); any other: 1 discordant of 6
    assert row["kendall"]["leave_one_out"] == pytest.approx([1 - 2 / 6, 1.0])
    # the same four: sum d^2 = 2 of n(n^2-1) = 60: rho = 1 - 12/60 = 0.8
    assert row["spearman"]["leave_one_out"] == pytest.approx([0.8, 1.0])
    lo, hi = row["kendall"]["interval"]
    assert -1 <= lo <= 0.8 <= hi <= 1


def test_intervals_widen_as_items_shrink(tmp_path):
    from autocomp.report.gather import gather
    from autocomp.report.ranks import comparisons

    widths = []
    for items in (20, 100, 1000):
        results, _ = gather([made(tmp_path / f"r{items}", items)])
        row = comparisons(results)[0][0]
        assert row["kendall"]["value"] == pytest.approx(0.8)  # same accuracies throughout
        widths.append([np.diff(row[k]["interval"])[0] for k in ("kendall", "spearman")])
    assert widths[0][0] > widths[1][0] > widths[2][0]
    assert widths[0][1] > widths[1][1] > widths[2][1]


def test_vectorised_statistics_are_scipys():
    from scipy.stats import kendalltau, spearmanr

    from autocomp.report.ranks import rho, tau_b

    rng = np.random.default_rng(3)
    x, y = rng.integers(0, 4, size=(50, 6)), rng.integers(0, 4, size=(50, 6))  # many ties
    got_t, got_r = tau_b(x, y), rho(x, y)
    for k in range(50):
        want_t, want_r = kendalltau(x[k], y[k]).statistic, spearmanr(x[k], y[k]).statistic
        if np.isnan(want_t):
            assert np.isnan(got_t[k]) and np.isnan(got_r[k])
        else:
            assert got_t[k] == pytest.approx(want_t, abs=1e-12)
            assert got_r[k] == pytest.approx(want_r, abs=1e-12)


def test_report_prints_the_table_against_a_pooled_reference(tmp_path):
    folder = made(tmp_path / "r")
    for m, a in zip(MODELS, [0.5, 0.6, 0.7, 0.8, 0.9], strict=True):  # a second subset
        write_result(folder, m, "sugarcrepe/swap-obj", round(a * 20), 20)
    got = CliRunner().invoke(main, ["report", str(folder), "--agreement", "--reference",
                                    "sugarcrepe", "--no-figure", "--json"])
    assert got.exit_code == 0, got.output
    table = next(t for t in json.loads(got.stdout)["tables"]
                 if t["title"].startswith("Rank agreement"))
    assert len(table["rows"]) == 1
    bench, against, models, items, tau = table["rows"][0][:5]
    # pooled sugarcrepe accuracies: (x + reversed) / 2 = 70 for every model: undefined
    assert (bench, against, models, items, tau) == ("synthetic/x", "sugarcrepe", "5",
                                                    "20 / 40", "-")
    assert any("undefined" in note for note in table["notes"])


def test_few_models_are_marked_and_an_unknown_reference_is_one_line(tmp_path):
    folder = tmp_path / "r"
    for m, a, b in (("a", 10, 9), ("b", 8, 8), ("c", 5, 6)):
        write_result(folder, m, "one/x", a, 10)
        write_result(folder, m, "two/y", b, 10)
    got = CliRunner().invoke(main, ["report", str(folder), "--agreement", "--no-figure"])
    assert got.exit_code == 0, got.output
    assert "| one/x | two/y | 3* | 10 / 10 | 1.00 [" in got.output
    assert "fewer than 5 models" in got.output
    got = CliRunner().invoke(main, ["report", str(folder), "--agreement", "--reference",
                                    "winoground"])
    assert got.exit_code != 0
    line = got.output.strip().splitlines()[-1]
    assert "--reference" in line and "no benchmark 'winoground'" in line and "one/x" in line


@pytest.mark.slow
def test_agreement_on_the_demo_with_reference_blind_and_tiny_models(demo_run, tmp_path):
    """Seven models on the demo's N = 2 benchmarks: every benchmark against one reference
    and each task x N pooled, the model count in every row; the figure drawn."""
    from tiny_models import tiny_open_clip

    from autocomp import api

    models = ["reference:oracle", "reference:bag-of-concepts", "reference:random",
              "blind:unigram", "blind:length"]
    models += [f"open_clip:local-dir:{tiny_open_clip(tmp_path / f'oc{s}', seed=s)}"
               for s in (0, 1)]
    out = tmp_path / "results"
    api.evaluate(demo_run, models, out, "shape_color-n2/*", "shape_position-n2/*")
    got = CliRunner().invoke(main, ["report", str(out), "--agreement", "--reference",
                                    "shape_color-n2/minimal-swap", "--json"])
    assert got.exit_code == 0, got.output
    table = next(t for t in json.loads(got.stdout)["tables"]
                 if t["title"].startswith("Rank agreement"))
    against = {row[1] for row in table["rows"]}
    assert against == {"shape_color-n2/minimal-swap"}
    names = [row[0] for row in table["rows"]]
    assert len(names) == 7 + 2  # the other 7 benchmarks; shape_color and shape_position N=2
    assert {n for n in names if n.endswith("(pooled)")} == {
        "shape_color N=2 (pooled)", "shape_position N=2 (pooled)"}
    assert all(row[2] == "7" for row in table["rows"])
    assert (out / "figures" / "agreement.png").is_file()
    assert "figure: " in got.stderr

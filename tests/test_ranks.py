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
    # models are resampled too: past ~100 items the 5 models' own spread is what is left
    assert widths[0][0] > widths[1][0] >= widths[2][0]
    assert widths[0][1] > widths[1][1] >= widths[2][1]


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
def test_agreement_on_the_demo_with_reference_blind_and_tiny_models(demo_run, tiny_clips,
                                                                    tmp_path):
    """Seven models on the demo's N = 2 benchmarks: every benchmark against one reference
    and each task x N pooled, the model count in every row; the figure drawn."""
    from autocomp import api
    from autocomp.report.gather import gather
    from autocomp.report.ranks import comparisons

    models = ["reference:oracle", "reference:bag-of-concepts", "reference:random",
              "blind:unigram", "blind:length"]
    models += [f"open_clip:local-dir:{w}" for w in tiny_clips[:2]]
    out = tmp_path / "results"
    api.evaluate(demo_run, models, out, "shape_color-n2/*", "shape_position-n2/*")
    args = ["report", str(out), "--agreement", "--reference", "shape_color-n2/minimal-swap",
            "--json"]
    rows, left = comparisons(gather([out])[0], "shape_color-n2/minimal-swap", resamples=50)
    assert all(len(r["models"]) == 2 and r["kendall"] is None for r in rows)  # by default
    assert left[0].startswith("5 baselines (blind:length, blind:unigram, "
                              "reference:bag-of-concepts")
    got = CliRunner().invoke(main, [*args, "--include-baselines"])
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


def test_baselines_out_by_default_and_a_two_way_bootstrap_by_hand(tmp_path):
    """Issue 67: the oracle at 100 and blind scorers near 0 made tau-b 0.72-1.00 for two real
    models; they are left out unless asked for. The interval resamples models and items:
    recomputed here with scipy's kendalltau on each resample's draws."""
    from scipy.stats import kendalltau

    from autocomp.eval.intervals import SEED
    from autocomp.report.gather import gather
    from autocomp.report.ranks import comparisons

    folder = made(tmp_path / "r")
    for spec, a, b in (("reference:oracle", 20, 20), ("blind:length", 0, 1)):
        write_result(folder, spec, "sugarcrepe/replace-att", a, 20)
        write_result(folder, spec, "synthetic/x", b, 20)
    results, _ = gather([folder])
    row = comparisons(results, resamples=200)[0][0]
    assert row["models"] == MODELS and row["kendall"]["value"] == pytest.approx(0.8)
    both = comparisons(results, resamples=200, include_baselines=True)[0][0]
    assert len(both["models"]) == 7 and both["kendall"]["value"] > 0.8
    chosen = comparisons(results, resamples=200, models=["m1", "m2", "m3"])
    assert chosen[0][0]["models"] == ["m1", "m2", "m3"]
    assert chosen[1][0].startswith("4 baselines and models not listed")

    def outcomes(bench):  # models x items, as the predictions files hold them
        rows = []
        for m in MODELS:
            pred = next(p for p in folder.rglob("*.predictions.jsonl")
                        if p.parent.name.startswith(m + "-") and bench in p.name)
            lines = sorted((json.loads(line) for line in pred.read_text().splitlines()),
                           key=lambda p: p["id"])  # items in the order matrix() puts them
            rows.append([float(p["correct"]) for p in lines])
        return np.array(rows)

    a, b = outcomes("sugarcrepe_replace-att"), outcomes("synthetic_x")
    rng = np.random.default_rng(SEED)

    def draws(m):  # 200 item resamples (100 at a time, as drawn), accuracies per model
        n = m.shape[1]
        w = np.concatenate([rng.multinomial(n, np.full(n, 1 / n), size=100) for _ in (0, 1)])
        return 100.0 * (w @ m.T) / n

    ra, rb = draws(a), draws(b)
    pick = rng.integers(0, len(MODELS), size=(200, len(MODELS)))
    taus = [kendalltau(ra[k, pick[k]], rb[k, pick[k]]).statistic for k in range(200)]
    taus = np.array([t for t in taus if not np.isnan(t)])
    assert row["kendall"]["undefined_resamples"] == 200 - len(taus)
    assert row["kendall"]["interval"] == pytest.approx(np.percentile(taus, [2.5, 97.5]))


def test_undefined_leave_one_out_lists_are_shown_and_differing_items_refused(tmp_path):
    """8 of 9 models at 0.0 on one side: leaving out the one that is not gives no rank
    correlation; the range says so instead of "0.52 [0.52, 0.53]" from one list."""
    from autocomp.report.gather import gather
    from autocomp.report.ranks import comparisons
    from autocomp.report.ranks_table import agreement_table

    folder = tmp_path / "r"
    for k in range(9):
        write_result(folder, f"m{k}", "one/x", 10 + k, 40)
        write_result(folder, f"m{k}", "two/y", 5 if k == 8 else 0, 40)
    write_result(folder, "m0", "three/z", 3, 40, benchmark_fingerprint="a" * 32)
    write_result(folder, "m1", "three/z", 4, 40, benchmark_fingerprint="b" * 32)
    results, _ = gather([folder])
    rows, left = comparisons(results, resamples=200)
    row = next(r for r in rows if (r["a"], r["b"]) == ("one/x", "two/y"))
    assert row["kendall"]["leave_one_out_undefined"] == 1
    table = agreement_table(rows, left)
    line = next(r for r in table.rows if r[:2] == ["one/x", "two/y"])
    assert line[5].endswith("(1 of 9 lists undefined)")
    assert any(name.startswith("three/z (its results hold different items under one name")
               for name in left)
    assert not any("three/z" in (r["a"], r["b"]) for r in rows)


def test_the_figure_spreads_models_at_one_place_and_names_the_pair(tmp_path):
    from autocomp.report.gather import gather
    from autocomp.report.rank_figure import _side_by_side, _stat, agreement_figure
    from autocomp.report.ranks import comparisons

    folder = made(tmp_path / "r", x=[0.9, 0.8, 0.7, 0.7, 0.5], y=[0.9, 0.8, 0.6, 0.6, 0.5])
    results, _ = gather([folder])
    rows, _ = comparisons(results, resamples=200)
    offsets, moved = _side_by_side(rows[0])
    assert moved == 2 and sorted(offsets.values()) == [-0.4, 0.0, 0.0, 0.0, 0.4]
    assert _stat(rows[0]["kendall"]).startswith(f"{rows[0]['kendall']['value']:.2f} [")
    made_files, left = agreement_figure(rows, tmp_path / "agreement")
    assert left == 0 and made_files[0].is_file()

"""eval/intervals.py and eval/exact.py: intervals exact where they can be and equal to
scipy/statsmodels, paired tests (McNemar, sign flip, concept-clustered differences), and
nominal coverage for a random scorer, in autocomp's tables and in COMPASS Table 3."""

import json

import numpy as np
import pytest
from click.testing import CliRunner

from autocomp.cli import main
from autocomp.eval.intervals import exact, holm, paired, proportion
from autocomp.eval.metrics import Tally

SEEDS = 20


@pytest.fixture(scope="module")
def demo(tmp_path_factory, demo_run):
    """configs/demo.yaml's run (built once per test run), the module's own copy."""
    from conftest import copy_run

    from autocomp.run import Run

    return Run.open(copy_run(demo_run, tmp_path_factory.mktemp("trust") / "demo"))


@pytest.mark.slow
def test_random_scorer_intervals_cover_chance_at_the_nominal_rate(demo):
    """20 seeds of reference:random on every demo benchmark, scored through the harness's
    own judging: the share of cells whose 95% interval misses the true chance (the mean of
    1 / candidates) stays within 5%. Observed: 13 of 320 (4.1%)."""
    from autocomp.eval.harness import Harness
    from autocomp.eval.scorers import load_scorer
    from autocomp.formats.runs import find_benchmarks

    benches = find_benchmarks(demo.dir, ())
    harnesses = []
    for seed in range(SEEDS):
        scorer = load_scorer(f"reference:random@{seed}")
        harnesses.append(Harness(scorer, demo.dir, {}, None))
    cells = missed = 0
    for bench in benches:
        items = [i for i in bench.items() if i.get("negatives")]
        for h in harnesses:
            tally = Tally()
            for item in items:
                scores = h.scorer.score_item(item, [None] * (1 + len(item["negatives"])), None)
                h._judge(item, np.asarray(scores), tally)
            m = tally.metrics()
            lo, hi = m["intervals"]["accuracy"]
            cells += 1
            missed += not (lo <= m["chance"] <= hi)
    for h in harnesses:
        h.close()
    assert cells == SEEDS * 16
    assert missed / cells <= 0.05, f"{missed} of {cells} cells miss chance"


def test_intervals_are_exact_where_they_can_be():
    # Clopper-Pearson: 0 of 80 gives [0, 4.5]; the lower bound of 1 of 80 is below the
    # 0.137% chance of a colour confusion item at N = 3 (Wilson's is above it)
    assert exact(0, 80)[0] == 0 and round(exact(0, 80)[1], 1) == 4.5
    assert exact(1, 80)[0] < 100 / 729
    # one item per concept: the exact interval; several: a bootstrap over concepts,
    # wider than treating the items as independent
    units = {f"c{i}": [1, float(i % 2)] for i in range(40)}
    assert proportion(units) == exact(20, 40)
    grouped = {f"c{i}": [4, 4.0 * (i % 2)] for i in range(10)}
    lo, hi = proportion(grouped)
    assert lo < exact(20, 40)[0] and hi > exact(20, 40)[1]


def test_intervals_equal_statsmodels_bitwise():
    # computed from scipy.special (statsmodels.stats costs ~1.5 s to import, per process)
    from statsmodels.stats.proportion import proportion_confint

    from autocomp.eval.intervals import wilson

    for n in (*range(1, 41), 80, 729, 1354):
        for x in sorted({0, 1, n // 3, n / 2, n - 0.25, n - 1, n}):
            for ours, method in ((exact, "beta"), (wilson, "wilson")):
                lo, hi = proportion_confint(x, n, alpha=1 - 0.95, method=method)
                assert ours(x, n) == (100.0 * float(lo), 100.0 * float(hi)), (x, n, method)


def test_mcnemar_and_holm_equal_scipy_and_statsmodels():
    # written from scipy.special and numpy: scipy.stats and statsmodels.stats cost a report
    # ~1 s of imports; McNemar's p agrees with binomtest to 1e-10 (scipy.stats reaches the
    # binomial through Boost, scipy.special through Cephes: the last bits differ)
    from scipy.stats import binomtest
    from statsmodels.stats.multitest import multipletests

    from autocomp.eval.intervals import mcnemar

    for n in (*range(0, 61), 97, 500, 4001):
        for k in sorted({0, 1, n // 3, n // 2, n - 1, n} - {-1}):
            if 0 <= k <= n:
                want = float(binomtest(min(k, n - k), n, 0.5).pvalue) if n else 1.0
                assert mcnemar(k, n - k) == pytest.approx(want, rel=1e-10, abs=0), (k, n)
    rng = np.random.default_rng(0)
    for trial in range(8):  # multipletests takes ~50 ms a call
        p = rng.random(int(rng.integers(1, 25))) ** 3
        if trial % 3 == 0:
            p = np.round(p, 2)  # tied p-values
        assert holm(list(p)) == list(multipletests(p, method="holm")[1]), p


def test_paired_difference_and_mcnemar():
    a = [1] * 30 + [0] * 50
    b = [1] * 10 + [0] * 70
    d = paired(a, b)
    assert d["delta"] == pytest.approx(25.0) and (d["a_only"], d["b_only"]) == (20, 0)
    assert d["low"] < 25.0 < d["high"] and d["low"] > 0
    assert d["p"] == pytest.approx(2 * 0.5 ** 20)
    same = paired([1, 0, 1, 0], [1, 0, 1, 0])
    assert same["delta"] == 0 and same["p"] == 1.0 and same["low"] < 0 < same["high"]
    adjusted = holm([0.01, 0.04, 0.03])
    assert adjusted == pytest.approx([0.03, 0.06, 0.06])


def test_sign_flip_is_the_exact_mcnemar_on_0_1_and_exact_on_credits():
    """Issue 67: under --ties aware the paired p is a sign-flip test of the per-item credit
    differences. On 0 / 1 outcomes it equals the exact McNemar p; on tie credits it equals
    the enumeration of every sign assignment; off the grid, random assignments."""
    import itertools

    from autocomp.eval.exact import mcnemar, sign_flip

    rng = np.random.default_rng(7)
    for n in (10, 40, 200):
        a, b = rng.integers(0, 2, n), rng.integers(0, 2, n)
        only_a, only_b = int(((a == 1) & (b == 0)).sum()), int(((a == 0) & (b == 1)).sum())
        assert sign_flip(a - b) == (pytest.approx(mcnemar(only_a, only_b), rel=1e-12),
                                    "exact")
        assert paired(a, b)["p"] == mcnemar(only_a, only_b)
    credits = np.array([1, 1 / 2, 1 / 3, 1 / 4, 1 / 5, 0])
    for _ in range(5):
        d = rng.choice(credits, 12) - rng.choice(credits, 12)
        d = d[d != 0]
        seen = abs(d.sum())
        every = [abs(np.dot(signs, d)) >= seen - 1e-9
                 for signs in itertools.product((-1, 1), repeat=len(d))]
        assert sign_flip(d) == (pytest.approx(np.mean(every), rel=1e-9, abs=1e-12), "exact")
    p, how = sign_flip(np.array([1 / 51, -0.3, 0.7, 1 / 53, 0.2] * 4))  # off the grid
    assert how == "20,000 random sign assignments" and 0 < p <= 1


def test_sign_flip_keeps_its_size_where_the_rounded_mcnemar_did_not_reject():
    """Under no difference (each item's two credits exchangeable) the sign-flip test
    rejects at most 5% (+ simulation error); with a real difference it rejects more often
    than McNemar on rounded expected counts did."""
    from autocomp.eval.exact import mcnemar, sign_flip

    rng = np.random.default_rng(11)
    credits = np.array([0.0, 1.0, 1 / 2, 1 / 3, 1 / 4])
    null, power_flip, power_old = [], [], []
    for _ in range(400):
        x, y = rng.choice(credits, 80), rng.choice(credits, 80)
        swap = rng.random(80) < 0.5
        a, b = np.where(swap, y, x), np.where(swap, x, y)
        null.append(sign_flip(a - b)[0] <= 0.05)
        better = np.clip(x + rng.choice([0.0, 0.25, 0.5], 80, p=[0.6, 0.25, 0.15]), 0, 1)
        power_flip.append(sign_flip(better - y)[0] <= 0.05)
        only_a, only_b = (better * (1 - y)).sum(), ((1 - better) * y).sum()
        power_old.append(mcnemar(round(only_a), round(only_b)) <= 0.05)
    assert np.mean(null) <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / 400)
    assert np.mean(power_flip) > np.mean(power_old)


def test_a_paired_difference_over_clusters_is_wider_than_over_items():
    """COMPASS Tables 6-8 (issue 52): a synthetic concept gives two items (its minimal and
    contextual images); items of one concept move together, so the interval resamples
    concepts. One item per cluster: Newcombe's interval, as before."""
    from autocomp.eval.intervals import paired_clustered

    rng = np.random.default_rng(1)
    a = np.repeat(rng.random(40) < 0.7, 2).astype(float)  # 40 concepts x 2 items alike
    b = np.repeat(rng.random(40) < 0.4, 2).astype(float)
    items = paired(a, b)
    by_concept = paired_clustered(a, b, np.repeat(np.arange(40), 2))
    assert by_concept["delta"] == items["delta"] and by_concept["clusters"] == 40
    assert by_concept["high"] - by_concept["low"] > 1.2 * (items["high"] - items["low"])
    assert paired_clustered(a, b, np.arange(80)) == items
    # issue 69: a constant cell (the oracle: every item right on both sides) gave Δ an
    # interval over the 161 items (+-2.3) where its accuracies' count the 96 concepts
    # (+-3.8); now Δ's unit is the concept too
    from autocomp.eval.intervals import proportion

    clusters = np.concatenate([np.repeat(np.arange(65), 2), np.arange(65, 96)])
    ones = np.ones(len(clusters))
    assert len(ones) == 161
    got = paired_clustered(ones, ones, clusters)
    over_items, over_concepts = paired(ones, ones), paired(np.ones(96), np.ones(96))
    assert (got["low"], got["high"]) == (over_concepts["low"], over_concepts["high"])
    assert got["high"] - got["low"] > over_items["high"] - over_items["low"]
    low, high = proportion({k: [2 if k < 65 else 1, 2.0 if k < 65 else 1.0]
                            for k in range(96)})
    assert abs((100 - low) - (got["high"] - got["low"]) / 2) < 2  # one unit, one width


@pytest.fixture(scope="module")
def compass_random(demo, tmp_path_factory):
    from autocomp.compass.build import build_run
    from autocomp.compass.evaluate import evaluate_compass

    out = tmp_path_factory.mktemp("compass") / "set"
    build_run(demo.dir, out)
    evaluate_compass(out, [f"reference:random@{s}" for s in range(SEEDS)])
    return out


@pytest.mark.slow
def test_random_scorer_gets_no_more_table3_stars_than_nominal(compass_random):
    from autocomp.compass.report import tables

    t3 = next(t for t in tables([compass_random]) if t.title.startswith("Table 3"))
    coefs = [c for row in t3.rows for c in row[3:] if c[:1] in "+-0" and "(" not in c]
    starred = [c for c in coefs if "*" in c]
    assert coefs and len(starred) <= max(1, 0.005 * len(coefs)), starred
    assert "concept-clustered" in t3.title and all("concepts)" in row[3] for row in t3.rows
                                                    if row[3] != "-")


@pytest.mark.slow
def test_integration_gap_sits_on_its_null_for_a_random_scorer(compass_random):
    from autocomp.compass.analysis import integration

    rows = [r for s in range(SEEDS) for r in integration(compass_random,
                                                          f"reference:random@{s}")]
    inside = sum(r["gap_ci"][0] <= r["null"] <= r["gap_ci"][1] for r in rows)
    assert inside / len(rows) >= 0.9
    # N = 3 relations: 3 negatives and 3 decomposed pairs -> 100/8 - 100/4
    assert {round(r["null"], 6) for r in rows if (r["level"], r["n"]) == ("OR", 3)} == {-12.5}


@pytest.mark.slow
def test_report_compare_and_intervals_in_every_format(demo):
    runner = CliRunner()
    out = demo.dir / "results"
    got = runner.invoke(main, ["eval", str(demo.dir), "--model", "reference:oracle",
                               "--model", "reference:random", "--benchmark",
                               "shape_color-n2/*", "--output", str(out)])
    assert got.exit_code == 0, got.output
    cell = json.loads(next(out.rglob("*minimal-swap*.json")).read_text())
    assert cell["metrics"]["interval_method"] == "clopper-pearson"
    lo, hi = cell["metrics"]["intervals"]["accuracy"]
    assert lo <= cell["metrics"]["accuracy"] <= hi
    got = runner.invoke(main, ["report", str(out), "--no-figure", "--compare",
                               "reference:oracle", "reference:random"])
    assert got.exit_code == 0, got.output
    assert "reference:oracle vs reference:random, item by item" in got.output
    assert "p (Holm)" in got.output and "Newcombe" in got.output
    table4 = got.output.split("**Table 4")[1].split("**Table")[0]
    assert "| Items (n) |" in table4 and "100.0 [" in table4
    for fmt in ("csv", "latex"):
        got = runner.invoke(main, ["report", str(out), "--no-figure", "--table-format", fmt])
        assert got.exit_code == 0 and "100.0 [" in got.output
    got = runner.invoke(main, ["report", str(out), "--no-figure", "--compare",
                               "reference:oracle", "open_clip:nope"])
    assert got.exit_code != 0 and "no results of 'open_clip:nope'" in got.output

"""Numbers a researcher can publish (issue 35): an interval on every score that holds its
nominal coverage for a random scorer, paired tests, Table 6 totals over encoders only,
same-meaning and tied picks in their own categories, Table 3 without stars it cannot back,
the integration gap beside its null, and ties shown as ties."""

import json
import math
import re
from collections import Counter

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import scored_cell

from autocomp.cli import main
from autocomp.eval.intervals import exact, holm, mean_shares, paired, proportion
from autocomp.eval.metrics import SAME_MEANING, TIED, Tally, error_category

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


def test_same_meaning_and_tied_picks_have_their_own_category():
    assert error_category({"category": "swapped values", "same_meaning": True}) == SAME_MEANING
    assert error_category({"category": "swapped values"}) == "swapped values"
    from autocomp.eval.harness import Harness

    item = {"id": "x", "concept": "c", "n": 2, "positive": "p",
            "negatives": [{"caption": "n1", "category": "swapped values", "same_meaning": True},
                          {"caption": "n2", "category": "same value / same object"}]}
    tally = Tally()
    got = Harness._judge(None, item, np.array([0.1, 0.9, 0.2]), tally)
    assert tally.errors == {SAME_MEANING: 1} and got["chosen_same_meaning"]
    tally = Tally()
    got = Harness._judge(None, item, np.array([0.5, 0.5, 0.5]), tally)
    assert tally.errors == {TIED: 1} and got["tied_with"] == 2 and got["chosen"] == "p"


def _cell(model, model_type, n, errors):
    return {"model": model, "model_type": model_type, "task": "shape_color", "n": n,
            "track": "minimal", "kind": "confusion", "benchmark": f"b{n}", "n_items": 50,
            "metrics": {"errors_by_category": errors, "accuracy": 10.0, "chance": 6.25}}


def test_table6_total_is_over_encoder_cells_only():
    from autocomp.report.tables import table6

    same = "same value / same object"
    cells = [_cell("open_clip:A", "CLIP", 2, {"swapped values": 30, same: 10}),
             _cell("hf:B", "SigLIP", 2, {"swapped values": 10, same: 30}),
             _cell("blind:unigram", "blind", 2, {"same value / same object": 80}),
             _cell("reference:random", "reference", 2, {"swapped values": 5,
                                                        "same value / same object": 75})]
    (table,) = table6(cells)
    rows = {r[0]: r for r in table.rows}
    assert list(rows) == ["CLIP", "SigLIP", "Total (encoders)", "blind:unigram (baseline)",
                          "reference:random (baseline)"]  # a row per baseline scorer
    col = table.header.index("N=2 swapped values")
    # (75% + 25%) / 2: the baselines' 0% and 6.25% are not in it
    assert rows["Total (encoders)"][col].startswith("50.0 [")
    assert rows["Total (encoders)"][1] == "80 (2)"
    assert any("pools the cells of: CLIP, SigLIP" in n for n in table.notes)
    shares = mean_shares([[30, 10], [10, 30]])
    assert [round(m, 6) for m, _ in shares] == [50.0, 50.0]


def test_table3_prints_n_clusters_and_no_star_it_cannot_back():
    from autocomp.compass.report import coefficient

    few = {"n": 15, "clusters": 8}
    assert coefficient({"coef": -42.86, "se": 10.0, "p": 0.001}, few) == "-42.86 thin"
    many = {"n": 300, "clusters": 120}
    assert coefficient({"coef": -4.0, "se": 1.0, "p": 0.0001}, many) == "-4.00**"
    assert coefficient({"coef": -0.0, "se": math.nan, "p": math.nan}, many) == "0.00 (SE n/a)"
    assert coefficient({"coef": 2.2, "se": 1.0, "p": 0.2, "joint": ["n_A"]}, many) == \
        "+2.20 joint with n_A"


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


def test_gallery_counts_a_tie_as_a_tie(tmp_path):
    from autocomp.report.failures import gallery

    rows = [{"id": "a", "correct": False, "tie_credit": 0.5, "chosen": "p"},  # old file
            {"id": "b", "correct": False, "tie_credit": 0.5, "tied_with": 1, "chosen": "p"},
            {"id": "c", "correct": False, "tie_credit": 0.0, "tied_with": 0, "chosen": "n"},
            {"id": "d", "correct": True, "tie_credit": 1.0, "chosen": "p"}]
    (section,) = gallery([scored_cell(tmp_path, "blind:unigram", rows)], {})
    c = section.cells[0]
    assert (c.items, c.failed, c.tied) == (4, 1, 2)
    # under the result's own rule (issue 52): argmax counts a tie at the top as right (b
    # records it; a, written before correct_argmax, has it from its tie credit)
    rows[1]["correct_argmax"] = True
    for rule, want in (("argmax", (4, 1, 0)), ("aware", (4, 1, 2)), ("strict", (4, 1, 2))):
        cell = {**scored_cell(tmp_path / rule, "blind:unigram", rows), "ties": rule}
        c = gallery([cell], {})[0].cells[0]
        assert (c.items, c.failed, c.tied) == want, rule


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


def test_no_compass_replacement_could_be_true_of_the_image():
    """WordNet: a guy is a kind of man, so "guy" never replaces a primitive of an image
    that shows a man (woman -> guy); big / small are antonyms (kept by the filter)."""
    from autocomp.compass.lexicon import Lexicon, SynsetCandidates
    from autocomp.compass.negatives import Replacer
    from autocomp.compass.wordnet import load_wordnet
    from autocomp.core.scene import Object, SceneGraph

    lex = Lexicon(load_wordnet())
    assert lex.entails("O", "guy", "man") and lex.entails("O", "man", "guy")
    assert lex.entails("O", "animal", "dog") and not lex.entails("O", "woman", "man")
    assert lex.opposite("A", "big", "small") and not lex.opposite("A", "big", "red")
    vocab = {"O": Counter(["man", "woman", "guy", "lady", "girl", "boy", "child"]),
             "A": Counter(), "R": Counter()}
    rep = Replacer(vocab, propose=SynsetCandidates(lex, vocab))
    graph = SceneGraph((Object("woman"), Object("man")), ())
    seen = {"O": {"woman", "man"}, "A": set(), "R": set()}
    # in any of their senses (issue 52): guy is a kind of man, lady and girl (girl.n.01: a
    # young woman) kinds of woman, boy informally a grown man (boy.n.02); child is none of
    # these, so only it may stand in for the woman
    assert rep._usable(graph, ("O", 0), seen,
                       ["guy", "lady", "girl", "boy", "child"]) == ["child"]


def test_captions_that_cannot_say_which_object_are_left_out_and_counted(tmp_path):
    from autocomp.compass.write import AMBIGUOUS, ambiguous, write_sets
    from autocomp.core.scene import Object, Relation, SceneGraph

    same = SceneGraph((Object("shirt"), Object("shirt")), (Relation(0, "left of", 1),))
    fine = SceneGraph((Object("shirt"), Object("hat")), (Relation(0, "left of", 1),))
    present = {"O": {"shirt", "hat"}, "A": set(), "R": {"left of"}}
    vocab = {"O": Counter(["shirt", "hat", "cup", "dog", "car"]),
             "A": Counter(),
             "R": Counter(["left of", "right of", "above", "under",
                                                     "behind"])}
    sources = [("a", "a.jpg", 1, present, [("OR", same)]),
               ("b", "b.jpg", 2, present, [("OR", fine)])]
    manifest = write_sets(sources, vocab, tmp_path / "set", 0, None,
                          {"source": "visual-genome", "image_root": str(tmp_path)},
                          candidates="vocabulary")
    assert manifest["counts"]["composed"] == 1
    assert manifest["dropped"] == {AMBIGUOUS: 1}
    # alike objects that no relation names, or that their attributes tell apart, read fine
    assert not ambiguous(SceneGraph((Object("shirt"), Object("shirt")), ()))
    assert ambiguous(SceneGraph((Object("shirt"), Object("shirt"), Object("hat")),
                                (Relation(2, "on", 1),)))  # on which shirt?
    assert not ambiguous(SceneGraph((Object("shirt", ("red",)), Object("shirt", ("blue",))),
                                    (Relation(0, "left of", 1),)))


def test_captions_identical_within_the_context_are_flagged(tmp_path):
    """Two captions alike in their first 80 words: CLIP's 77-token text tower sees the
    same words, so they tie; eval says so (result and line), the audit counts them."""
    from PIL import Image
    from tiny_models import tiny_open_clip

    from autocomp.audit import structure

    model = f"open_clip:local-dir:{tiny_open_clip(tmp_path / 'oc')}"
    images = tmp_path / "img"
    images.mkdir()
    Image.new("RGB", (32, 32), (200, 30, 30)).save(images / "a.png")
    head = " ".join(["a red cube on a table"] * 14)  # 84 words
    rows = [{"img": "a.png", "cap": f"{head} and a blue ball", "negs": [f"{head} and a cat"]},
            {"img": "a.png", "cap": "a red cube", "negs": ["a blue cube"]}]
    path = tmp_path / "long.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "res"
    got = CliRunner().invoke(main, ["eval", str(path), "--source-format", "columns",
                                    "--images", str(images), "--columns",
                                    "image=img,positive=cap,negatives=negs",
                                    "--model", model, "--output",
                                    str(out)])
    assert got.exit_code == 0, got.output
    assert "1 items where a negative scores exactly as the positive" in got.output
    (cell,) = [json.loads(p.read_text()) for p in out.rglob("*.json")
               if "metrics" in json.loads(p.read_text())]
    assert cell["identical_text_ties"] == 1
    items = [{"positive": r["cap"], "negatives": [{"caption": n} for n in r["negs"]],
              "image": r["img"]} for r in rows]
    assert structure(items)["same_in_context"] == 1


def test_chance_is_printed_the_same_by_eval_and_report():
    from autocomp.eval.cells import _f
    from autocomp.report.table_format import r1

    assert _f(6.25) == r1(6.25) == "6.3" and _f(None) == "n/a"


@pytest.mark.slow
def test_a_capped_and_a_vanished_benchmark_show_in_status_report_and_results(tmp_path):
    """Scenes at N = 4 above a low max_negatives lose items; a pattern vocabulary whose
    two values draw alike loses every N = 3 concept (warned at config time): status, the
    result JSON and Table 4's footnotes say so."""
    (tmp_path / "alike.yaml").write_text(
        "name: alike\nkind: attributes\nentries:\n  - {name: striped, pattern: stripes}\n"
        "  - {name: plaid, pattern: checks}\n  - {name: checkered, pattern: checks}\n")
    (tmp_path / "alike_task.yaml").write_text(
        "name: alike_pattern\nkind: attribute\nobjects: shapes\nvalues: alike.yaml\n"
        "attribute: {name: pattern}\nn: [3]\ndistinct_values: true\n")
    config = tmp_path / "c.yaml"
    config.write_text(
        "name: capped\nseed: 0\nconcepts:\n  - {task: scenes, count: 60}\n"
        "  - {task: alike_task.yaml, n: [3], count: 6}\n"
        "generate: {options: {size: 160}}\n"
        "build: {benchmarks: [swap, confusion], max_negatives: 5000}\n")
    runner = CliRunner()
    with pytest.warns(UserWarning, match="'plaid', 'checkered' are drawn alike "
                      r"\(pattern: checks\)"):
        got = runner.invoke(main, ["run", str(config), "--output", str(tmp_path / "run")])
    assert got.exit_code == 0, got.output
    status = runner.invoke(main, ["status", str(tmp_path / "run")]).output
    assert "Left out after concepts were drawn" in status
    assert re.search(r"scenes-n4/minimal-confusion +\d+ of \d+ items \(\d+ above "
                     r"build.max_negatives\)", status), status
    assert "alike_pattern-n3/minimal-swap" in status and "not built" in status
    got = runner.invoke(main, ["eval", str(tmp_path / "run"), "--model", "reference:random",
                               "--benchmark", "scenes-n4/*"])
    assert got.exit_code == 0, got.output
    cells = [json.loads(p.read_text()) for p in (tmp_path / "run" / "results").rglob("*.json")
             if p.name != "models.yaml" and "confusion" in p.name]
    assert cells and all(c["dropped"]["reasons"]["above build.max_negatives"] > 0
                         for c in cells)
    report = runner.invoke(main, ["report", str(tmp_path / "run" / "results"),
                                  "--no-figure"]).output
    assert re.search(r"scenes N=4 Min Conf\.: \d+ of \d+ items \(\d+ above "
                     r"build.max_negatives\); a subset", report), report
    assert "alike_pattern-n3/minimal-swap not built (" in report


def test_vocab_check_refuses_symmetric_relations_and_warns_on_alike_values(tmp_path):
    files = {"beside.yaml": "name: b\nkind: relations\nentries:\n"
                            "  - {name: beside, inverse: beside}\n",
             "near.yaml": "name: n\nkind: relations\nentries:\n"
                          "  - {name: near, geometry: {dx: 0, dy: 0}}\n",
             "alike.yaml": "name: a\nkind: attributes\nentries:\n"
                           "  - {name: crimson, rgb: [220, 20, 60]}\n"
                           "  - {name: scarlet, rgb: [220, 20, 60]}\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    runner = CliRunner()
    for name, why in (("beside.yaml", "its inverse is itself"),
                      ("near.yaml", "its geometry has no direction")):
        got = runner.invoke(main, ["vocab", "check", str(tmp_path / name)])
        assert got.exit_code == 1
        lines = got.output.strip().splitlines()
        assert len(lines) == 1 and f"relation '{name[:-5]}' is symmetric ({why}" in lines[0]
    got = runner.invoke(main, ["vocab", "check", str(tmp_path / "alike.yaml")])
    assert got.exit_code == 0
    warning = [ln for ln in got.output.splitlines() if ln.startswith("warning:")]
    assert len(warning) == 1 and "'crimson', 'scarlet' are drawn alike (rgb: [220, 20, 60])" \
        in warning[0]


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


def test_compare_refuses_results_of_different_items_under_one_name(tmp_path):
    """Issue 53: `report --compare` matched two results by item id even when they scored
    different items under the same benchmark name (an edited copy: other captions, same
    ids): its table compared unlike with unlike. Now such a benchmark is left out, counted
    and named, and with nothing else to compare the error says why."""
    from PIL import Image

    rows = [{"image": f"{i}.png", "positive": "a red cube on a table",
             "negatives": ["a cube", "a blue cube on a red table"]} for i in range(6)]
    for i in range(6):
        Image.new("RGB", (8, 8), "red").save(tmp_path / f"{i}.png")
    cols = "image=image,positive=positive,negatives=negatives"
    runner = CliRunner()
    for model, caption in (("blind:length", "a red cube on a table"),
                           ("blind:unigram", "a red cube")):
        data = tmp_path / "bench.jsonl"
        data.write_text("".join(json.dumps({**r, "positive": caption}) + "\n" for r in rows))
        got = runner.invoke(main, ["eval", str(data), "--source-format", "columns",
                                   "--columns", cols, "--images", str(tmp_path), "--model",
                                   model, "-o", str(tmp_path / "res"), "--cache",
                                   str(tmp_path / "cache")])
        assert got.exit_code == 0, got.output
    got = runner.invoke(main, ["report", str(tmp_path / "res"), "--no-figure", "--compare",
                               "blind:length", "blind:unigram"])
    assert got.exit_code == 1
    assert "share no benchmark with predictions at hand" in got.output
    assert "1 benchmark(s) hold different items in the two results (their fingerprints " \
        "differ: " in got.output

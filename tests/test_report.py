"""`autocomp report` over several result folders: the models file's order and labels, kept
with the results at eval time; every table it has results for, the others named; LaTeX
that compiles as written (booktabs, escaped). And one tie rule through every number (issue
52): under `--ties argmax` or `--ties aware`, Table 5's difference is Ctx minus Min as the
table prints them, `report --compare` gives each model the accuracy Table 4 gives it, the
predictions keep every rule's outcome, Holm's family of models leaves the baselines out,
and Table 6 pools no baselines."""

import json

import pytest
import yaml
from click.testing import CliRunner
from conftest import built_run, copy_run, shape_color_run

from autocomp.cli import main
from autocomp.eval.intervals import mean_shares
from autocomp.report.categories import table6
from autocomp.report.gather import folder_names, gather
from autocomp.report.paired import compare, compare_table, min_vs_ctx
from autocomp.report.table5 import table5
from autocomp.report.table_format import Table, index_results, latex_escape

CONFIG = """name: rep
concepts:
  - {task: shape_color, n: [1, 2], count: 4}
  - {task: shape_position, n: [2], count: 4}
generate: {options: {size: 96}}
"""
MODELS = {"models": [{"spec": "reference:random", "label": "Coin"},
                     {"spec": "reference:oracle", "label": "Oracle_1 & co"},
                     {"spec": "blind:unigram"}]}


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """Two runs of one config, each scored by the models file's three models."""
    tmp = tmp_path_factory.mktemp("report")
    models = tmp / "models.yaml"
    models.write_text(yaml.safe_dump(MODELS, sort_keys=False))
    runs = [built_run(tmp / name, CONFIG, name) for name in ("first", "second")]
    for r in runs:
        got = CliRunner().invoke(main, ["eval", str(r.dir), "--models-file", str(models)])
        assert got.exit_code == 0, got.output
    return runs, models


def _rows(output: str, title: str) -> list[str]:
    lines = output.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(f"**{title}"))
    block = []
    for ln in lines[start + 4:]:
        if not ln.startswith("|"):
            break
        block.append(ln.strip("|").split("|")[0].strip())
    return block


@pytest.mark.slow
def test_eval_keeps_the_order_and_labels_beside_the_results(two_runs):
    runs, _ = two_runs
    stored = yaml.safe_load((runs[0].dir / "results" / "models.yaml").read_text())
    assert stored == MODELS
    # one more model later: appended, the others keep their place and labels
    got = CliRunner().invoke(main, ["eval", str(runs[1].dir), "--model", "blind:length",
                                    "--benchmark", "shape_color-n2/*"])
    assert got.exit_code == 0, got.output
    again = yaml.safe_load((runs[1].dir / "results" / "models.yaml").read_text())
    assert again["models"] == [*MODELS["models"], {"spec": "blind:length"}]


@pytest.mark.slow
def test_one_folder_follows_the_stored_order_without_the_models_file(two_runs):
    runs, _ = two_runs
    got = CliRunner().invoke(main, ["report", str(runs[0].dir / "results"), "--no-figure"])
    assert got.exit_code == 0, got.output
    rows = _rows(got.output, "Table 4")
    assert rows == ["Random Chance", "Items (n)", "Coin", "Oracle_1 & co", "blind:unigram"]
    assert "Not printed: " in got.output
    skipped = got.output.split("Not printed: ", 1)[1]
    assert "Table 7 (no generative VLM" in skipped and "Table 5" not in skipped
    for title in ("Table 4", "Table 5", "Table 8", "Table 9", "Table 13"):
        assert f"**{title}" in got.output


@pytest.mark.slow
def test_two_folders_of_one_config_get_a_row_each(two_runs):
    runs, models = two_runs
    folders = [str(r.dir / "results") for r in runs]
    got = CliRunner().invoke(main, ["report", *folders, "--models-file", str(models),
                                    "--no-figure"])
    assert got.exit_code == 0, got.output
    rows = _rows(got.output, "Table 4")
    assert rows == ["Random Chance", "Items (n)", "Coin (first)", "Coin (second)",
                    "Oracle_1 & co (first)",
                    "Oracle_1 & co (second)", "blind:unigram (first)",
                    "blind:unigram (second)", "blind:length"]
    # a models file given now reorders, and its labels win over the stored ones
    flipped = models.parent / "flipped.yaml"
    flipped.write_text(yaml.safe_dump({"models": [{"spec": "reference:oracle",
                                                   "label": "Oracle"}]}))
    got = CliRunner().invoke(main, ["report", folders[0], "--models-file", str(flipped),
                                    "--no-figure"])
    assert _rows(got.output, "Table 4") == ["Random Chance", "Items (n)", "Oracle", "Coin",
                                            "blind:unigram"]


@pytest.mark.slow
def test_folders_with_different_benchmarks_share_one_row(two_runs, tmp_path):
    runs, _ = two_runs
    parts = [tmp_path / "a", tmp_path / "b"]
    for part, pattern in zip(parts, ("shape_color-*/*", "shape_position-*/*"), strict=True):
        got = CliRunner().invoke(main, ["eval", str(runs[0].dir), "--model",
                                        "reference:oracle", "--output", str(part),
                                        "--benchmark", pattern])
        assert got.exit_code == 0, got.output
    results, labels = gather(parts)
    assert {r["model"] for r in results} == {"reference:oracle"} and labels == {}
    assert {r["task"] for r in results} == {"shape_color", "shape_position"}


def test_folder_names_are_short_and_distinct(tmp_path):
    a, b = tmp_path / "x" / "demo" / "results", tmp_path / "y" / "demo" / "results"
    assert folder_names([a, tmp_path / "scenes" / "results"]) == ["demo", "scenes"]
    assert folder_names([a, b]) == ["x/demo", "y/demo"]
    assert folder_names([a, a]) == ["demo #1", "demo #2"]


def test_latex_is_booktabs_with_every_symbol_escaped():
    table = Table("Table 5: Min vs Ctx (%), ΔS & ΔC ± sd", ["Model", "shape_color N=2 ΔS",
                                                           "Source"],
                  [["clip_b#1 {x}", "+1.5", "synthetic"], ["~^\\", "-", "VG"]])
    tex = table.render("latex")
    assert "Δ" not in tex and "±" not in tex
    assert r"\caption{Table 5: Min vs Ctx (\%), $\Delta$S \& $\Delta$C $\pm$ sd}" in tex
    assert r"\begin{tabular}{lrl}" in tex  # numbers right, text left
    assert r"clip\_b\#1 \{x\} & +1.5 & synthetic \\" in tex
    assert latex_escape("~^\\") == r"\textasciitilde{}\textasciicircum{}\textbackslash{}"
    for rule in (r"\toprule", r"\midrule", r"\bottomrule"):
        assert tex.count(rule) == 1
    # a wide table: both columns of a paper, small type, scaled down only if still too
    # wide (issue 53: resizebox shrank 17 columns unreadable); `code` as \texttt
    wide = Table("w", [f"c{i}" for i in range(12)], [[str(i) for i in range(12)]],
                 ["scored with `--ties argmax` and `blind:unigram`"])
    tex = wide.render("latex")
    assert r"\begin{table*}[t]" in tex and tex.rstrip().endswith(r"\end{table*}")
    assert r"\begin{adjustbox}{max width=\textwidth}" in tex and "resizebox" not in tex
    assert r"\texttt{-{}-ties argmax}" in tex or r"\texttt{--ties argmax}" in tex
    assert "`" not in tex


@pytest.mark.slow
def test_latex_report_compiles_to_balanced_tables(two_runs):
    runs, _ = two_runs
    got = CliRunner().invoke(main, ["report", str(runs[0].dir / "results"), "--no-figure",
                                    "--table-format", "latex"])
    assert got.exit_code == 0, got.output
    out = got.output
    assert out.count(r"\begin{table}") == out.count(r"\end{table}")
    assert out.count(r"\begin{table*}") == out.count(r"\end{table*}")
    assert out.count(r"\begin{table") >= 5
    assert "% Not printed: " in out and "Δ" not in out and "±" not in out
    body = [ln for ln in out.splitlines() if ln.endswith(r"\\")]
    assert all("_" not in ln.replace(r"\_", "") for ln in body)


# ---- one tie rule through every number ------------------------------------------------------

BENCH = "shape_color-n2/*"


@pytest.fixture(scope="module")
def scored(demo_run, tmp_path_factory):
    """The demo's shape_color N=2 cells scored under each tie rule (one folder a rule)."""
    run = copy_run(demo_run, tmp_path_factory.mktemp("ties") / "demo")
    for rule in ("strict", "argmax", "aware"):
        got = CliRunner().invoke(main, [
            "eval", str(run), "--model", "reference:oracle", "--model", "blind:unigram",
            "--model", "reference:bag-of-concepts", "--ties", rule, "--benchmark", BENCH,
            "--output", str(run / f"results-{rule}")])
        assert got.exit_code == 0, got.output
    return run


def _results(run, rule):
    return gather([run / f"results-{rule}"])[0]


@pytest.mark.parametrize("rule", ["strict", "argmax", "aware"])
def test_table5_difference_is_ctx_minus_min_under_every_rule(scored, rule):
    results = _results(scored, rule)
    idx, models = index_results(results)
    rows = 0
    for m in models:
        for kind in ("swap", "confusion"):
            d = min_vs_ctx(idx, m, "shape_color", 2, kind)
            acc = {t: idx[(m, "shape_color", 2, t, kind)]["metrics"]["accuracy_paired"]
                   for t in ("minimal", "contextual")}
            assert d["delta"] == pytest.approx(acc["contextual"] - acc["minimal"], abs=1e-3)
            assert d["low"] <= d["delta"] <= d["high"] and d["low"] < d["high"]
            rows += 1
    assert rows == 6
    # the demo's case from the issue: blind:unigram on swap ties every item at the top
    # (swapped words, same frequencies), so argmax gives it 100 in both tracks
    unigram = min_vs_ctx(idx, "blind:unigram", "shape_color", 2, "swap")
    if rule == "argmax":
        assert (unigram["a"], unigram["b"]) == (pytest.approx(
            idx[("blind:unigram", "shape_color", 2, "contextual", "swap")]["metrics"]
            ["accuracy_paired"]), 100.0)
    printed = table5(results).render("markdown")
    assert "Ties: " in printed and "follow each result's rule" in printed


@pytest.mark.parametrize("rule", ["strict", "argmax", "aware"])
def test_compare_gives_each_model_its_table4_accuracy(scored, rule):
    results = _results(scored, rule)
    cells = {(r["model"], r["benchmark"]): r for r in results}
    for bench in {r["benchmark"] for r in results}:
        a, b = cells[("reference:oracle", bench)], cells[("blind:unigram", bench)]
        d = compare(a, b)
        assert d["a"] == pytest.approx(a["metrics"]["accuracy"], abs=1e-3)
        assert d["b"] == pytest.approx(b["metrics"]["accuracy"], abs=1e-3)
        assert d["delta"] == pytest.approx(d["a"] - d["b"])
    table = compare_table(results, "reference:oracle", "blind:unigram").render("markdown")
    assert {"strict": "Ties: strict", "argmax": "Ties: argmax",
            "aware": "Ties: tie-aware"}[rule] in table


def test_predictions_keep_every_rules_outcome(scored):
    """blind:unigram ties every swap item (a swap keeps the words): strict wrong, argmax
    right, credit 1/2, in one line of the predictions."""
    files = list((scored / "results-strict").glob(
        "blind_unigram*/*minimal-swap*.predictions.jsonl"))
    assert len(files) == 1
    lines = [json.loads(x) for x in files[0].read_text().splitlines()]
    assert lines and all({"correct", "correct_argmax", "tie_credit"} <= set(p) for p in lines)
    tied = [p for p in lines if p["tie_credit"] == 0.5]
    assert tied and all(not p["correct"] and p["correct_argmax"] for p in tied)


def test_holm_family_of_models_leaves_the_baselines_out(scored):
    """A model under test (here blind:unigram's results declared a CLIP) keeps its adjusted
    p whether or not baselines are in the table."""
    results = _results(scored, "strict")
    model = [{**r, "model_type": "CLIP"} for r in results if r["model"] == "blind:unigram"]
    base = [r for r in results if r["model"] != "blind:unigram"]

    def holm_column(table):
        return [row[-1] for row in table.rows if row[0] == "blind:unigram"]

    alone, beside = table5(model), table5(model + base)
    assert holm_column(alone) == holm_column(beside) and len(holm_column(alone)) == 2
    assert "a family of their own" in beside.render("markdown")


def test_table6_has_a_row_per_baseline_and_pools_none(scored):
    results = _results(scored, "strict")
    (table,) = table6(results)
    names = [row[0] for row in table.rows]
    assert "reference (baseline)" not in names and "blind (baseline)" not in names
    assert {"blind:unigram (baseline)", "reference:bag-of-concepts (baseline)"} <= set(names)


def test_confusion_on_its_shortcut_matched_negatives(demo_run, tmp_path):
    """blind:distinct beats chance on the demo's Confusion (a negative repeating a word has
    fewer distinct words), and sits at chance, within its interval, on the matched
    negatives: those keeping the positive's distinct objects and values and not saying
    what the positive says (N = 2 colour: 2 negatives, chance 33.3% (issue 69: the
    positive reordered was the third, counted wrong, and capped a word-order-blind
    perfect model at 50%); position: 1, chance 50%). The report prints both."""
    from autocomp.negatives.shortcut import shortcut_matched
    from autocomp.report.shortcut import matched_table

    run = copy_run(demo_run, tmp_path / "demo")
    got = CliRunner().invoke(main, ["eval", str(run), "--model", "blind:distinct", "--ties",
                                    "aware", "--benchmark", "*-n2/*-confusion",
                                    "--output", str(run / "res")])
    assert got.exit_code == 0, got.output
    results = gather([run / "res"])[0]
    assert len(results) == 4
    for r in results:
        m = r["metrics"]
        lo, hi = m["intervals"]["accuracy"]
        assert lo > m["chance"]  # the shortcut: above chance on every negative
        assert m["chance_matched"] == pytest.approx(
            {"shape_color": 100 / 3, "shape_position": 50.0}[r["task"]], abs=1e-3)
        assert m["matched_items"] == r["n_items"]
        lo, hi = m["intervals"]["accuracy_matched"]
        assert lo <= m["chance_matched"] <= hi  # at chance (articles may still differ)
    table = matched_table(results).render("markdown")
    assert "| blind:distinct | shape_color | 2 | Min |" in table and "33.3" in table
    # the rule itself: a permutation of the positive's objects and values is matched, a
    # negative repeating a value or an object is not
    from autocomp.concepts.load import load_task
    from autocomp.core.scene import attribute_graph

    task = load_task("shape_color")
    graph = attribute_graph(["cube", "sphere"], ["red", "blue"])
    negs = [{"edit": {"objects": [0, 1], "values": [1, 0]}},
            {"edit": {"objects": [0, 1], "values": [0, 0]}},
            {"edit": {"objects": [1, 1], "values": [0, 1]}},
            {"edit": {"objects": [1, 0], "values": [1, 0]}, "same_meaning": True}]
    assert shortcut_matched(graph, task, negs).tolist() == [True, False, False, False]
    # and on every Confusion item of the demo: no matched negative has the positive's
    # meaning (issue 69: 83 of 83 colour N = 2 items had one)
    from autocomp.formats.runs import find_benchmarks
    from autocomp.negatives.shortcut import matched_negatives
    from autocomp.run import Run

    tasks, checked = Run.open(run).tasks, 0
    for bench in find_benchmarks(run, ["*/*-confusion"]):
        for item in bench.items():
            matched = matched_negatives(item, tasks)
            same = [n.get("same_meaning", False) for n in item["negatives"]]
            assert not any(m and s for m, s in zip(matched, same, strict=True)), item["id"]
            checked += int(matched.sum())
    assert checked > 0


@pytest.mark.parametrize("rule, says", [
    ("strict", "positive strictly above every negative"),
    ("aware", "tie-aware: a positive tied with k-1 negatives at the top earns 1/k"),
    ("argmax", "argmax: a positive tied at the top counts right")])
def test_table4_and_table9_name_the_rule_in_force(scored, rule, says):
    """Issue 69: Table 4's title said "positive strictly above every negative" under every
    rule, and a strict report's Table 9 (tie-aware) had the footnote "Ties: strict"."""
    from autocomp.report.tables import table4, table9

    results = _results(scored, rule)
    four = table4(results)
    assert four.title.startswith(f"Table 4: accuracy (%), {says};")
    assert any(n.startswith("Ties: " + {"strict": "strict", "aware": "tie-aware",
                                         "argmax": "argmax"}[rule]) for n in four.notes)
    nine = table9(results)
    assert "tie-aware accuracy" in nine.title
    assert any(n.startswith("Ties: tie-aware: 1/k of an item") for n in nine.notes)
    assert not any(n.startswith("Ties: strict") for n in nine.notes)
    mixed = table4(results + [{**r, "ties": "strict" if rule != "strict" else "aware"}
                              for r in _results(scored, "strict" if rule != "strict"
                                                else "aware")][:1])
    assert "cells under different tie rules (footnote)" in mixed.title


def test_table5_says_where_newcombe_and_the_exact_test_disagree(monkeypatch):
    """Issue 69: a Newcombe interval excluding 0 beside an exact McNemar p of 0.0625 (four
    discordant concepts, all one way) needs a note; agreeing rows get none."""
    from autocomp.report import paired

    def cell(track):
        return {"model": "m", "task": "shape_color", "n": 2, "track": track, "kind": "swap",
                "ties": "strict", "n_items": 10,
                "metrics": {"accuracy_paired": 50.0, "paired_items": 10}}

    results = [cell("minimal"), cell("contextual")]
    for d, noted in (({"n": 10, "delta": 40.0, "low": 5.1, "high": 69.0, "p": 0.0625}, True),
                     ({"n": 10, "delta": 40.0, "low": -5.0, "high": 69.0, "p": 0.125}, False)):
        monkeypatch.setattr(paired, "min_vs_ctx", lambda *a, d=d: d)
        notes = table5(results).notes
        said = [n for n in notes if n.startswith("Δ's interval and p disagree")]
        assert bool(said) == noted, notes
        if noted:
            assert "in 1 row(s) (m shape_color N=2 Swap)" in said[0]


@pytest.mark.slow
def test_report_json_long_csv_figure_flags_and_where_the_figure_of_a_run_goes(tmp_path):
    """CSV was CRLF with each table's own header in one stream; report had no --json;
    `report` took --figure and `compass report` --figures; report given a run (not its
    results) wrote min_vs_ctx.png among the run's own figures."""
    import csv
    import io

    run = shape_color_run(tmp_path)
    runner = CliRunner()
    assert runner.invoke(main, ["eval", str(run.dir), "--model", "reference:oracle"]
                         ).exit_code == 0
    results = str(run.dir / "results")
    got = runner.invoke(main, ["report", results, "--no-figures", "--table-format", "csv"])
    assert got.exit_code == 0 and "\r" not in got.stdout, got.output
    import pandas as pd

    from autocomp.report.table_format import LONG_COLUMNS

    rows = list(csv.DictReader(io.StringIO(got.stdout)))
    assert list(rows[0]) == LONG_COLUMNS and len({r["table"] for r in rows}) > 1
    # a number per row with its own keys and its interval's bounds as numbers (issue 52)
    cell = next(r for r in rows if r["table"].startswith("Table 4")
                and r["model"] == "reference:oracle")
    assert cell["value"] == "100.0" and cell["text"].startswith("100.0 [")
    low, high = (float(x) for x in cell["text"][7:-1].split(", "))
    # issue 69: the numbers unrounded, the text as printed
    assert abs(float(cell["low"]) - low) <= 0.05 and float(cell["high"]) == high == 100.0
    assert cell["task"] == "shape_color" and cell["n"] in ("1", "2") and float(cell["low"])
    chance = next(r for r in rows if r["table"].startswith("Table 4")
                  and r["model"] == "Random Chance" and r["text"] == "6.3")
    assert chance["value"] == "6.25"  # was the printed 6.3
    p = [r for r in rows if r["table"].startswith("Table 5") and r["column"].startswith("p")]
    assert p and all(r["value"] for r in p if r["text"] not in ("-", ""))  # "<0.001" too
    t5 = [r for r in rows if r["table"].startswith("Table 5") and r["row"] != "-1"]
    assert t5 and all(r["model"] and r["task"] and r["n"] and r["benchmark"] for r in t5)
    df = pd.read_csv(io.StringIO(got.stdout))
    wide = df.pivot(index=["table", "row"], columns="column", values="text")  # unique keys
    assert len(wide) == len(df[["table", "row"]].drop_duplicates())
    got = runner.invoke(main, ["report", results, "--no-figure", "--json"])
    data = json.loads(got.stdout)
    assert got.exit_code == 0 and data["tables"] and {"title", "header", "rows", "notes"} <= \
        set(data["tables"][0])
    got = runner.invoke(main, ["report", str(run.dir)])
    assert got.exit_code == 0, got.output
    assert (run.dir / "results" / "figures" / "min_vs_ctx.png").is_file()
    assert not (run.dir / "figures" / "min_vs_ctx.png").exists()


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

"""`autocomp report` over several result folders: the models file's order and labels, kept
with the results at eval time; every table it has results for, the others named; LaTeX
that compiles as written (booktabs, escaped)."""

import pytest
import yaml
from click.testing import CliRunner
from conftest import built_run

from autocomp.cli import main
from autocomp.report.gather import folder_names, gather
from autocomp.report.table_format import Table, latex_escape

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

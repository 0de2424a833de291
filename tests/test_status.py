"""`autocomp status`: plain on a partial run, writes nothing, and shows a capped or
vanished benchmark as the report and the results do."""

import json
import re
import sys

import pytest
from click.testing import CliRunner
from conftest import shape_color_run

from autocomp.cli import main


def test_status_of_a_partial_run_is_plain(tmp_path):
    """Warnings are one line without source lines; a stage that has not run is "-", not
    0.0%."""
    import subprocess

    run = shape_color_run(tmp_path, stages=("concepts", "captions"))
    (run.dir / "captions" / "merged.jsonl").write_text("{broken\n")  # warns, read from parts
    out = subprocess.run([sys.executable, "-m", "autocomp", "status", str(run.dir)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    row = next(ln for ln in out.stdout.splitlines() if ln.startswith("shape_color N=2"))
    assert "100.0%" in row and " 0.0%" not in row and row.split()[-1] == "-"
    warned = [ln for ln in out.stderr.splitlines() if ln.strip()]
    assert warned and all(ln.startswith("warning: ") and "merged.jsonl" in ln
                          for ln in warned), out.stderr


def test_status_writes_nothing(tmp_path):
    run = shape_color_run(tmp_path, ("concepts", "captions", "images", "validation"),
               {"task": "scenes", "count": 4})

    def snapshot():
        return {str(p): (p.stat().st_mtime_ns, p.stat().st_size)
                for p in run.dir.rglob("*")}

    before = snapshot()
    out = CliRunner().invoke(main, ["status", str(run.dir)])
    assert out.exit_code == 0, out.output
    assert snapshot() == before
    assert "concepts           4      4      4" in out.output  # a scene spec's count


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

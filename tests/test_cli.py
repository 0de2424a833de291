import json
import subprocess
import sys

from click.testing import CliRunner
from conftest import read_only, shape_color_run

from autocomp.cli import main


def test_help_imports_nothing_heavy():
    code = ("import sys; from autocomp.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "heavy = [m for m in ('torch', 'numpy', 'inflect', 'diffusers', 'transformers', "
            "'open_clip', 'yaml') if m in sys.modules]\nprint('HEAVY', heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "HEAVY []" in out.stdout


def test_vocab_list():
    result = CliRunner().invoke(main, ["vocab", "list"])
    assert result.exit_code == 0
    assert "objects" in result.output and "235 entries" in result.output
    assert "position" in result.output and "N=2,3" in result.output


def test_vocab_check_good_and_bad_files(tmp_path):
    good = tmp_path / "good.yaml"
    good.write_text("name: fruit\nkind: objects\nentries: [apple, pear]\n")
    task = tmp_path / "task.yaml"
    task.write_text("name: fruit_color\nkind: attribute\nobjects: good.yaml\nvalues: colors\n"
                    "n: [1, 2]\n")
    result = CliRunner().invoke(main, ["vocab", "check", str(good), str(task)])
    assert result.exit_code == 0, result.output
    assert "ok:" in result.output and "task 'fruit_color'" in result.output


def test_vocab_check_malformed_exits_nonzero_one_line_no_traceback(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nkind: objects\nentries:\n  - chair\n  - {name: glove, pair: 2}\n")
    proc = subprocess.run([sys.executable, "-m", "autocomp", "vocab", "check", str(bad)],
                          capture_output=True, text=True)
    assert proc.returncode != 0
    assert proc.stderr.strip() == (f"error: {bad}: entry 2 ('glove'): field 'pair' must be "
                                   "true or false, got 2")
    assert "Traceback" not in proc.stderr + proc.stdout


def test_bad_task_reference_is_a_one_line_error():
    proc = subprocess.run([sys.executable, "-m", "autocomp", "preview", "--task", "colour",
                           "--n", "2"], capture_output=True, text=True)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "no task 'colour'" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_concepts_command_writes_records(tmp_path):
    result = CliRunner().invoke(main, ["concepts", "--task", "position", "--n", "3", "--count",
                                       "12", "--seed", "5", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    lines = (tmp_path / "concepts" / "position.jsonl").read_text().splitlines()
    records = [json.loads(x) for x in lines]
    assert len(records) == 12 and all(r["n"] == 3 and r["task"] == "position" for r in records)
    assert all(len(r["graph"]["relations"]) == 2 for r in records)
    again = CliRunner().invoke(main, ["concepts", "--task", "position", "--n", "3", "--count",
                                      "12", "--seed", "5", "--out", str(tmp_path)])
    assert again.exit_code == 0
    assert (tmp_path / "concepts" / "position.jsonl").read_text().splitlines() == lines


def test_concepts_too_many_is_a_clear_error(tmp_path):
    result = CliRunner().invoke(main, ["concepts", "--task", "shape_color", "--n", "1",
                                       "--count", "1000", "--out", str(tmp_path)])
    assert result.exit_code != 0
    assert "at most 160 distinct" in result.output


def test_preview_text_and_json():
    result = CliRunner().invoke(main, ["preview", "--task", "color", "--n", "2", "--seed", "1"])
    assert result.exit_code == 0
    assert "on a white background" in result.output and "[swapped values]" in result.output
    result = CliRunner().invoke(main, ["preview", "--task", "position", "--n", "3", "--json"])
    data = json.loads(result.output)
    assert data["benchmarks"]["swap"]["negatives"] == 5
    assert data["benchmarks"]["confusion"]["negatives"] == 107
    assert data["concept"]["counts"] == {"n_O": 3, "n_A": 0, "n_R": 2, "total": 5}
    assert len(data["bindings"]) == 2


def test_a_reader_that_stops_early_is_no_crash():
    """Issue 68: `autocomp report ... | head` printed a traceback and "crashed (exit 70)
    ... running the same command again may pass". Now nothing on stderr and 141 (128 +
    SIGPIPE), as a shell command cut off by its reader."""
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "autocomp", "vocab", "list"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader is gone before the first line
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141 and err == ""


def test_missing_weights_exit_81_for_every_scorer_family(demo_run, tmp_path, monkeypatch):
    """Issue 68: `text:` with missing weights exited 1 and open_clip's local-dir 1 while
    hf: gave 81 (weights missing: the batch script does not requeue)."""
    from click.testing import CliRunner

    from autocomp.cli import main

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for spec in (f"text:{tmp_path}/nowhere", f"open_clip:local-dir:{tmp_path}/nowhere",
                 f"hf:{tmp_path}/nowhere"):
        got = CliRunner().invoke(main, ["eval", str(demo_run), "--model", spec, "--benchmark",
                                        "shape_color-n2/minimal-swap", "-o", str(tmp_path / "r")])
        assert got.exit_code == 81, (spec, got.output)
        assert f"{tmp_path}/nowhere" in got.output and "Traceback" not in got.output


def test_ctrl_c_says_rerunning_resumes(tmp_path, monkeypatch):
    run = shape_color_run(tmp_path, stages=("concepts",))

    def interrupted(*a, **k):
        raise KeyboardInterrupt
    monkeypatch.setattr("autocomp.pipeline.run_pipeline", interrupted)
    out = CliRunner().invoke(main, ["generate", str(run.dir)])
    assert out.exit_code == 130
    assert "run the same command again to resume" in out.output
    assert "Aborted!" not in out.output


def test_a_read_only_run_is_one_line_and_its_report_still_comes(tmp_path, monkeypatch):
    from click.testing import CliRunner
    from conftest import built_run

    from autocomp.cli import main

    config = ("name: ro\nconcepts:\n  - {task: shape_color, n: [2], count: 6}\n"
              "generate: {options: {size: 64}}\n")
    run = built_run(tmp_path, config)
    got = CliRunner().invoke(main, ["eval", str(run.dir), "--model", "reference:random"])
    assert got.exit_code == 0, got.output
    read_only(monkeypatch, run.dir)
    again = CliRunner().invoke(main, ["run", str(tmp_path / "run.yaml"), "--output",
                                      str(run.dir), "--no-progress"])
    assert again.exit_code == 1 and isinstance(again.exception, SystemExit), again.exception
    assert "cannot write to the run folder (Read-only file system)" in again.output
    page = tmp_path / "page.html"
    rep = CliRunner().invoke(main, ["report", str(run.dir / "results"), "--html", str(page)])
    assert rep.exit_code == 0, (rep.output, rep.exception)
    assert "figure not written: cannot write" in rep.output and page.is_file()

"""The embedded pipeline end to end: run, resume after SIGKILL, corrupt images, CLI."""

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner
from conftest import kill_after_records, shape_color_run

from autocomp.cli import main
from autocomp.config import load_config
from autocomp.core.records import read_jsonl
from autocomp.pipeline import run_pipeline
from autocomp.run import Run
from autocomp.runtime.parts import part_files, read_part

CONFIG = """
name: tiny
seed: 1
concepts:
  - {{task: shape_color, n: [1, 2, 3], count: {count}}}
  - {{task: shape_position, n: [2, 3], count: {count}}}
captions: {{writer: template, options: {{slip_rate: 0.3}}, retries: 2}}
generate:
  generator: procedural
  batch_size: {batch}
  options: {{size: 160, faults: {{drop_object: 0.1, wrong_color: 0.1, swap: 0.1,
                                  grey_background: 0.1}}}}
validate: {{batch_size: {batch}}}
"""
STAGES = ("concepts", "captions", "images", "validation")


def _config(tmp_path, count=6, batch=4):
    path = tmp_path / "tiny.yaml"
    path.write_text(CONFIG.format(count=count, batch=batch))
    return path


def _records(run_dir):
    return {s: (run_dir / s / "merged.jsonl").read_text() for s in STAGES}


def _bench(run_dir):
    return {str(p.relative_to(run_dir)): p.read_text()
            for p in sorted((run_dir / "bench").rglob("*.jsonl"))}


@pytest.fixture(scope="module")
def done_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pipeline")
    run = Run.create(load_config(_config(tmp)), tmp / "run")
    run_pipeline(run, progress=False)
    return run


def test_run_directory_holds_everything(done_run):
    d = done_run.dir
    assert (d / "config.yaml").exists()
    cfg = (d / "config.yaml").read_text()
    assert "provenance" in cfg and "numpy" in cfg
    images = list(read_jsonl(d / "images" / "merged.jsonl"))
    assert len(images) == 2 * sum(1 for c in done_run.records("captions") if c["passed"])
    assert all((d / r["image"]).is_file() for r in images)
    validation = done_run.records("validation")
    assert {v["id"] for v in validation} == {r["id"] for r in images}
    for v in validation:
        assert v["checks"] and all(c["reason"] for c in v["checks"])
        assert v["checks"][0]["evidence"]["detections"] is not None
    for stage in ("captions", "images", "validation", "build"):
        assert (d / "stats" / f"{stage}.json").exists()
    assert (d / "bench" / "sets" / "paired.jsonl").exists()


def _items(run_dir, name):
    from autocomp.formats.runs import find_benchmarks

    (bench,) = find_benchmarks(run_dir, [name])
    return list(bench.items())


def test_benchmark_items(done_run):
    d = done_run.dir
    swap = _items(d, "shape_color-n3/contextual-swap")
    assert swap
    for item in swap:
        assert len(item["negatives"]) == 5  # 3! - 1
        assert (d / item["image"]).is_file()
        for neg in item["negatives"]:
            assert neg["caption"] != item["positive"]
            assert neg["edit"]["changed_values"]
    caps = {c["id"]: c for c in done_run.records("captions")}
    for item in swap:
        cap = caps[item["concept"]]
        assert item["positive"] == cap["contextual"]
        spans = [m["span"] for m in cap["check"]["matches"]]
        start, end = min(s[0] for s in spans), max(s[1] for s in spans)
        tail = len(item["positive"]) - end
        for neg in item["negatives"]:  # the negatives differ only inside the matched spans
            assert neg["caption"][:start] == item["positive"][:start]
            assert neg["caption"][len(neg["caption"]) - tail:] == item["positive"][end:]
    conf = _items(d, "shape_position-n3/minimal-confusion")
    assert all(len(i["negatives"]) + i["duplicates"] == 3**3 * 2**2 - 1 for i in conf)
    n1 = list((d / "bench" / "shape_color-n1").glob("*.jsonl"))
    assert sorted(p.name for p in n1) == ["contextual-vary_object.jsonl",
                                          "contextual-vary_value.jsonl",
                                          "minimal-vary_object.jsonl", "minimal-vary_value.jsonl"]
    paired = list(read_jsonl(d / "bench" / "sets" / "paired.jsonl"))
    passed = {(v["concept"], v["track"]) for v in done_run.records("validation") if v["passed"]}
    assert {p["concept"] for p in paired} == {c for c, t in passed if (c, "minimal") in passed
                                              and (c, "contextual") in passed}


def test_validators_agree_with_injected_faults(done_run):
    from autocomp.report.agreement import agreement

    table = agreement(done_run.records("images"), done_run.records("validation"))
    assert table["overall"]["total"] > 50
    assert table["overall"]["agreement"] >= 99.0
    assert sum(table[c]["tp"] for c in ("objects", "attributes", "background")) > 0


@pytest.mark.slow
def test_rerun_is_a_no_op(done_run):
    before = _records(done_run.dir)
    run_pipeline(done_run, progress=False)
    assert _records(done_run.dir) == before


@pytest.mark.slow
def test_corrupt_or_missing_image_fails_its_checks_and_the_run_goes_on(tmp_path):
    run = Run.create(load_config(_config(tmp_path, count=2)), tmp_path / "run")
    run_pipeline(run, stages=("concepts", "captions", "images"), progress=False)
    images = run.records("images")
    (run.dir / images[0]["image"]).write_bytes(b"\x89PNG\r\n\x1a\n not really")
    (run.dir / images[1]["image"]).unlink()
    run_pipeline(run, stages=("validation", "build"), progress=False)
    validation = {v["id"]: v for v in run.records("validation")}
    assert len(validation) == len(images)
    for bad in images[:2]:
        v = validation[bad["id"]]
        assert not v["passed"] and v["failed_at"] == "objects"
        assert v["checks"][0]["reason"].startswith(f"cannot read image {bad['image']}")
    assert any(v["passed"] for v in validation.values())


@pytest.mark.slow
def test_sigkill_during_generation_then_resume_equals_unkilled(tmp_path):
    config = _config(tmp_path, count=12, batch=2)
    reference = Run.create(load_config(config), tmp_path / "reference")
    run_pipeline(reference, progress=False)

    run_dir = tmp_path / "killed"
    cmd = [sys.executable, "-m", "autocomp", "run", str(config), "--out", str(run_dir),
           "--processes", "2", "--no-progress"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    total = len(reference.records("images"))
    written = kill_after_records(cmd, run_dir / "images", 10, env, timeout=120)
    assert 10 <= written < total
    assert not (run_dir / "images" / "merged.jsonl").exists()

    again = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "Survival funnel" in again.stdout
    assert _records(run_dir) == _records(reference.dir)
    assert _bench(run_dir) == _bench(reference.dir)
    for stage in ("images", "validation"):
        ids = [r["id"] for p in part_files(run_dir / stage) for r in read_part(p)]
        assert len(ids) == len(set(ids)) == total  # none lost, none duplicated
    assert len(part_files(run_dir / "images")) == 2


@pytest.mark.slow
def test_cli_run_status_and_stage_commands(tmp_path):
    config = _config(tmp_path, count=2)
    out = tmp_path / "cli"
    runner = CliRunner()
    result = runner.invoke(main, ["generate", str(out), "--config", str(config),
                                  "--no-progress"])
    assert result.exit_code == 0, result.output
    status = runner.invoke(main, ["status", str(out), "--json"])
    stages = {s["stage"]: s for s in json.loads(status.output)["stages"]}
    assert stages["images"]["done"] == stages["images"]["expected"] > 0
    assert stages["validation"]["done"] == 0
    assert runner.invoke(main, ["validate", str(out), "--no-progress"]).exit_code == 0
    result = runner.invoke(main, ["build", str(out)])
    assert result.exit_code == 0, result.output
    assert "Survival funnel" in result.output and "Min Attr." in result.output
    assert (out / "figures" / "funnel.png").stat().st_size > 1000
    assert (out / "figures" / "distribution.png").stat().st_size > 1000
    text = runner.invoke(main, ["status", str(out)]).output
    assert "validation" in text and "Validated samples" in text
    missing = runner.invoke(main, ["status", str(tmp_path / "nowhere")])
    assert missing.exit_code != 0 and "not a run directory" in missing.output


def test_no_op_stages_are_refused_and_old_temp_files_cleaned(tmp_path):
    import os
    import time

    from autocomp.config import parse_config
    from autocomp.pipeline import run_pipeline
    from autocomp.run import Run

    cfg_path = tmp_path / "c.yaml"
    cfg_path.write_text("name: n\nconcepts: [{task: shape_color, n: [2], count: 2}]\n")
    out = CliRunner().invoke(main, ["run", str(cfg_path), "--out", str(tmp_path / "run"),
                                    "--stages", "images"])
    assert out.exit_code != 0
    assert "stage images needs the records of stage captions" in out.output
    run = Run.create(parse_config({"name": "n", "concepts": [
        {"task": "shape_color", "n": [2], "count": 2}]}), tmp_path / "run2")
    run_pipeline(run, stages=("concepts",), progress=False)
    out = CliRunner().invoke(main, ["build", str(run.dir)])
    assert out.exit_code != 0 and "needs the records of stage validation" in out.output
    old = run.dir / "captions" / ".merged.jsonl.abc.autocomp.tmp"
    new = run.dir / "captions" / ".part.def.autocomp.tmp"
    theirs = run.dir / "captions" / ".editor-swap.tmp"  # another program's, however old
    old.parent.mkdir(exist_ok=True)
    for p in (old, new, theirs):
        p.write_text("half")
    for p in (old, theirs):
        os.utime(p, (time.time() - 7200, time.time() - 7200))
    run_pipeline(run, stages=("captions",), progress=False)
    assert not old.exists() and new.exists()  # a live writer's file is left alone
    assert theirs.exists()


@pytest.mark.slow
def test_build_refuses_a_partial_run_and_eval_redoes_changed_benchmarks(tmp_path):
    """Issue 23, major 7: build on a run whose validation is not finished is refused (or
    marked with --partial); a result carries the fingerprint of the benchmark it scored,
    and `eval --skip_existing` redoes a cell whose benchmark changed."""
    from conftest import all_passed

    from autocomp.core.records import read_jsonl, write_jsonl
    from autocomp.eval.cells import result_file

    run = shape_color_run(tmp_path, stages=("concepts", "captions", "images", "validation"))
    all_passed(run)
    merged = run.dir / "validation" / "merged.jsonl"
    rows = list(read_jsonl(merged))
    write_jsonl(merged, rows[:2])  # validation stopped after 2 of 6 images
    runner = CliRunner()
    refused = runner.invoke(main, ["build", str(run.dir)])
    assert refused.exit_code == 1
    assert "validation: 2 of 6 done" in refused.output
    assert "--partial" in refused.output and "Traceback" not in refused.output
    assert not (run.dir / "bench").exists()
    partial = runner.invoke(main, ["build", str(run.dir), "--partial"])
    assert partial.exit_code == 0, partial.output
    stats = json.loads((run.dir / "stats" / "build.json").read_text())
    assert stats["partial"] == ["validation: 2 of 6"]
    assert "benchmark items of a partial run: validation: 2 of 6 done" in runner.invoke(
        main, ["status", str(run.dir)]).output

    out = tmp_path / "res"
    args = ["eval", str(run.dir), "--model", "reference:oracle", "--output", str(out),
            "--benchmark", "shape_color-n2/minimal-swap", "--skip_existing"]
    first = runner.invoke(main, args)
    assert first.exit_code == 0, first.output
    result = result_file(out, "reference:oracle", "shape_color-n2/minimal-swap")
    assert json.loads(result.read_text())["n_items"] == 1
    assert "skip   reference:oracle" in runner.invoke(main, args).output  # unchanged
    write_jsonl(merged, rows)  # the run resumed and finished; rebuilt
    assert runner.invoke(main, ["build", str(run.dir)]).exit_code == 0
    assert "partial" not in json.loads((run.dir / "stats" / "build.json").read_text())
    again = runner.invoke(main, args)
    assert "redo   reference:oracle shape_color-n2/minimal-swap (the benchmark changed" \
        in again.output
    assert json.loads(result.read_text())["n_items"] == 3
    # a result written before results carried a fingerprint is done again as well
    data = json.loads(result.read_text())
    del data["benchmark_fingerprint"]
    result.write_text(json.dumps(data))
    old = runner.invoke(main, args)
    assert "redo   reference:oracle shape_color-n2/minimal-swap (the result does not say" \
        in old.output
    assert "skip" in runner.invoke(main, args).output

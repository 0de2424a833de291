"""Compact benchmark store (issue 13): negatives enumerated again on read equal the ones
the full store writes, for every built-in task and N, on both tracks."""

import json

import pytest

from autocomp.bench.build import build
from autocomp.concepts.files import builtin_tasks
from autocomp.config import parse_config
from autocomp.core.records import read_jsonl, write_jsonl
from autocomp.formats.runs import find_benchmarks
from autocomp.pipeline import run_pipeline
from autocomp.run import Run


def _all_passed(run: Run) -> None:
    """Every image counts as validated (stand-in images: this is about the items)."""
    write_jsonl(run.dir / "validation" / "merged.jsonl", [
        {"id": r["id"], "concept": r["concept"], "task": r["task"], "n": r["n"],
         "track": r["track"], "image": r["image"], "passed": True, "failed_at": None,
         "checks": []} for r in run.records("images")])


@pytest.fixture(scope="module")
def every_task_run(tmp_path_factory):
    concepts = [{"task": t, "count": 2} for t in builtin_tasks()]
    concepts.append({"task": "scenes", "count": 40})
    cfg = parse_config({"name": "store", "concepts": concepts,
                        "captions": {"options": {"slip_rate": 0.0}},
                        "generate": {"options": {"size": 64, "stand_ins": True}},
                        # color-blobs cannot name stand-ins; validation is written by hand
                        "validate": {"detector": "grounding-dino+sam2"},
                        "build": {"max_negatives": 5000}})
    run = Run.create(cfg, tmp_path_factory.mktemp("store") / "run")
    run_pipeline(run, stages=("concepts", "captions", "images"), progress=False)
    _all_passed(run)
    return run


def _read_all(run):
    return {b.name: list(b.items()) for b in find_benchmarks(run.dir)}


def test_regenerated_negatives_equal_the_stored_ones(every_task_run):
    run = every_task_run
    build(run, "full")
    full = _read_all(run)
    sizes_full = sum(p.stat().st_size for p in (run.dir / "bench").rglob("*-n*/*.jsonl"))
    build(run, "compact")
    raw = [json.loads(line) for p in (run.dir / "bench").glob("*-n*/*.jsonl")
           for line in p.read_text().splitlines()]
    assert raw and all("regenerate" in r and "negatives" not in r for r in raw)
    compact = _read_all(run)
    sizes_compact = sum(p.stat().st_size for p in (run.dir / "bench").rglob("*-n*/*.jsonl"))
    assert compact == full  # same items, captions, edits, categories, flags and order
    covered = {(name.split("-n")[0], name.split("/")[0].rsplit("-n", 1)[1]) for name in full}
    for task, path in builtin_tasks().items():
        from autocomp.concepts.load import load_task

        for n in load_task(path).n:
            assert (task, str(n)) in covered
    assert {name.split("/")[1].split("-")[0] for name in full} == {"minimal", "contextual"}
    assert sizes_compact * 10 < sizes_full
    assert json.loads((run.dir / "stats" / "build.json").read_text())["store"] == "compact"


def test_old_full_benches_stay_readable_and_build_migrates(every_task_run, tmp_path):
    from click.testing import CliRunner

    from autocomp.cli import main

    run = every_task_run
    build(run, "full")
    before = _read_all(run)
    out = CliRunner().invoke(main, ["build", str(run.dir), "--store", "compact"])
    assert out.exit_code == 0, out.output
    assert _read_all(run) == before
    # a run made before build.store existed continues with the same config
    cfg = (run.dir / "config.yaml").read_text()
    assert "store: compact" in cfg
    (run.dir / "config.yaml").write_text(cfg.replace("  store: compact\n", ""))
    Run.create(run.config, run.dir)
    # rebuilding leaves no stale benchmark file behind
    stale = run.dir / "bench" / "color-n9" / "minimal-swap.jsonl"
    stale.parent.mkdir()
    stale.write_text("{}\n")
    build(run)
    assert not stale.exists()
    assert list(read_jsonl(next((run.dir / "bench").glob("color-n2/minimal-swap.jsonl"))))


def test_eval_prints_progress_on_long_cells(every_task_run, tmp_path):
    from autocomp.eval.cells import evaluate

    build(every_task_run)
    lines = []
    evaluate(every_task_run.dir, ["reference:oracle"], tmp_path / "res",
             ["color-n3/minimal-confusion"], echo=lines.append, progress_every=0.0)
    progress = [ln for ln in lines if ln.startswith("...")]
    assert progress and "color-n3/minimal-confusion: 2 items" in progress[-1]
    assert "1,458 captions" in progress[-1]  # 2 x (1 + 728): chance is 1/729 here
    assert lines[-1].startswith("done   reference:oracle color-n3/minimal-confusion: acc 100.0")
    quiet = []
    evaluate(every_task_run.dir, ["reference:oracle"], tmp_path / "res2",
             ["color-n3/minimal-confusion"], echo=quiet.append)
    assert not any(ln.startswith("...") for ln in quiet)  # a short cell prints no progress

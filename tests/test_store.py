"""Compact benchmark store (issue 13): negatives enumerated again on read equal the ones
the full store writes, for every built-in task and N, on both tracks."""

import json
import os
from unittest import mock

import pytest
from conftest import all_passed

from autocomp.bench.build import build
from autocomp.concepts.files import builtin_tasks
from autocomp.config import parse_config
from autocomp.core.records import read_jsonl, write_jsonl
from autocomp.formats.runs import find_benchmarks
from autocomp.pipeline import run_pipeline
from autocomp.run import Run


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
    with mock.patch.dict(os.environ, {"HF_HUB_OFFLINE": "0", "TRANSFORMERS_OFFLINE": "0"}):
        # the validation stage's models never run here (its records are written by hand):
        # online, their weights are not checked before the first stage
        run_pipeline(run, stages=("concepts", "captions", "images"), progress=False)
    all_passed(run)
    return run


def _read_all(run):
    return {b.name: list(b.items()) for b in find_benchmarks(run.dir)}


@pytest.mark.slow
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


@pytest.mark.slow
def test_enumerated_negatives_are_cached_once_and_read_back(every_task_run, monkeypatch):
    """Issue 57: a compact benchmark's negatives are enumerated by its first complete
    reading, kept under RUN/cache/negatives/ and in memory, and read back exactly; a
    damaged, stale or unwritable cache is never trusted."""
    import dataclasses
    import shutil

    from autocomp.bench import expanded

    run = every_task_run
    build(run, "compact")
    cache = run.dir / "cache" / "negatives"
    shutil.rmtree(cache, ignore_errors=True)
    expanded.forget()
    plain = {b.name: list(dataclasses.replace(b, run_dir=None).items())
             for b in find_benchmarks(run.dir)}
    assert not cache.exists()
    assert _read_all(run) == plain  # enumerated, and written
    files = sorted(cache.glob("*.jsonl"))
    assert len(files) == len(plain) and not list(cache.glob(".*"))

    def enumerates(*args, **kwargs):
        raise AssertionError("enumerated again")
    expanded.forget()
    with monkeypatch.context() as m:
        m.setattr("autocomp.bench.store.make_negatives", enumerates)
        assert _read_all(run) == plain  # from disk
        assert _read_all(run) == plain  # from memory
        assert expanded._held[0] > 0  # within the budget

    # a damaged line: enumerated from there on, the file removed, the next reading writes it
    expanded.forget()
    lines = files[0].read_text().splitlines(keepends=True)
    files[0].write_text(lines[0][:-9] + "".join(lines[1:]))
    assert _read_all(run) == plain and not files[0].exists()
    expanded.forget()
    assert _read_all(run) == plain and files[0].exists()

    # a line of another item (rows reordered by hand) is not trusted either
    bench = find_benchmarks(run.dir, ["color-n2/minimal-swap"])[0]
    rows = list(read_jsonl(bench.path))
    write_jsonl(bench.path, rows[::-1])  # another file: another key, the old one removed
    expanded.forget()
    assert list(bench.items()) == plain[bench.name][::-1]
    assert len(list(cache.glob("*.jsonl"))) == len(plain)
    write_jsonl(bench.path, rows)

    # a reading stopped early leaves no cache and no temp file; memory keeps to its budget
    shutil.rmtree(cache)
    expanded.forget()
    next(iter(bench.items()))
    assert not list(cache.glob("*")) and not expanded._readings
    from autocomp.core.records import _host  # a killed reading's temp file goes
    orphan = cache / f".x.jsonl.@{_host()}~4194303.autocomp.tmp"
    orphan.write_text("{")
    list(bench.items())
    assert not orphan.exists() and len(list(cache.iterdir())) == 1
    expanded.forget()
    shutil.rmtree(cache)
    monkeypatch.setattr(expanded, "BUDGET", 1)
    assert list(bench.items()) == plain[bench.name] and not expanded._readings

    # a run folder where no cache can be written reads the same
    shutil.rmtree(run.dir / "cache")
    (run.dir / "cache").write_text("not a folder")
    expanded.forget()
    assert _read_all(run) == plain
    (run.dir / "cache").unlink()


@pytest.mark.slow
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


@pytest.mark.slow
def test_eval_prints_progress_on_long_cells(every_task_run, tmp_path, logged):
    from autocomp.eval.cells import evaluate

    build(every_task_run)
    logged()
    evaluate(every_task_run.dir, ["reference:oracle"], tmp_path / "res",
             ["color-n3/minimal-confusion"], progress_every=0.0)
    lines = logged()
    progress = [ln for ln in lines if ln.startswith("...")]
    assert progress and "color-n3/minimal-confusion: 2 items" in progress[-1]
    assert "1,458 captions" in progress[-1]  # 2 x (1 + 728): chance is 1/729 here
    assert lines[-1].startswith("done   reference:oracle color-n3/minimal-confusion: acc 100.0")
    evaluate(every_task_run.dir, ["reference:oracle"], tmp_path / "res2",
             ["color-n3/minimal-confusion"])
    quiet = logged()
    assert not any(ln.startswith("...") for ln in quiet)  # a short cell prints no progress


def _bad_row(run, path, change):
    """Rewrite the first row of a compact file with `change` applied; returns the row."""
    rows = list(read_jsonl(path))
    change(rows[0])
    write_jsonl(path, rows)
    return rows[0]


def test_compact_rows_are_checked_before_enumerating(every_task_run):
    """Issue 23, major 5: a compact row is checked against its file's N, the run's
    build.max_negatives and the format version before its negatives are enumerated (a
    14-object row in an N=2 file grew to gigabytes); a bad row is one line naming
    file:line."""
    import tracemalloc

    from autocomp.core.errors import AutocompError

    run = every_task_run
    build(run)
    path = run.dir / "bench" / "color-n2" / "minimal-swap.jsonl"
    bench = next(b for b in find_benchmarks(run.dir) if b.path == path)
    first = next(iter(read_jsonl(path)))
    assert first["regenerate"]["version"] == 1

    def fourteen(row):
        obj = row["graph"]["objects"][0]
        row["graph"]["objects"] = [dict(obj, name=f"thing{i}") for i in range(14)]
    _bad_row(run, path, fourteen)
    tracemalloc.start()
    with pytest.raises(AutocompError, match=rf"{path}:1: compact item: the graph has 14 "
                                            r"objects and the row says n=2, in a file of N=2"):
        list(bench.items())
    assert tracemalloc.get_traced_memory()[1] < 20 * 2**20
    tracemalloc.stop()

    def fourteen_n(row):  # the row and the file agree, the limit still holds
        fourteen(row)
        row["n"] = 14
    bench14 = bench.__class__(bench.name, bench.task, 14, bench.track, bench.kind, path,
                              bench.tasks, bench.max_negatives)
    _bad_row(run, path, fourteen_n)
    with pytest.raises(AutocompError, match=r"87,178,291,199 negatives.*far more than can be "
                                            r"enumerated"):
        list(bench14.items())

    cases = [(lambda r: r["regenerate"].update(version=2), "format version 2 is not one"),
             (lambda r: r.update(kind="shuffle"), "unknown negative kind 'shuffle'"),
             (lambda r: r.update(graph=[1, 2]), "field 'graph' must be a dict"),
             (lambda r: r["graph"].update(objects=[{"nam": "x"}]), "field 'graph' is not"),
             (lambda r: r.update(n="2"), "field 'n' must be a int")]
    for change, message in cases:
        build(run)
        _bad_row(run, path, change)
        with pytest.raises(AutocompError, match=rf"{path}:1: compact item: .*{message}"):
            list(bench.items())
    build(run)
    path.write_text(path.read_text() + "{not json\n")
    lines = len(path.read_text().splitlines())
    with pytest.raises(AutocompError, match=rf"{path}:{lines}: not a JSON record"):
        list(bench.items())
    path.write_text(path.read_text().replace("{not json", "[1]"))
    with pytest.raises(AutocompError, match=rf"{path}:{lines}: expected an item"):
        list(bench.items())
    build(run)
    # a row written before the version field reads as version 1
    _bad_row(run, path, lambda r: r["regenerate"].pop("version"))
    assert list(bench.items())
    build(run)

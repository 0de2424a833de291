"""core/records.py: atomic writes follow the umask, and the temp files of a writer killed
with -9 are removed by the next command."""

import sys

from conftest import shape_color_run


def test_temp_files_of_a_process_killed_minus_9_are_cleaned_by_the_next_command(tmp_path):
    """kill -9 in the middle of an image, a predictions file and an export left their temp
    files, and a later run, eval or export within the hour kept them (only age counted):
    a temp file now names its writer (host, pid), and a gone writer's is removed at once."""
    import subprocess

    from autocomp.bench.export import export_run
    from autocomp.eval.cells import evaluate
    from autocomp.pipeline import run_pipeline

    run = shape_color_run(tmp_path)
    out, export = tmp_path / "res", tmp_path / "exported"
    out.mkdir()
    killer = f"""
import os, signal
from pathlib import Path
from autocomp.core.records import atomic_dir, atomic_open, temp_path
stack = [atomic_open(Path({str(run.dir / "images" / "minimal" / "x.png")!r}), "wb"),
         atomic_dir(Path({str(export)!r}))]
for ctx in stack:
    ctx.__enter__()
temp_path(Path({str(out / "a.predictions.jsonl")!r})).write_text("half")
os.kill(os.getpid(), signal.SIGKILL)
"""
    got = subprocess.run([sys.executable, "-c", killer], capture_output=True, text=True)
    assert got.returncode == -9, got.stderr
    left = {p.parent.name for p in tmp_path.rglob("*.autocomp.tmp")}
    assert left == {"minimal", "res", tmp_path.name}, left
    live = run.dir / "images" / ".y.png.@elsewhere~1.abc.autocomp.tmp"  # another host's
    live.write_text("half")
    run_pipeline(run, stages=("images",), progress=False)
    evaluate(run.dir, ["reference:random"], out)
    export_run(run.dir, "webdataset", export)
    assert [p.name for p in tmp_path.rglob("*.autocomp.tmp")] == [live.name]


def test_atomic_writes_follow_the_umask(tmp_path):
    """mkstemp makes 0600 files: a run shared with a group was unreadable to it."""
    import os

    from autocomp.core.records import write_jsonl

    old = os.umask(0o002)
    try:
        write_jsonl(tmp_path / "shared.jsonl", [{"a": 1}])
    finally:
        os.umask(old)
    assert (tmp_path / "shared.jsonl").stat().st_mode & 0o777 == 0o664

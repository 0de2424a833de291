"""core/progress.py and eval/cell_progress.py: no long command is silent for longer than
the progress interval, whatever the work between two updates (a model loading, a generative
model's chunk of answers). The tests wait for the lines they expect (events), with a
generous deadline, never for a fixed time: a loaded machine only makes them slower."""

import os
import time
from pathlib import Path

import pytest
from conftest import shape_color_run

from autocomp.core.progress import Progress, busy
from autocomp.eval.cell_progress import CellProgress

DEADLINE = 30.0  # seconds: only a broken heartbeat reaches it


def _still(lines):
    return [ln for ln in lines if "still working" in ln]


def _until(logged, enough, seen=None) -> list[str]:
    """The log lines, gathered until `enough(lines)` holds (the test fails at DEADLINE)."""
    seen = [] if seen is None else seen
    deadline = time.monotonic() + DEADLINE
    while not enough(seen):
        assert time.monotonic() < deadline, seen
        time.sleep(0.02)
        seen += logged()
    return seen


def test_a_progress_with_no_update_still_logs_on_time(logged, monkeypatch):
    monkeypatch.setenv("AUTOCOMP_PROGRESS_EVERY", "0.2")
    logged()
    with Progress("export", 100, "item") as bar:
        lines = _until(logged, _still)  # one long step: no update comes, a beat does
        bar.update(5, "reading")
        _until(logged, lambda got: any(ln.startswith(
            "... export: 5 of 100 (5%) items, reading, still working") for ln in got), lines)
    assert _still(lines)[0].startswith("... export: 0 of 100 (0%) items, still working, ")
    time.sleep(0.5)  # more than two intervals: a beat still running would have logged
    assert not [ln for ln in logged() if ln.startswith("... export")]  # closed: it stopped


def test_a_progress_dropped_without_close_stops_beating(logged, monkeypatch):
    """An exception that skips close() (a stage interrupted) must not leave a heartbeat
    logging for ever: the beat holds its owner weakly and ends with it."""
    import gc

    monkeypatch.setenv("AUTOCOMP_PROGRESS_EVERY", "0.2")
    bar = Progress("dropped", 10, "item")
    beat = bar.beat
    del bar
    gc.collect()
    beat.thread.join(DEADLINE)  # it ends by itself
    assert not beat.thread.is_alive()
    assert not [ln for ln in logged() if ln.startswith("... dropped")]


def test_busy_marks_one_long_call(logged, monkeypatch):
    monkeypatch.setenv("AUTOCOMP_PROGRESS_EVERY", "0.2")
    logged()
    with busy("load vlm:tiny"):
        beats = _until(logged, bool)
    beats += logged()
    assert all(ln.startswith("... load vlm:tiny, still working, ") for ln in beats)


def test_no_heartbeat_below_its_floor_or_when_progress_is_off(logged, monkeypatch):
    monkeypatch.setenv("AUTOCOMP_PROGRESS_EVERY", "0")  # a line per update, no thread
    logged()
    with Progress("x", 3) as bar:
        time.sleep(0.1)
        bar.update()
    (line,) = logged()
    assert line.startswith("... x: 1 of 3 (33%) items, ") and line.endswith(" s")
    with CellProgress("m b", None):  # eval's progress_every=None: never a line
        time.sleep(0.25)
    assert logged() == []


class _Taker:
    scores_items = True


class _Pairs:
    scores_items = False
    scores_pairs = True


def _state(items, seconds, **encoded):
    return {"items": items, "captions": 2 * items, "cache_hits": 0, "seconds": seconds,
            "encoded": {"images": 0, "captions": 0, **encoded}}


def test_a_cells_line_counts_what_its_scorer_does(logged):
    taker = CellProgress("vlm:m@circular b", 1.0, _Taker())
    line = taker.line(_state(30, 10.0))
    assert line == "...    vlm:m@circular b: 30 items scored (3/s), 60 captions of them, 10 s"
    assert "encoded" not in line  # a test taker encodes nothing
    pairs = CellProgress("vqascore:m b", 1.0, _Pairs())
    assert pairs.line(_state(0, 4.0, images=8, pairs=24)).endswith(
        "0 items scored (the first batch is under way), 24 image-caption pairs scored on 8 "
        "images, 4 s")
    dual = CellProgress("clip b", 1.0)
    # issue 68: "0 items (0/s), 0 captions (166 encoded, ...)" while the first chunk encoded
    assert dual.line(_state(0, 1, captions=166, images=12)) == (
        "...    clip b: 0 items scored (the first batch is under way), 166 captions and 12 "
        "images encoded, 0 captions from the cache, 1 s")
    assert dual.line(_state(10, 1, captions=166, images=12)) == (
        "...    clip b: 10 items scored (10/s), 20 captions of them, 166 captions and 12 "
        "images encoded, 0 captions from the cache, 1 s")
    for p in (taker, pairs, dual):
        p.__exit__(None, None, None)


def test_a_long_chunk_of_a_test_taker_is_not_silent(logged):
    logged()
    with CellProgress("vlm:m b", 0.2, _Taker()) as progress:
        progress(_state(0, 0.0))
        lines = _until(logged, lambda got: len(_still(got)) >= 2)  # the answers take long
    assert _still(lines)[0].startswith("...    vlm:m b: 0 items scored (the first batch is "
                                       "under way)")


def test_api_run_shows_its_stages_progress_where_logging_shows_it(logged, monkeypatch,
                                                                  tmp_path):
    from autocomp import api

    monkeypatch.setenv("AUTOCOMP_PROGRESS_EVERY", "0")  # a line per update
    (tmp_path / "c.yaml").write_text("name: c\nconcepts:\n  - {task: shape_color, n: [2], "
                                     "count: 2}\n")
    logged()
    api.run(tmp_path / "c.yaml", tmp_path / "run")
    lines = logged()
    for stage in ("captions", "images", "validation"):
        assert any(ln.startswith(f"... {stage}: ") for ln in lines), (stage, lines)


def _cpu_seconds(pid: int) -> float:
    """The CPU time (user + system) process `pid` has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _lines_in_time(args: list[str], env: dict) -> tuple[list[str], float]:
    """Run `autocomp ARGS` with stdout and stderr as one pipe (not a terminal); its lines,
    and the longest wait for a line (from the start, between lines, to the end). A wait is
    the lesser of its wall-clock time and the CPU time the command spent in it: other
    processes on a loaded machine stretch the first, threads working at once the second."""
    import subprocess
    import sys
    import time

    env = {**env, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    longest, lines, last = 0.0, [], (time.monotonic(), 0.0)
    with subprocess.Popen([sys.executable, "-m", "autocomp", *args], env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT) as proc:

        def wait() -> float:
            nonlocal last
            now = (time.monotonic(), _cpu_seconds(proc.pid))
            waited, last = min(now[0] - last[0], now[1] - last[1]), now
            return waited

        for line in proc.stdout:
            longest = max(longest, wait())
            lines.append(line.rstrip("\n"))
        longest = max(longest, wait())  # exited, not yet reaped: /proc still has its times
    assert proc.returncode == 0, "\n".join(lines[-20:])
    return lines, longest


@pytest.mark.slow
def test_long_commands_print_progress_lines_off_a_terminal(tmp_path):
    """Never silent: with a small interval ($AUTOCOMP_PROGRESS_EVERY) and output that is
    not a terminal, validate, build, eval (model loading and encoding), audit, compass
    build, export and chance print a line at once and progress lines ("... ") as they work:
    no wait for a line is 10 s or more, counted as _lines_in_time says (compass build was
    silent 62 s, audit 26 s, export 22-36 s, eval 24 s before "load")."""
    run = shape_color_run(tmp_path, stages=("concepts", "captions", "images"),
               concept={"task": "shape_color", "n": [3], "count": 6})
    env = {**os.environ, "AUTOCOMP_PROGRESS_EVERY": "0"}
    waits = {}

    def cli(*args):
        lines, waits[args[0] if args[0] != "compass" else "compass build"] = \
            _lines_in_time(list(args), env)
        return "\n".join(lines)

    validated = cli("validate", str(run.dir))
    assert "... validation: " in validated and " of 12 (" in validated
    built = cli("build", str(run.dir))
    assert "benchmark items" in built
    scored = cli("eval", str(run.dir), "--model", "blind:distinct", "--benchmark",
                 "shape_color-n3/minimal-*")
    assert scored.startswith(f"read   {run.dir}\n") and "load   blind:distinct" in scored
    assert "...    blind:distinct shape_color-n3/minimal-confusion: " in scored
    audited = cli("audit", str(run.dir))
    assert "... audit: " in audited and "structure: " in audited and "captions read" in audited
    compass = cli("compass", "build", str(run.dir), "-o", str(tmp_path / "set"),
                  "--similarity", "none")
    assert compass.startswith("compass build: ") and "... compass build: " in compass
    exported = cli("export", str(run.dir), "--export-format", "webdataset", "-o",
                   str(tmp_path / "wds"))
    assert exported.startswith("export ") and "... export: " in exported
    chance = cli("chance", "--task", "color", "--task", "position")
    assert "... chance: 1 of 2 (50%) tasks, color" in chance
    assert max(waits.values()) < 10.0, waits

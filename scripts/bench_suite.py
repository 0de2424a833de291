"""The test suite's wall time against its goals, and its slowest tests.

    python scripts/bench_suite.py [--only full|inner] [--workers auto] [--slowest 15]
                                  [--pytest-args "..."]

Runs README's test command (`python -m pytest`: every test, on every core as pyproject's
addopts say) and the inner loop (`python -m pytest -m "not slow"`), each in a fresh process
from the repository root, and prints for each: wall seconds against its goal (8 min for the
whole suite, 2 min for the inner loop, on a quiet 2-core machine), the ratio goal / wall,
the counts pytest reports (passed, failed, skipped, ...) and its `--slowest` slowest phases
(setup or call) as pytest's --durations gives them. Exits 1 when a run fails a test.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOALS = {"full": ([], 8 * 60), "inner": (["-m", "not slow"], 2 * 60)}
SUMMARY = re.compile(r"(\d+) (passed|failed|skipped|errors?|deselected|xfailed|xpassed)")
DURATION = re.compile(r"^\s*(\d+\.\d+)s (setup|call|teardown)\s+(\S+)")


def run(name: str, workers: str, slowest: int, extra: list[str]) -> bool:
    args, goal = GOALS[name]
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", workers,
           f"--durations={slowest}", *args, *extra]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    print(f"{name}: {shlex.join(cmd[1:])}", flush=True)
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    done = threading.Event()

    def beat():  # never silent: a line every 10 s while pytest works
        while not done.wait(10):
            print(f"... {name}: {time.monotonic() - start:.0f} s", flush=True)

    threading.Thread(target=beat, daemon=True).start()
    lines = [line.rstrip("\n") for line in proc.stdout]
    proc.wait()
    done.set()
    wall = time.monotonic() - start
    tail = "\n".join(lines[-200:])
    counts = {kind: int(n) for n, kind in SUMMARY.findall(lines[-1] if lines else "")}
    print(f"{name}: {wall:.1f} s wall, goal {goal} s, goal / wall {goal / wall:.2f}x; "
          + ", ".join(f"{n} {k}" for k, n in counts.items()))
    print(f"  the {slowest} slowest phases:")
    for line in tail.splitlines():
        m = DURATION.match(line)
        if m:
            print(f"  {float(m.group(1)):7.2f} s  {m.group(2):5}  {m.group(3)}")
    if proc.returncode != 0:
        print("\n".join(line for line in lines if line.startswith(("FAILED", "ERROR"))))
        # what failed and why: the assertion lines of pytest's FAILURES section
        why = [line for line in lines if line.startswith(("E ", ">   "))]
        print("\n".join(why[:80]))
    return proc.returncode == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=sorted(GOALS), default=None)
    parser.add_argument("--workers", default="auto", help="pytest-xdist -n (0: one process)")
    parser.add_argument("--slowest", type=int, default=15)
    parser.add_argument("--pytest-args", default="", help="more arguments for pytest")
    opts = parser.parse_args()
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the start")
    ok = True
    for name in [opts.only] if opts.only else list(GOALS):
        ok &= run(name, opts.workers, opts.slowest, shlex.split(opts.pytest_args))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

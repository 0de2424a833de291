"""Several ranks on loopback (accelerate launch, gloo): a slow rank is never killed by a
peer's timeout, a killed rank loses only its batch in flight, and a relaunch with another
number of processes does exactly the unfinished items."""

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autocomp.core.errors import AutocompError
from autocomp.runtime.parts import part_files, read_part
from autocomp.runtime.sync import Peers

WORKER = Path(__file__).with_name("ranks_worker.py")
ITEMS = 12


def _launch(root: Path, processes: int, behaviour: str, pg_timeout: float = 60):
    cmd = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu",
           "--num_processes", str(processes), "--num_machines", "1", "--mixed_precision",
           "no", "--dynamo_backend", "no", str(WORKER), str(root), behaviour, str(pg_timeout)]
    env = {**os.environ, "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(WORKER.parents[1]), os.environ.get(
               "PYTHONPATH", "")])}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)


def _ids(root: Path, stage: str) -> list[str]:
    return [r["id"] for p in part_files(root / stage) for r in read_part(p)]


@pytest.mark.slow
def test_a_slow_rank_outlives_the_collective_timeout_and_merges(tmp_path):
    """Rank 1 takes ~5 s per stage; the process group's timeout is 2 s. Ranks meet through
    files, so nobody times out; rank 0 leaves after the last stage and rank 1 merges."""
    proc = _launch(tmp_path, 2, "slow", pg_timeout=2)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for stage in ("first", "second"):
        merged = [json.loads(line)["id"] for line in
                  (tmp_path / stage / "merged.jsonl").read_text().splitlines()]
        assert len(merged) == len(set(merged)) == ITEMS
    timing = json.loads((tmp_path / "stats" / "timing" / "second.json").read_text())
    assert timing["merged_by"] == 1 and timing["processes"] == 2
    assert not list((tmp_path / ".sync").iterdir())  # the launch's files are gone


@pytest.mark.slow
def test_a_killed_rank_then_a_relaunch_with_another_world_size(tmp_path):
    first = _launch(tmp_path, 2, "kill")
    assert first.returncode != 0
    before = _ids(tmp_path, "first")
    assert 0 < len(before) < ITEMS and len(before) == len(set(before))
    again = _launch(tmp_path, 3, "none")
    assert again.returncode == 0, again.stderr[-3000:]
    for stage in ("first", "second"):
        ids = _ids(tmp_path, stage)
        assert len(ids) == len(set(ids)) == ITEMS  # each item done exactly once overall
    ranks = {r["rank"] for p in part_files(tmp_path / "second") for r in read_part(p)}
    assert ranks == {0, 1, 2}


def test_a_peer_without_heartbeat_stops_the_wait_in_one_line(tmp_path):
    peers = Peers(tmp_path, "t", 0, 2, wait_timeout=60, stall=0.5, beat=0.1, poll=0.05)
    try:
        peers.finished("images")
        start = time.time()
        with pytest.raises(AutocompError) as err:
            peers.wait_merged("images")
        assert time.time() - start < 60  # the stall (0.5 s), not the 60 s wait, ended it
        assert "rank(s) 1 stopped" in str(err.value) and "re-run" in str(err.value)
    finally:
        peers.close()


def test_the_wait_timeout_is_one_line(tmp_path):
    peers = Peers(tmp_path, "t", 0, 2, wait_timeout=0.3, stall=60, beat=0.05, poll=0.05)
    other = Peers(tmp_path, "t", 1, 2, wait_timeout=60, stall=60, beat=0.05, poll=0.05)
    try:
        peers.finished("images")
        with pytest.raises(AutocompError, match="did not finish within wait_timeout"):
            peers.wait_merged("images")
    finally:
        peers.close()
        other.close()


CHILD = """
import os, sys, time
from autocomp.runtime.sync import Peers
peers = Peers(sys.argv[1], "t", 1, 2, beat=0.1)
open(sys.argv[2], "w").write(str(os.getpid()))
time.sleep(60)
"""


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in state


@pytest.mark.slow
def test_a_rank_whose_launcher_died_stops(tmp_path):
    """Launchers start ranks in their own sessions, so killing the launcher leaves them
    running beside a relaunch; a rank notices its parent is gone and stops (its stderr, a
    pipe to the dead launcher, cannot stop it)."""
    pidfile = tmp_path / "pid"
    parent = ("import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', "
              f"{CHILD!r}, {str(tmp_path)!r}, {str(pidfile)!r}], start_new_session=True, "
              "stderr=subprocess.PIPE); "
              "time.sleep(3)")
    subprocess.run([sys.executable, "-c", parent], check=True, timeout=60)
    pid = int(pidfile.read_text())
    deadline = time.time() + 10
    while _running(pid) and time.time() < deadline:
        time.sleep(0.1)
    assert not _running(pid)


def test_heartbeats_do_not_trust_another_hosts_clock(tmp_path):
    """A live peer whose files look hours old (its clock behind, or a stale NFS attribute
    cache) is not declared dead; a dead one whose files look fresh (its clock ahead) is."""
    me = Peers(tmp_path, "t", 0, 3, wait_timeout=60, stall=0.6, beat=0.05, poll=0.05)
    live = Peers(tmp_path, "t", 1, 3, wait_timeout=60, stall=60, beat=0.05, poll=0.05)
    dead = Peers(tmp_path, "t", 2, 3, wait_timeout=60, stall=60, beat=0.05, poll=0.05)
    dead.close()  # stops beating: its counter no longer changes
    try:
        me.finished("images")
        past, future = time.time() - 7200, time.time() + 7200
        start, seen_dead = time.monotonic(), None
        while time.monotonic() - start < 20 and seen_dead is None:  # ends once seen
            for rank, when in ((1, past), (2, future)):
                with contextlib.suppress(FileNotFoundError):
                    os.utime(tmp_path / ".sync" / "t" / f"alive-{rank}", (when, when))
            found = me._dead("images")
            assert 1 not in found  # beats every 0.05 s, two hours "old"
            if 2 in found:
                seen_dead = time.monotonic() - start
            time.sleep(0.05)
        assert seen_dead is not None and seen_dead >= 0.6  # after `stall`, not at once
    finally:
        me.close()
        live.close()

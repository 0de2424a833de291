"""core/locks.py (issue 54): stage locks that name their holder (host, pid, SLURM job), work
where flock does not (a filesystem answering ENOSYS, as Lustre without flock does), wait a
bounded time, and are taken over once their holder's heartbeat stops; exit statuses a job
script can act on."""

import errno
import json
import os
import socket
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import dead_pid, shape_color_run

from autocomp.cli import main
from autocomp.core import locks
from autocomp.core.errors import (
    CONFIG,
    CRASHED,
    DISK_FULL,
    GPU_MEMORY,
    HELD,
    MEMORY,
    RETRY_LATER,
    WEIGHTS,
    AutocompError,
    ConfigError,
    Held,
    MemoryRefused,
    RetryLater,
    WeightsMissing,
    exit_code,
)


def _no_flock(monkeypatch):
    """A filesystem without flock: every flock call fails with ENOSYS."""
    def refuse(fd, op):
        raise OSError(errno.ENOSYS, "Function not implemented")
    monkeypatch.setattr(locks.fcntl, "flock", refuse)


def test_without_flock_a_lock_file_still_refuses_a_second_worker(tmp_path, monkeypatch,
                                                                  logged):
    _no_flock(monkeypatch)
    monkeypatch.setenv("SLURM_JOB_ID", "4242")
    path = tmp_path / ".locks" / "captions.lock"
    logged()
    with locks.holding({"captions": path}, "stage"):
        held = json.loads((tmp_path / ".locks" / "captions.lock.held").read_text())
        token = held.pop("token")
        assert held == {"host": socket.gethostname(), "pid": os.getpid(), "job": "4242",
                        "gen": 1} and len(token) == 32  # issue 66: a generation, a token
        assert locks.tokens() == {str(path): token}
        with pytest.raises(Held) as err, locks.holding({"captions": path}, "stage", wait=0):
            pass  # a second worker: refused, naming the holder
        assert f"(pid {os.getpid()} on host {socket.gethostname()} (job 4242))" in str(
            err.value)
        assert locks.held_by(path) == f"pid {os.getpid()} on host {socket.gethostname()} " \
                                      "(job 4242)"
    assert not (tmp_path / ".locks" / "captions.lock.held").exists()  # released
    assert locks.held_by(path) is None
    said = logged()
    assert any("flock is not supported under" in ln and "ENOSYS" in ln for ln in said)


def _fake_holder(path, beats: int, every: float = 0.1):
    """A holder on another host: its heartbeat rewrites the counter `beats` times, then
    stops (the node died)."""
    held = path.with_name(path.name + ".held")
    held.parent.mkdir(parents=True, exist_ok=True)

    def run():
        for n in range(beats):
            held.write_text(json.dumps({"host": "node9", "pid": 77, "job": "1", "beat": n}))
            time.sleep(every)
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_a_lock_whose_heartbeat_stopped_is_taken_over_after_the_wait(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOCOMP_LOCKS", "files")
    monkeypatch.setenv("AUTOCOMP_LOCK_STALE", "0.6")
    path = tmp_path / "images.lock"
    holder = _fake_holder(path, beats=8)  # alive for ~0.8 s
    time.sleep(0.05)
    with pytest.raises(Held, match=r"pid 77 on host node9 \(job 1\)"), \
            locks.holding({"images": path}, "stage", wait=0.3):  # shorter than its life
        pass
    with locks.holding({"images": path}, "stage", wait=60):  # Held had it never been taken
        # taken over only once the holder stopped beating (its last beat, then stillness)
        assert not holder.is_alive()
        assert json.loads(path.with_name("images.lock.held").read_text())["pid"] == os.getpid()


def test_a_dead_holder_of_this_host_frees_its_lock_at_once(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOCOMP_LOCKS", "files")
    path = tmp_path / "x.lock"
    gone = dead_pid()
    path.with_name("x.lock.held").write_text(json.dumps(
        {"host": socket.gethostname(), "pid": gone, "job": None, "beat": 3}))
    assert locks.held_by(path) is None
    with locks.holding({"x": path}, "stage", wait=0):
        pass


def test_exit_statuses_say_what_a_retry_can_fix():
    assert exit_code(ConfigError("x")) == CONFIG == 78
    assert exit_code(MemoryRefused("x")) == MEMORY == 80
    assert exit_code(WeightsMissing("x")) == WEIGHTS == 81
    assert exit_code(Held("x")) == HELD == 4
    assert exit_code(OSError(errno.ENOSPC, "full")) == DISK_FULL == 83  # issue 66
    assert exit_code(RuntimeError("NCCL")) == CRASHED == 70
    assert exit_code(RetryLater("a peer stalled")) == RETRY_LATER == 75
    oom = type("OutOfMemoryError", (RuntimeError,), {"__module__": "torch.cuda"})
    assert exit_code(oom("CUDA out of memory")) == GPU_MEMORY == 82
    assert exit_code(RuntimeError("CUDA out of memory. Tried to allocate 2 GiB")) == 82
    assert exit_code(type("OutOfMemoryError", (RuntimeError,), {})("x")) == CRASHED  # not torch's


def test_a_command_out_of_gpu_memory_exits_82_not_crashed(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from autocomp.cli import main

    oom = type("OutOfMemoryError", (RuntimeError,), {"__module__": "torch.cuda"})

    def boom(*a, **k):
        raise oom("CUDA out of memory. Tried to allocate 2.00 GiB")
    monkeypatch.setattr("autocomp.cli.status._check", boom)
    got = CliRunner().invoke(main, ["status", str(tmp_path), "--check"])
    assert got.exit_code == 82 and "out of GPU memory (CUDA out of memory. Tried to " \
        "allocate 2.00 GiB): run it again with a smaller batch" in got.output


def test_a_config_error_and_a_crash_exit_with_their_statuses(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from autocomp.cli import main

    bad = tmp_path / "c.yaml"
    bad.write_text("name: c\nconcepts: 5\n")
    got = CliRunner().invoke(main, ["run", str(bad), "--dry-run"])
    assert got.exit_code == 78 and "field concepts" in got.output

    def boom(*a, **k):
        raise RuntimeError("an unforeseen bug")
    monkeypatch.setattr("autocomp.cli.status._check", boom)
    got = CliRunner().invoke(main, ["status", str(tmp_path), "--check"])
    assert got.exit_code == 70
    assert "crashed (exit 70)" in got.output and "an unforeseen bug" in got.output


def test_a_killed_launchs_sync_folder_is_cleaned_by_the_next_and_not_compared(tmp_path):
    """Issue 54: a killed launch left `.sync/<token>/` forever, and scripts/compare_runs.py
    then reported a difference between two equal runs."""
    import subprocess

    from autocomp.runtime.sync import Peers

    (tmp_path / "a" / ".sync" / "deadbeef").mkdir(parents=True)
    (tmp_path / "a" / ".sync" / "deadbeef" / "alive-0").write_text("3\n")
    (tmp_path / "a" / ".failures").mkdir()
    (tmp_path / "a" / ".failures" / "node1-7.json").write_text("{}")
    (tmp_path / "b").mkdir()
    for run in ("a", "b"):
        (tmp_path / run / "x.jsonl").write_text("{}\n")
    script = Path(__file__).parents[1] / "scripts" / "compare_runs.py"
    same = subprocess.run([sys.executable, str(script), str(tmp_path / "a"),
                           str(tmp_path / "b")], capture_output=True, text=True)
    assert same.returncode == 0, same.stdout
    peers = Peers(tmp_path / "a", "cafe", 0, 2, beat=0.05)
    try:
        assert peers.clean_others() == 1
        assert [p.name for p in (tmp_path / "a" / ".sync").iterdir()] == ["cafe"]
    finally:
        peers.close()


def test_a_workers_recorded_status_is_the_launchs(tmp_path):
    """`autocomp run --processes N`: accelerate's own status hides its workers'; the status
    of the worst recorded failure is the command's (here 80, refused for memory)."""
    from autocomp.core.errors import error_for
    from autocomp.runtime.failures import record, worst

    record(tmp_path, RuntimeError("lost rank 0"), rank=1)
    record(tmp_path, MemoryRefused("47 GiB planned on a 40 GiB card"), rank=0)
    got = worst(tmp_path)
    assert (got["code"], got["rank"], got["meaning"]) == (80, 0, "refused for memory")
    assert exit_code(error_for(got["code"], got["message"])) == 80
    assert worst(tmp_path, since=got["time"] + 60) is None


@pytest.mark.slow  # three processes, a stale time to wait out
def test_three_processes_one_paused_past_the_stale_time_never_two_writers(tmp_path):
    """Issue 66: A holds the lock and writes; it is paused (SIGSTOP) past the stale time;
    B and C race to take it over, one wins (generation 2) and the other waits for it; A is
    woken while the winner writes: its next fence() stops it (exit 4) and its release leaves
    the winner's lock alone, so the third never writes beside the second. The log shows
    three unbroken blocks of lines, A's none after its pause."""
    import signal
    import subprocess

    script = Path(__file__).with_name("lock_writer.py")
    lock, log = tmp_path / ".locks" / "images.lock", tmp_path / "log"
    env = {**os.environ, "AUTOCOMP_LOCKS": "files", "AUTOCOMP_LOCK_STALE": "0.5"}

    def start(name, count):
        return subprocess.Popen([sys.executable, str(script), name, str(lock), str(log),
                                 str(count)], env=env, stderr=subprocess.PIPE, text=True)

    def lines():
        return log.read_text().split("\n")[:-1] if log.exists() else []

    def until(cond, limit=60.0):
        deadline = time.monotonic() + limit
        while not cond():
            assert time.monotonic() < deadline, lines()
            time.sleep(0.02)

    a = start("A", 600)
    until(lambda: len(lines()) >= 3)
    a.send_signal(signal.SIGSTOP)
    paused_at = len(lines())
    b, c = start("B", 8), start("C", 8)
    until(lambda: sum(not ln.startswith("A") for ln in lines()) >= 2)  # one took it over
    a.send_signal(signal.SIGCONT)
    assert a.wait(timeout=60) == 4  # LockLost: held by another process
    assert b.wait(timeout=60) == 0 and c.wait(timeout=60) == 0
    assert "lost the lock images.lock: it now names pid " in a.stderr.read()
    names = [ln.split()[0] for ln in lines()]
    assert names[:paused_at] == ["A"] * paused_at and names.count("A") == paused_at
    blocks = [n for i, n in enumerate(names) if i == 0 or names[i - 1] != n]
    assert sorted(blocks[1:]) == ["B", "C"] and len(blocks) == 3  # never interleaved
    assert names.count("B") == names.count("C") == 8
    assert not lock.with_name("images.lock.held").exists()  # the last released its own
    assert json.loads(lock.with_name("images.lock.gen").read_text()) == {"gen": 3}
    assert not list(lock.parent.glob("images.lock.held.beat-*"))


def test_no_lock_entry_is_followed_through_a_link_or_read_when_not_a_file(tmp_path):
    """Issue 68: `ln -s OUTSIDE run/.locks/build.lock` made autocomp truncate OUTSIDE; a
    dangling link created its target; a directory gave IsADirectoryError (exit 70, requeued);
    a .held FIFO hung; a .held linked to a text file printed it whole."""
    import os

    from autocomp.core.errors import AutocompError
    from autocomp.core.locks import held_by, holding

    locks = tmp_path / "run" / ".locks"
    locks.mkdir(parents=True)
    lock = locks / "build.lock"
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me\n" * 100)

    def refused(what):
        with pytest.raises(AutocompError) as got, holding({"build": lock}, "build", wait=0):
            pass
        assert str(got.value) == (f"{lock}: {what} stands where a lock entry should be: "
                                  "autocomp neither follows nor replaces it; remove it (and "
                                  "ask who made it)")

    lock.symlink_to(outside)
    refused("a symbolic link")
    assert outside.read_text() == "keep me\n" * 100
    lock.unlink()
    lock.symlink_to(tmp_path / "made-by-a-link")
    refused("a symbolic link")
    assert not (tmp_path / "made-by-a-link").exists()
    lock.unlink()
    lock.mkdir()
    refused("a directory")
    lock.rmdir()
    held = locks / "build.lock.held"
    os.mkfifo(held)
    with pytest.raises(AutocompError, match="a FIFO stands where"):
        held_by(lock)
    held.unlink()
    held.symlink_to(outside)
    with pytest.raises(AutocompError, match="a symbolic link stands where"):
        held_by(lock)
    held.unlink()
    held.write_text("keep me\n" * 100)  # an entry that is no holder: named, never printed
    assert held_by(lock) in (None, "pid ?")
    with holding({"build": lock}, "build", wait=0):
        pass


def test_a_second_run_on_a_busy_stage_is_refused_until_the_first_ends(tmp_path):
    """Two `autocomp run` on one run: the second refuses in one line naming the stage and
    the other process, instead of doing the same work twice; a killed holder leaves no
    stale lock."""
    import subprocess

    from autocomp.core.errors import AutocompError
    from autocomp.pipeline import run_pipeline

    run = shape_color_run(tmp_path, stages=("concepts",))
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom autocomp.core.locks import holding\n"
         "with holding({'captions': sys.argv[1]}, 'stage'):\n"
         "    print('held', flush=True); time.sleep(60)", str(run.paths.stage_lock("captions"))],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(AutocompError, match=f"pid {holder.pid}.*'captions'"):
            run_pipeline(run, stages=("captions", "images"), progress=False)
        assert not run.paths.parts("captions")  # refused before doing any work
    finally:
        holder.kill()
        holder.wait()
    run_pipeline(run, stages=("captions",), progress=False)
    assert run.paths.parts("captions")


def test_a_second_compass_build_into_one_output_refuses_at_once(tmp_path):
    """Two builds into one folder both did the whole work, writing over each other."""
    from autocomp.core.locks import holding

    run = shape_color_run(tmp_path)
    out = tmp_path / "set"
    with holding({str(out): out / ".build.lock"}, "compass build", "into this folder"):
        got = CliRunner().invoke(main, ["compass", "build", str(run.dir), "-o", str(out),
                                        "--similarity", "none"])
    assert got.exit_code == 4 and "is running compass build" in got.output, got.output
    assert "into this folder; wait for it to finish" in got.output
    assert not (out / "manifest.json").exists()
    again = CliRunner().invoke(main, ["compass", "build", str(run.dir), "-o", str(out),
                                      "--similarity", "none"])
    assert again.exit_code == 0 and (out / "manifest.json").is_file(), again.output


def test_two_runs_with_different_configs_started_at_once_one_is_refused(tmp_path,
                                                                        monkeypatch):
    import threading
    import time

    from autocomp import run as run_mod
    from autocomp.config import parse_config

    slow_write = run_mod.write_text

    def slow(path, text):  # widen the window between "no config yet" and writing it
        time.sleep(0.3)
        slow_write(path, text)

    monkeypatch.setattr(run_mod, "write_text", slow)
    configs = [parse_config({"name": "r", "seed": s, "concepts": [
        {"task": "shape_color", "n": [2], "count": 2}]}) for s in (1, 2)]
    outcome = []

    def start(cfg):
        try:
            run_mod.Run.create(cfg, tmp_path / "run")
            outcome.append("ok")
        except AutocompError as exc:
            outcome.append(str(exc))

    threads = [threading.Thread(target=start, args=(c,)) for c in configs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(o == "ok" for o in outcome) == [False, True], outcome
    assert any("made with another config" in o for o in outcome)

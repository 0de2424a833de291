"""scripts/slurm_autocomp.sbatch end to end on one CPU machine: a stand-in `srun` runs the
job's command once per "node" on loopback (2 nodes x 1 process, accelerate over gloo), a
stand-in `scontrol` records requeues. The job is signalled as the time limit nears, requeues
itself, and the requeued job finishes the run with every item done exactly once. A second
launch on a run whose stages are held is refused."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import dead_pid

from autocomp.runtime.parts import part_files, read_part

ROOT = Path(__file__).parents[1]
SBATCH = ROOT / "scripts" / "slurm_autocomp.sbatch"

# what the stand-ins do, written here in SLURM's terms (nothing of SLURM's is copied)
SRUN = """#!/usr/bin/env bash
# srun: the step's command once per node of the job, each in its own process group with
# SLURM_NODEID / SLURM_PROCID / SLURM_LOCALID set; SIGTERM goes on to every task
opts=()
while [ $# -gt 0 ] && [ "${1#--}" != "$1" ]; do opts+=("$1"); shift; done
echo "${opts[*]} SRUN_CPUS_PER_TASK=${SRUN_CPUS_PER_TASK:-}" \
  "AUTOCOMP_CPUS_PER_RANK=${AUTOCOMP_CPUS_PER_RANK:-} AUTOCOMP_LOCAL_DIR=${AUTOCOMP_LOCAL_DIR:-}" \
  "AUTOCOMP_LAUNCH=${AUTOCOMP_LAUNCH:-}" >> "$FAKE_SLURM/srun.log"
pids=()
for ((i = 0; i < SLURM_NNODES; i++)); do
  SLURM_NODEID=$i SLURM_PROCID=$i SLURM_LOCALID=0 setsid "$@" &
  pids+=($!)
done
trap 'for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null; done' TERM
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=$?; done
exit $rc
"""
SCONTROL = """#!/usr/bin/env bash
case "$1" in
  show) echo 127.0.0.1 ;;                       # every node of the job is this machine
  requeue) echo "$2" >> "$FAKE_SLURM/requeued" ;;
  *) exit 2 ;;
esac
"""
CONFIG = """
name: slurm
seed: 0
concepts:
  - {task: shape_color, n: [2, 3], count: 8}
captions: {writer: template, retries: 1}
generate:
  generator: procedural
  options: {size: 128}
  batch_size: 4
validate: {detector: color-blobs, answerer: pixels, batch_size: 4}
build: {benchmarks: [swap]}
"""


def _env(tmp_path: Path, restarts: int) -> dict:
    fake = tmp_path / "slurm"
    fake.mkdir(exist_ok=True)
    for name, text in (("srun", SRUN), ("scontrol", SCONTROL)):
        (fake / name).write_text(text)
        (fake / name).chmod(0o755)
    path = os.pathsep.join([str(fake), str(Path(sys.executable).parent), os.environ["PATH"]])
    return {**os.environ, "PATH": path, "FAKE_SLURM": str(fake), "SLURM_JOB_ID": "4242",
            "SLURM_NNODES": "2", "SLURM_JOB_NODELIST": "node[1-2]", "SLURM_GPUS_PER_NODE": "1",
            "SLURM_CPUS_PER_TASK": "1", "SLURM_RESTART_COUNT": str(restarts),
            "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}


def _earlier_attempt_holds(held: Path, for_seconds: float):
    """A lock file of job 4242's earlier attempt on node9, its heartbeat beating every
    0.2 s for `for_seconds`, then still (the node died); returns the event set then."""
    import json
    import threading

    held.parent.mkdir(parents=True, exist_ok=True)
    stop = threading.Event()

    def beat():
        n = 0
        while not stop.wait(0.2):
            held.write_text(json.dumps({"host": "node9", "pid": 7, "job": "4242", "beat": n}))
            n += 1
    held.write_text(json.dumps({"host": "node9", "pid": 7, "job": "4242", "beat": 0}))
    threading.Thread(target=beat, daemon=True).start()
    threading.Timer(for_seconds, stop.set).start()
    return stop


def _records(stage_dir: Path) -> list[str]:
    return [r["id"] for p in part_files(stage_dir) for r in read_part(p)]


@pytest.mark.slow
def test_the_sbatch_requeues_itself_near_the_limit_and_the_requeue_finishes(tmp_path):
    config, run = tmp_path / "slurm.yaml", tmp_path / "run"
    config.write_text(CONFIG)
    cmd = ["bash", str(SBATCH), str(config), str(run)]
    job = subprocess.Popen(cmd, cwd=tmp_path, env=_env(tmp_path, 0), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 240
    while time.time() < deadline and job.poll() is None and len(_records(run / "images")) < 6:
        time.sleep(0.05)
    assert job.poll() is None, job.stdout.read()[-3000:]
    job.send_signal(signal.SIGUSR1)  # what --signal=B:USR1@600 sends 10 minutes before
    out, _ = job.communicate(timeout=120)
    assert job.returncode == 0, out[-3000:]
    assert "the time limit is near; requeueing job 4242 (restart 1)" in out
    assert (tmp_path / "slurm" / "requeued").read_text().split() == ["4242"]
    srun = (tmp_path / "slurm" / "srun.log").read_text()
    assert "--cpus-per-task=1" in srun and "SRUN_CPUS_PER_TASK=1" in srun
    check = subprocess.run(["autocomp", "status", str(run), "--check"], capture_output=True,
                           text=True, env=_env(tmp_path, 0))
    assert check.returncode == 3 and "unfinished" in check.stdout, check.stdout
    before = _records(run / "images")

    # issue 54: the requeued job finds its earlier attempt's lock still held (a lock file,
    # as on Lustre without flock, whose holder on a node that then died beats for 3 s):
    # before, `status --check` said 4 and the job ended with nothing to resume the run;
    # now it waits, takes the lock over once the heartbeat stood still, and finishes
    stop = _earlier_attempt_holds(run / ".locks" / "captions.lock.held", for_seconds=3.0)
    env = {**_env(tmp_path, 1), "AUTOCOMP_LOCKS": "files", "AUTOCOMP_LOCK_STALE": "1",
           "AUTOCOMP_HELD_WAIT": "120", "AUTOCOMP_LOCK_WAIT": "60"}
    start = time.monotonic()
    again = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=300)
    assert again.returncode == 0, (again.stdout + again.stderr)[-3000:]
    assert time.monotonic() - start > 3.0 and stop.is_set()  # it waited for the beats to end
    assert "took over captions.lock.held, whose holder stopped (pid 7 on host node9 (job " \
        "4242))" in again.stdout + again.stderr
    assert not (run / ".locks" / "captions.lock.held").exists()
    check = subprocess.run(["autocomp", "status", str(run), "--check"], capture_output=True,
                           text=True, env=_env(tmp_path, 1))
    assert check.returncode == 0 and check.stdout.strip().endswith("done"), check.stdout
    for stage in ("captions", "images", "validation"):
        ids = _records(run / stage)
        assert len(ids) == len(set(ids)) > 0  # nothing done twice
    images = _records(run / "images")
    assert set(before) < set(images) and len(images) == 2 * 16  # two tracks of 16 concepts
    assert (run / "bench").is_dir()
    # the requeued job found the run done: it ends at once, and so does a third
    third = subprocess.run(cmd, cwd=tmp_path, env=_env(tmp_path, 2), capture_output=True,
                           text=True, timeout=120)
    assert third.returncode == 0 and "done" in third.stdout
    assert (tmp_path / "slurm" / "requeued").read_text().split() == ["4242"]


def test_a_second_launch_on_a_held_run_is_refused_and_does_nothing(tmp_path):
    from autocomp.config import load_config
    from autocomp.core.locks import holding
    from autocomp.run import Run

    (tmp_path / "slurm.yaml").write_text(CONFIG)
    run = Run.create(load_config(tmp_path / "slurm.yaml"), tmp_path / "run")
    env = _env(tmp_path, 0)
    subprocess.run(["autocomp", "run", str(tmp_path / "slurm.yaml"), "--output", str(run.dir),
                    "--stages", "concepts", "--no-progress"], check=True, env=env,
                   capture_output=True)
    with holding({"captions": run.paths.stage_lock("captions")}, "stage"):
        worker = subprocess.run([sys.executable, "-m", "autocomp.pipeline", str(run.dir),
                                 "--stages", "captions", "--no-progress"], env=env,
                                capture_output=True, text=True, timeout=120)
        check = subprocess.run(["autocomp", "status", str(run.dir), "--check"], env=env,
                               capture_output=True, text=True)
    assert worker.returncode != 0
    import socket

    assert worker.returncode == 4  # held (core/errors.py)
    assert f"another autocomp process (pid {os.getpid()} on host {socket.gethostname()}) " \
        "is running stage 'captions'" in worker.stderr
    assert not _records(run.dir / "captions")
    assert check.returncode == 4 and "being run by another process" in check.stdout


SMALL = """
name: slurm-small
seed: 0
concepts:
  - {task: shape_color, n: [2], count: 3}
captions: {writer: template, retries: 1}
generate:
  generator: procedural
  options: {size: 128}
  batch_size: 4
validate: {detector: color-blobs, answerer: pixels, batch_size: 4}
build: {benchmarks: [swap]}
"""


@pytest.mark.slow
def test_missing_weights_are_not_requeued_and_the_log_says_why(tmp_path):
    """Issue 54: a failure that would fail alike again (weights not on this machine under
    HF_HUB_OFFLINE=1) ends the job with its status (81) and says why, instead of being
    requeued 20 times, each waiting in the queue for the nodes."""
    config, run = tmp_path / "slurm.yaml", tmp_path / "run"
    config.write_text(SMALL.replace("captions: {writer: template, retries: 1}",
                                    "captions: {writer: transformers, options: {model: "
                                    "org/not-on-this-machine}}"))
    job = subprocess.run(["bash", str(SBATCH), str(config), str(run)], cwd=tmp_path,
                         env=_env(tmp_path, 0), capture_output=True, text=True, timeout=300)
    out = job.stdout + job.stderr
    assert job.returncode == 81, out[-3000:]
    # issue 66: found before the first stage (the concepts step), not hours into a launch
    assert "autocomp: not requeued: the concepts stage stopped before the run was done" in out
    assert "exit 81 (weights missing)" in out and "captions.options.model: model " \
        "'org/not-on-this-machine' is not on this machine (offline: HF_HUB_OFFLINE=1)" in out
    assert not (run / "concepts" / "merged.jsonl").exists()  # nothing ran
    assert not (tmp_path / "slurm" / "requeued").exists()


@pytest.mark.slow  # two processes over gloo
def test_a_run_killed_during_its_merge_completes_on_requeue_with_every_id_once(tmp_path,
                                                                              monkeypatch):
    """Issue 54: preemption (SIGTERM: no cleanup) while a stage's records are merged leaves
    half a merge in a temp file and no merged.jsonl; the requeued run removes the orphan,
    merges again, and ends with every id once and the files of a run never stopped."""
    import json
    import socket

    import autocomp.runtime.runner as runner
    from autocomp.config import load_config
    from autocomp.pipeline import run_pipeline
    from autocomp.run import Run

    config = tmp_path / "s.yaml"
    config.write_text(SMALL)
    ref = Run.create(load_config(config), tmp_path / "ref")
    run_pipeline(ref, progress=False)
    run = Run.create(load_config(config), tmp_path / "run")
    real, dead = runner.write_jsonl, dead_pid()

    def preempted(path, records):
        if path.name == "merged.jsonl" and path.parent.name == "images":
            records = list(records)
            tmp = path.with_name(f".{path.name}.@{socket.gethostname()}~{dead}.autocomp.tmp")
            tmp.write_text("".join(json.dumps(r) + "\n" for r in records[: len(records) // 2]))
            raise SystemExit(143)  # SIGTERM's status: the merge never finished
        return real(path, records)

    monkeypatch.setattr(runner, "write_jsonl", preempted)
    with pytest.raises(SystemExit):
        run_pipeline(run, progress=False)
    monkeypatch.setattr(runner, "write_jsonl", real)
    assert not (run.dir / "images" / "merged.jsonl").exists()
    assert list((run.dir / "images").glob(".merged.jsonl.*"))
    run_pipeline(Run.open(run.dir), progress=False)  # the requeue
    assert not list((run.dir / "images").glob(".merged.jsonl.*"))
    for stage in ("captions", "images", "validation"):
        ids = [json.loads(ln)["id"] for ln in
               (run.dir / stage / "merged.jsonl").read_text().splitlines()]
        assert len(ids) == len(set(ids)) > 0, stage
        assert (run.dir / stage / "merged.jsonl").read_bytes() == \
            (ref.dir / stage / "merged.jsonl").read_bytes()
    bench = sorted(p.relative_to(run.dir) for p in (run.dir / "bench").rglob("*.jsonl"))
    assert bench and all((run.dir / p).read_bytes() == (ref.dir / p).read_bytes()
                         for p in bench)


@pytest.mark.slow
def test_a_rendezvous_with_no_peer_fails_within_its_timeout_in_one_line(tmp_path):
    """Issue 54: rank 1 of 2 whose rank 0 never starts (a wrong interface, a port taken
    between choosing and binding): before, it waited out wait_timeout, a day of the
    allocation. Now it stops after launch.rendezvous_timeout with one line naming the
    address and port, exit 75 (retry later), recorded for the job script."""
    from autocomp.config import load_config
    from autocomp.pipeline import run_pipeline
    from autocomp.run import Run
    from autocomp.runtime.launch import free_port

    config = tmp_path / "s.yaml"
    config.write_text(SMALL + "launch: {rendezvous_timeout: 1}\n")
    run = Run.create(load_config(config), tmp_path / "run")
    run_pipeline(run, stages=("concepts",), progress=False)
    port = free_port()  # nobody listens there
    env = {**os.environ, "WORLD_SIZE": "2", "RANK": "1", "LOCAL_RANK": "1",
           "LOCAL_WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port),
           "OMP_NUM_THREADS": "1"}
    start = time.monotonic()
    got = subprocess.run([sys.executable, "-m", "autocomp.pipeline", str(run.dir), "--stages",
                          "captions", "--no-progress"], env=env, capture_output=True,
                         text=True, timeout=120)
    took = time.monotonic() - start
    assert got.returncode == 75, got.stderr[-2000:]
    lines = [ln for ln in got.stderr.splitlines() if ln.startswith("autocomp:")]
    assert lines == [f"autocomp: rank 1 of 2: the rendezvous at 127.0.0.1:{port} did not "
                     "complete within 1 s (a peer that never started, a wrong interface or "
                     "address, or a port taken meanwhile): retry later"]
    assert took < 60  # the timeout and the imports, not a day
    check = subprocess.run([str(Path(sys.executable).parent / "autocomp"), "status",
                            str(run.dir), "--failure"], capture_output=True, text=True)
    assert check.returncode == 75 and "exit 75 (retry later) on rank 1" in check.stdout

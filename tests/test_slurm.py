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

from autocomp.runtime.parts import part_files, read_part

ROOT = Path(__file__).parents[1]
SBATCH = ROOT / "scripts" / "slurm_autocomp.sbatch"

# what the stand-ins do, written here in SLURM's terms (nothing of SLURM's is copied)
SRUN = """#!/usr/bin/env bash
# srun: the step's command once per node of the job, each in its own process group with
# SLURM_NODEID / SLURM_PROCID / SLURM_LOCALID set; SIGTERM goes on to every task
opts=()
while [ $# -gt 0 ] && [ "${1#--}" != "$1" ]; do opts+=("$1"); shift; done
echo "${opts[*]} SRUN_CPUS_PER_TASK=${SRUN_CPUS_PER_TASK:-}" >> "$FAKE_SLURM/srun.log"
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
  - {task: shape_color, n: [2, 3], count: 16}
captions: {writer: template, retries: 1}
generate:
  generator: procedural
  options: {size: 256}
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

    again = subprocess.run(cmd, cwd=tmp_path, env=_env(tmp_path, 1), capture_output=True,
                           text=True, timeout=300)
    assert again.returncode == 0, (again.stdout + again.stderr)[-3000:]
    check = subprocess.run(["autocomp", "status", str(run), "--check"], capture_output=True,
                           text=True, env=_env(tmp_path, 1))
    assert check.returncode == 0 and check.stdout.strip().endswith("done"), check.stdout
    for stage in ("captions", "images", "validation"):
        ids = _records(run / stage)
        assert len(ids) == len(set(ids)) > 0  # nothing done twice
    images = _records(run / "images")
    assert set(before) < set(images) and len(images) == 2 * 32  # two tracks of 32 concepts
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
    with holding({"captions": run.layout.stage_lock("captions")}, "stage"):
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

"""runtime/failures.py (issue 66): each failure class through
scripts/slurm_autocomp.sbatch with stand-in `srun`, `scontrol` and `accelerate`
(tests/slurm_worker.py fails the way each case names, through autocomp's own code): a
stalled peer is requeued, a GPU out of memory is not (the log names the batch to try), a
full disk is requeued once and then not, a deterministic crash is requeued once and then
not, and a worker whose clock is 600 s behind the batch host is classified by its launch
id (81, not "no worker recorded why")."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_slurm import SMALL, _env

ROOT = Path(__file__).parents[1]
SBATCH = ROOT / "scripts" / "slurm_autocomp.sbatch"
ACCELERATE = f"""#!/usr/bin/env bash
# accelerate: the launch's one process, tests/slurm_worker.py, failing as $FAKE_FAILURE says
exec {sys.executable} {ROOT / "tests" / "slurm_worker.py"} "$@"
"""


def _job(tmp_path: Path, failure: str, restarts: int = 0, run: Path | None = None):
    config, run = tmp_path / "slurm.yaml", run or tmp_path / "run"
    config.write_text(SMALL)
    env = _env(tmp_path, restarts)
    fake = Path(env["FAKE_SLURM"]) / "accelerate"
    fake.write_text(ACCELERATE)
    fake.chmod(0o755)
    env["FAKE_FAILURE"] = failure
    got = subprocess.run(["bash", str(SBATCH), str(config), str(run)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=240)
    requeued = Path(env["FAKE_SLURM"]) / "requeued"
    return got, got.stdout + got.stderr, (requeued.read_text().split()
                                          if requeued.exists() else [])


@pytest.mark.slow
def test_a_stalled_peer_is_retry_later_and_requeued(tmp_path):
    got, out, requeued = _job(tmp_path, "stall")
    assert got.returncode == 0, out[-3000:]
    assert "exit 75 (retry later) on rank 0: " in out and "rank(s) 1 stopped (no heartbeat " \
        "for 0 s)" in out
    assert "requeueing job 4242 (restart 1)" in out and requeued == ["4242"]
    # what the job hands each node's ranks: its CPUs shared out, local compile caches, the
    # launch's id (32 CPUs over 8 GPUs on the real nodes: 4 compile threads a rank)
    srun = (tmp_path / "slurm" / "srun.log").read_text()
    assert "AUTOCOMP_CPUS_PER_RANK=1 " in srun and "AUTOCOMP_LOCAL_DIR=" in srun
    assert "/autocomp-4242 " in srun and "AUTOCOMP_LAUNCH=4242-0-" in srun


@pytest.mark.slow
def test_gpu_out_of_memory_is_not_requeued_and_names_the_batch_to_try(tmp_path):
    got, out, requeued = _job(tmp_path, "oom")
    assert got.returncode == 82, out[-3000:]
    assert "autocomp: not requeued: the launch stopped before the run was done (exit 82): " \
        "exit 82 (out of GPU memory) on rank 3: stage images: out of GPU memory at a batch " \
        "of 4 (CUDA out of memory. Tried to allocate 2.50 GiB); the same batch fails alike: " \
        "set generate.batch_size: 2 in the config" in " ".join(out.split())
    assert requeued == []


def _earlier_launch(run: Path, code: int, kind: str, message: str) -> None:
    """The failure record an earlier launch of this job left (restart 0)."""
    import json

    folder = run / ".failures"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "node9-77.json").write_text(json.dumps({
        "code": code, "meaning": "", "message": message, "type": kind, "rank": 0,
        "launch": "4242-0-0123456789ab", "time": 0.0}))


@pytest.mark.slow
def test_a_full_disk_is_requeued_once_then_stops_with_the_space_it_needs(tmp_path):
    got, out, requeued = _job(tmp_path, "disk")
    assert got.returncode == 0 and requeued == ["4242"], out[-3000:]
    assert "exit 83 (disk full) on rank 3: disk full (in stage images under " in out
    assert "the 40 images item(s) left need about " in out and "and 40 files" in out
    # the requeued job's launch fills the disk again: not requeued a second time
    other = tmp_path / "again"
    other.mkdir()
    _earlier_launch(other / "run", 83, "DiskFull", "disk full (in stage images ...)")
    again, out, requeued = _job(other, "disk", restarts=1)
    assert again.returncode == 83, out[-3000:]
    assert "(the same failure ended 1 earlier launch(es))" in out
    assert "not requeued" in out and requeued == []


@pytest.mark.slow
def test_a_deterministic_crash_stops_where_it_ended_an_earlier_launch(tmp_path):
    """The first crash of a job is requeued (a retry may pass: the disk case above shows
    the requeue); the same error and message in the launch after it is not."""
    _earlier_launch(tmp_path / "run", 70, "KeyError", "'the same key every time'")
    second, out, requeued = _job(tmp_path, "crash", restarts=1)
    assert second.returncode == 70, out[-3000:]
    assert "exit 70 (crashed) on rank 0: 'the same key every time' (the same failure ended " \
        "1 earlier launch(es))" in out and requeued == []


@pytest.mark.slow
def test_a_worker_clock_600_s_behind_the_batch_host_is_classified_by_its_launch(tmp_path):
    got, out, requeued = _job(tmp_path, "skew")
    assert got.returncode == 81, out[-3000:]
    assert "exit 81 (weights missing) on rank 5: model 'org/not-on-this-machine'" in out
    assert "no process recorded why" not in out and requeued == []
    assert os.path.isdir(tmp_path / "run" / ".failures")


def test_a_stage_that_cannot_fit_on_the_disk_is_refused_before_it_starts(tmp_path,
                                                                          monkeypatch):
    """Free space and inodes are checked before a stage starts, from the run's own images
    (their mean size once 8 are written) or the generator's stated bytes per pixel."""
    from autocomp.config import load_config
    from autocomp.core.errors import DiskFull
    from autocomp.core.registry import make_stage
    from autocomp.pipeline import run_pipeline
    from autocomp.run import Run
    from autocomp.runtime import space

    (tmp_path / "s.yaml").write_text(SMALL.replace("count: 3", "count: 4"))  # 8 images
    run = Run.create(load_config(tmp_path / "s.yaml"), tmp_path / "run")
    stage = make_stage("images", run, "cpu")
    per_bytes, files = stage.disk_per_item()
    assert files == 1 and per_bytes == 0.54 * 128 * 128 + 3000  # stated: nothing written yet
    monkeypatch.setattr(space, "free", lambda folder: (1e6, 10))
    with pytest.raises(DiskFull) as got:
        space.check(stage, 40)
    assert str(got.value).startswith("disk full (before stage images under ")
    assert "40 files, 10 inodes free" in str(got.value)
    monkeypatch.setattr(space, "free", lambda folder: (10e3, None))  # no inode count
    with pytest.raises(DiskFull) as got:
        space.check(stage, 40)
    assert f"{space.size(40 * per_bytes * space.MARGIN)} for 40 item(s), 10.0 kB free" \
        in str(got.value)
    monkeypatch.undo()
    run_pipeline(run, stages=("concepts", "captions", "images"), progress=False)
    written = [p.stat().st_size for p in sorted((run.dir / "images").rglob("*.png"))]
    measured, _ = make_stage("images", run, "cpu").disk_per_item()
    assert len(written) == 8 and measured == sum(written) / 8 + 3000  # the run's own PNGs


def test_every_configured_model_is_checked_before_the_first_stage(tmp_path, monkeypatch):
    """Offline, a model neither in a folder nor in the Hugging Face cache is one line, with
    the field and the command that fetches it, before anything runs (exit 81); with the hub
    reachable nothing is checked (the libraries download)."""
    from click.testing import CliRunner

    from autocomp.cli import main
    from autocomp.config import load_config
    from autocomp.planning.weights import check, configured

    folder = tmp_path / "detector"
    folder.mkdir()
    config = tmp_path / "c.yaml"
    config.write_text(SMALL.replace(
        "captions: {writer: template, retries: 1}",
        "captions: {writer: transformers, options: {model: org/not-here-a}}").replace(
        "validate: {detector: color-blobs, answerer: pixels, batch_size: 4}",
        f"validate: {{detector: grounding-dino+sam2, detector_options: {{detector_model: "
        f"{folder}, segmenter_model: org/not-here-b}}, answerer: pixels}}"))
    cfg = load_config(config)
    assert [f for f, _, _ in configured(cfg)] == [
        "captions.options.model", "validate.detector_options.detector_model",
        "validate.detector_options.segmenter_model"]
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    got = CliRunner().invoke(main, ["run", str(config), "-o", str(tmp_path / "run")])
    assert got.exit_code == 81, got.output
    lines = got.output.strip().splitlines()
    assert lines[-2:] == [
        "captions.options.model: model 'org/not-here-a' is not on this machine (offline: "
        "HF_HUB_OFFLINE=1): where there is network run `hf download org/not-here-a` (into the "
        "cache this machine reads, $HF_HOME), or copy its folder here and set "
        "captions.options.model",
        "validate.detector_options.segmenter_model: model 'org/not-here-b' is not on this "
        "machine (offline: HF_HUB_OFFLINE=1): where there is network run `hf download "
        "org/not-here-b` (into the cache this machine reads, $HF_HOME), or copy its folder "
        "here and set validate.detector_options.segmenter_model"]
    assert "2 model(s) missing before the first stage" in got.output
    assert not (tmp_path / "run" / "concepts").exists()  # nothing sampled first
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "0")
    check(cfg)  # online: the libraries fetch what is missing


def test_the_dry_run_plans_disk_and_inodes_and_the_demo_run_agrees(demo_run):
    """The disk plan from the generator's stated bytes a pixel: configs/autocomp-cp.yaml's
    809,400 PNGs at 1024 px need ~1.5 TB and as many inodes; the demo's plan is within 25%
    of what the demo run wrote (bytes and files)."""
    from autocomp.config import load_config
    from autocomp.planning.disk import format_plan as format_disk
    from autocomp.planning.plan import plan

    cp = plan(load_config(ROOT / "configs" / "autocomp-cp.yaml"))["disk"]
    assert cp["png"] == 1.8 * 1024 * 1024 and cp["files"] == 809_400 + 64
    assert 1.4e12 < cp["bytes"] < 1.7e12
    assert format_disk(cp).startswith("Disk under the run folder: 1.5 TB and 809,464 files "
                                      "(inodes): 809,400 PNGs at 1024 px x 1.9 MB")
    demo = plan(load_config(ROOT / "configs" / "demo.yaml"))["disk"]
    files = [p for p in demo_run.rglob("*") if p.is_file()  # cache/: what reading the
             and p.relative_to(demo_run).parts[0] != "cache"]  # benchmarks later adds
    wrote = sum(p.stat().st_size for p in files)
    assert abs(demo["bytes"] / wrote - 1) < 0.25, (demo["bytes"], wrote)
    assert abs(demo["files"] / len(files) - 1) < 0.25, (demo["files"], len(files))


@pytest.mark.slow
def test_the_time_limits_signal_reaches_a_long_build(tmp_path):
    """`autocomp build` ran in the foreground, where bash defers a trap until the command
    ends: a build still running at the time limit ended the job as TIMEOUT. A stand-in
    `autocomp build` that takes a minute is stopped and the job requeued at once."""
    import signal
    import time

    env = _env(tmp_path, 0)
    fake = Path(env["FAKE_SLURM"])
    (fake / "accelerate").write_text(ACCELERATE)
    (fake / "accelerate").chmod(0o755)
    real = Path(sys.executable).parent / "autocomp"
    (fake / "autocomp").write_text(f"""#!/usr/bin/env bash
if [ "$1" = build ]; then touch "$FAKE_SLURM/build.started"; exec sleep 60; fi
exec {real} "$@"
""")
    (fake / "autocomp").chmod(0o755)
    config = tmp_path / "slurm.yaml"
    config.write_text(SMALL)
    job = subprocess.Popen(["bash", str(SBATCH), str(config), str(tmp_path / "run")],
                           cwd=tmp_path, env={**env, "FAKE_FAILURE": "none"},
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 120
    while not (fake / "build.started").exists():
        assert job.poll() is None and time.monotonic() < deadline, job.stdout.read()
        time.sleep(0.05)
    job.send_signal(signal.SIGUSR1)
    start = time.monotonic()
    out, _ = job.communicate(timeout=30)
    assert time.monotonic() - start < 10 and job.returncode == 0, out
    assert "the time limit is near; requeueing job 4242 (restart 1)" in out
    assert (fake / "requeued").read_text().split() == ["4242"]


def test_a_damaged_failures_folder_is_one_line_and_a_documented_status(tmp_path):
    """Issue 68: missing or non-numeric fields gave a traceback (70, requeued), a FIFO hung,
    code 256 exited 0 and 300 exited 44, escapes and newlines reached the job log raw."""
    import json
    import os

    from click.testing import CliRunner

    from autocomp.cli import main

    run = tmp_path / "run"
    folder = run / ".failures"
    folder.mkdir(parents=True)

    def put(name, body):
        (folder / name).write_text(body if isinstance(body, str) else json.dumps(body))

    put("a.json", {"time": 1.0})  # no code
    put("b.json", {"code": "abc", "time": 1.0})
    put("c.json", {"code": 256, "time": 1.0})
    put("d.json", {"code": 300, "time": 1.0})
    put("e.json", {"code": 81, "time": "soon"})
    put("f.json", "not json")
    os.mkfifo(folder / "g.json")
    (folder / "h.json").mkdir()

    def status():
        got = CliRunner().invoke(main, ["status", str(run), "--failure"])
        return got.exit_code, got.output.strip().splitlines()

    code, lines = status()
    assert code == 1 and len(lines) == 1, lines
    assert lines[0].startswith("exit 1 (error): 8 damaged failure record(s) in .failures/ "
                               "(first: a.json: field 'code': None is no autocomp exit status)")
    put("z.json", {"code": 81, "time": 2.0, "rank": 3, "launch": None,
                   "message": "weights missing\x1b[2J\x1b[31m for m\nFAKE: exit 0\r"})
    code, lines = status()
    assert code == 81 and lines == ["exit 81 (weights missing) on rank 3: weights missing "
                                    "for m FAKE: exit 0"]


def test_a_single_process_run_records_its_failure_for_status(tmp_path, monkeypatch):
    """Issue 68: `status --failure` said "no failure recorded" after a single-process run
    failed with 81 (weights missing: only launched workers recorded theirs)."""
    from click.testing import CliRunner

    from autocomp.cli import main

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("AUTOCOMP_FAILURES", raising=False)
    config = tmp_path / "c.yaml"
    config.write_text("name: c\nconcepts:\n  - {task: shape_color, n: [1], count: 2}\n"
                      "captions:\n  writer: transformers\n"
                      f"  options: {{model: {tmp_path}/no-such-model}}\n")
    run = tmp_path / "run"
    got = CliRunner().invoke(main, ["run", str(config), "--output", str(run)])
    assert got.exit_code == 81, got.output
    status = CliRunner().invoke(main, ["status", str(run), "--failure"])
    assert status.exit_code == 81
    assert status.output.startswith(f"exit 81 (weights missing): {run}/config.yaml: 1 "
                                    "model(s) missing before the first stage: "), status.output

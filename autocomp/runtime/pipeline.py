"""The pipeline: concepts -> captions -> images -> validation -> build, in one process or
in K processes started by `accelerate launch` (one per GPU; several nodes too).

Every process runs the same stage code on the ids of its rank, writes its own part file,
waits for the others, and rank 0 merges. `autocomp run --processes K` starts the launch
for the user; on a cluster, start `python -m autocomp.runtime.worker RUN_DIR` under your
own `accelerate launch` instead.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

from autocomp.errors import AutocompError
from autocomp.runtime.run import Run
from autocomp.runtime.runner import merge, run_stage

STAGES = {
    "captions": "autocomp.captions.stage:CaptionStage",
    "images": "autocomp.synth.stage:ImageStage",
    "validation": "autocomp.validators.stage:ValidateStage",
}
PARALLEL = tuple(STAGES)  # the stages that run sharded (concepts and build are cheap)
ALL = ("concepts", *PARALLEL, "build")


def make_stage(name: str, run: Run, device: str = "cpu"):
    module, attr = STAGES[name].split(":")
    return getattr(importlib.import_module(module), attr)(run, device)


def launched() -> bool:
    """Whether this process was started by a distributed launcher."""
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def distributed():
    """(rank, world_size, barrier, device) of this process."""
    if not launched():
        return 0, 1, lambda: None, "auto"  # backends pick cuda when there is one
    import torch
    from accelerate import PartialState

    state = PartialState(cpu=not torch.cuda.is_available())
    return (state.process_index, state.num_processes, state.wait_for_everyone,
            str(state.device))


def run_parallel_stages(run_dir: Path, stages=PARALLEL, progress: bool = True) -> None:
    """Run `stages` in this process: alone, or as one rank of a launched group."""
    rank, world, barrier, device = distributed()
    run = Run.open(run_dir)
    for name in stages:
        stage = make_stage(name, run, device)
        run_stage(stage, rank, world, progress)
        barrier()
        if rank == 0:
            merge(stage)
        barrier()


def launch_command(run_dir: Path, processes: int, stages=PARALLEL) -> list[str]:
    return [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu",
            "--num_processes", str(processes), "--num_machines", "1",
            "--mixed_precision", "no", "--dynamo_backend", "no",
            "-m", "autocomp.runtime.worker", str(run_dir), "--stages", ",".join(stages)]


def run_pipeline(run: Run, processes: int = 1, stages=ALL, progress: bool = True,
                 store: str | None = None) -> None:
    """Run the named stages in order; the parallel ones in `processes` processes. `store`:
    how the build stores items (default: the config's build.store)."""
    from autocomp.bench.build import build
    from autocomp.concepts.stage import make_concepts

    _check_inputs(run, stages)
    clean_orphans(run.dir)
    if processes > 1 and any(s in PARALLEL for s in stages):
        _need_accelerate()
    if "concepts" in stages:
        make_concepts(run)
    parallel = [s for s in PARALLEL if s in stages]
    if parallel:
        if processes == 1:
            run_parallel_stages(run.dir, parallel, progress)
        else:
            _launch(run.dir, processes, parallel)
    if "build" in stages:
        build(run, store)


def _check_inputs(run: Run, stages) -> None:
    """A stage whose input stage has not run (and is not asked for) is refused in one line,
    not run on nothing with exit status 0."""
    for name in stages:
        i = ALL.index(name)
        before = ALL[i - 1] if i else None
        folder = run.dir / before if before else None
        if before and before not in stages and not (
                (folder / "merged.jsonl").exists() or any(folder.glob("part-*.jsonl"))):
            raise AutocompError(f"stage {name} needs the records of stage {before}, which has "
                                f"not run here: run it first (e.g. --stages {before},{name})",
                                file=run.dir)


ORPHAN_AGE = 3600  # seconds: a temp file this old belongs to no live writer


def clean_orphans(run_dir: Path, age: float = ORPHAN_AGE) -> int:
    """Remove the temp files of atomic writes that a killed process left behind (older than
    `age` seconds, so a live writer's file is never touched); returns how many."""
    import time

    now, removed = time.time(), 0
    for tmp in Path(run_dir).rglob(".*.tmp"):
        try:
            if tmp.is_file() and now - tmp.stat().st_mtime > age:
                tmp.unlink()
                removed += 1
        except OSError:
            continue
    return removed


def _need_accelerate() -> None:
    from importlib.util import find_spec

    if find_spec("accelerate") is None or find_spec("torch") is None:
        raise AutocompError("--processes > 1 needs accelerate and torch: pip install "
                            "'autocomp[multi]'")


def _launch(run_dir: Path, processes: int, stages) -> None:
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    proc = subprocess.run(launch_command(run_dir, processes, stages), env=env)
    if proc.returncode != 0:
        raise AutocompError(f"the {processes} launched processes failed (exit code "
                            f"{proc.returncode}); re-run the same command to resume",
                            file=run_dir)

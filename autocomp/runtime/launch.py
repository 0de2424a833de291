"""Processes: whether this one was launched as a rank of several, the launch itself
(`accelerate launch`, one process per GPU, several nodes too), and the temp files that a
killed process leaves behind. Nothing here knows what the processes do."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from autocomp.core.backend import install_hint
from autocomp.core.errors import AutocompError
from autocomp.core.records import TEMP_SUFFIX

ORPHAN_AGE = 3600  # seconds: a temp file this old belongs to no live writer


def launched() -> bool:
    """Whether this process was started by a distributed launcher."""
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def distributed(timeout: float | None = None):
    """(rank, world_size, share, device) of this process. `share(value)` is a collective:
    every rank gets rank 0's value. `timeout`: seconds a collective may wait (PyTorch's
    default is 10 minutes; the ranks of a long stage meet through files instead)."""
    if not launched():
        return 0, 1, lambda value: value, "auto"  # backends pick cuda when there is one
    from datetime import timedelta

    import torch
    from accelerate import PartialState
    from accelerate.utils import broadcast_object_list

    kwargs = {"timeout": timedelta(seconds=timeout)} if timeout else {}
    state = PartialState(cpu=not torch.cuda.is_available(), **kwargs)

    def share(value):
        box = [value]
        broadcast_object_list(box, from_process=0)
        return box[0]

    return state.process_index, state.num_processes, share, str(state.device)


def launch_command(module: str, args: list[str], processes: int) -> list[str]:
    """`accelerate launch` of `python -m module *args` in `processes` processes."""
    return [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu",
            "--num_processes", str(processes), "--num_machines", "1",
            "--mixed_precision", "no", "--dynamo_backend", "no", "-m", module, *args]


def need_accelerate() -> None:
    from importlib.util import find_spec

    if find_spec("accelerate") is None or find_spec("torch") is None:
        raise AutocompError(f"--processes > 1 needs accelerate and torch: {install_hint('multi')}")


def launch(module: str, args: list[str], processes: int, where: Path) -> None:
    """Run the launched group to its end; a failure is one line naming `where`."""
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    proc = subprocess.run(launch_command(module, args, processes), env=env)
    if proc.returncode != 0:
        raise AutocompError(f"the {processes} launched processes failed (exit code "
                            f"{proc.returncode}); re-run the same command to resume",
                            file=where)


def clean_orphans(run_dir: Path, age: float = ORPHAN_AGE) -> int:
    """Remove the temp files of atomic writes that a killed autocomp process left behind
    (its own suffix only, older than `age` seconds, so a live writer's file and other
    programs' files are never touched); returns how many."""
    now, removed = time.time(), 0
    for tmp in Path(run_dir).rglob(f".*{TEMP_SUFFIX}"):
        try:
            if tmp.is_file() and now - tmp.stat().st_mtime > age:
                tmp.unlink()
                removed += 1
        except OSError:
            continue
    return removed

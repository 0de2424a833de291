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
from autocomp.core.records import TEMP_SUFFIX, temp_writer_gone

ORPHAN_AGE = 3600  # seconds: a temp file this old belongs to no live writer


def launched() -> bool:
    """Whether this process was started by a distributed launcher."""
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


RENDEZVOUS_TIMEOUT = 600  # seconds every rank has to join (launch.rendezvous_timeout)


def distributed(timeout: float | None = None, rendezvous: float | None = None,
                run_dir: Path | None = None):
    """(rank, world_size, share, device) of this process. `share(value)` is a collective:
    every rank gets rank 0's value. `timeout`: seconds a collective may wait (PyTorch's
    default is 10 minutes; the ranks of a long stage meet through files instead).
    `rendezvous`: seconds for every rank to join (process group made and one barrier
    passed); past it this process stops with one line naming the address and port, exit
    75 (retry later), recorded under `run_dir` (runtime/failures.py), instead of waiting
    out `timeout` (a day) on a wrong interface or a port taken meanwhile."""
    if not launched():
        return 0, 1, lambda value: value, "auto"  # backends pick cuda when there is one
    import threading
    from datetime import timedelta

    import torch
    from accelerate import PartialState
    from accelerate.utils import broadcast_object_list

    joined = threading.Event()
    limit = float(rendezvous or RENDEZVOUS_TIMEOUT)
    threading.Thread(target=_watch_rendezvous, args=(joined, limit, run_dir),
                     name="autocomp-rendezvous", daemon=True).start()
    kwargs = {"timeout": timedelta(seconds=timeout)} if timeout else {}
    # the ranks only meet to share a few small objects (a barrier, the launch's token):
    # gloo over TCP, on every node, where NCCL would set up GPU communicators and a
    # watchdog that ends a rank whose peer is slow; the device is still this rank's GPU
    state = PartialState(cpu=not torch.cuda.is_available(), backend="gloo", **kwargs)
    state.wait_for_everyone()
    joined.set()

    def share(value):
        box = [value]
        broadcast_object_list(box, from_process=0)
        return box[0]

    return state.process_index, state.num_processes, share, str(state.device)


def _watch_rendezvous(joined, limit: float, run_dir: Path | None) -> None:
    if joined.wait(limit):
        return
    from autocomp.core.errors import RETRY_LATER, RetryLater

    where = (f"{os.environ.get('MASTER_ADDR', '?')}:{os.environ.get('MASTER_PORT', '?')}")
    line = (f"rank {os.environ.get('RANK', '?')} of {os.environ.get('WORLD_SIZE', '?')}: the "
            f"rendezvous at {where} did not complete within {limit:g} s (a peer that never "
            "started, a wrong interface or address, or a port taken meanwhile): retry later")
    if run_dir is not None:
        from autocomp.runtime.failures import record

        record(run_dir, RetryLater(line), int(os.environ.get("RANK", "0") or 0))
    try:
        sys.stderr.write(f"autocomp: {line}\n")
        sys.stderr.flush()
    finally:
        os._exit(RETRY_LATER)


def launch_command(module: str, args: list[str], processes: int) -> list[str]:
    """`accelerate launch` of `python -m module *args` in `processes` processes, meeting on
    a free port (two runs on one node must not both take accelerate's default 29500)."""
    return [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu",
            "--num_processes", str(processes), "--num_machines", "1",
            "--main_process_port", str(free_port()),
            "--mixed_precision", "no", "--dynamo_backend", "no", "-m", module, *args]


def free_port() -> int:
    """A TCP port no process listens on now (the kernel's pick)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def need_accelerate() -> None:
    from importlib.util import find_spec

    if find_spec("accelerate") is None or find_spec("torch") is None:
        raise AutocompError(f"--processes > 1 needs accelerate and torch: {install_hint('multi')}")


def launch(module: str, args: list[str], processes: int, where: Path) -> None:
    """Run the launched group to its end; a failure is one line naming `where`."""
    import uuid

    from autocomp.core.errors import CRASHED, RETRYABLE, error_for
    from autocomp.runtime.failures import LAUNCH, worst

    ident = uuid.uuid4().hex  # this launch's failures, whatever the clocks say
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
           LAUNCH: ident}
    proc = subprocess.run(launch_command(module, args, processes), env=env)
    if proc.returncode != 0:  # the launcher's status hides the workers': read their record
        got = worst(where, launch=ident)
        code = int(got["code"]) if got else CRASHED
        why = f": {got['message']}" if got else ""
        then = ("re-run the same command to resume" if code in RETRYABLE else
                "the same command fails alike until that is changed; then it resumes")
        raise error_for(code, f"the {processes} launched processes failed (exit code "
                              f"{proc.returncode}{why}); {then}", file=where)


def clean_orphans(folder: Path, age: float = ORPHAN_AGE, pattern: str | None = None) -> int:
    """Remove the temp files and folders of atomic writes that a killed autocomp process
    left under `folder` (its own suffix only; written by a process of this host that is
    gone, or older than `age` seconds: a live writer's and other programs' files are never
    touched); `pattern`: only these names directly in
    `folder` (a glob), not the whole tree. Returns how many."""
    import shutil

    now, removed = time.time(), 0
    found = (Path(folder).glob(pattern) if pattern
             else Path(folder).rglob(f".*{TEMP_SUFFIX}"))
    for tmp in found:
        if not tmp.name.endswith(TEMP_SUFFIX):
            continue
        try:
            if tmp.is_symlink() or (now - _newest(tmp) <= age
                                    and not temp_writer_gone(tmp.name)):
                continue
            if tmp.is_dir():
                shutil.rmtree(tmp)
            elif tmp.is_file():
                tmp.unlink()
            else:
                continue
            removed += 1
        except OSError:
            continue
    return removed


def _newest(path: Path) -> float:
    """The last change to a file, or to a folder or any file directly in it."""
    times = [path.lstat().st_mtime]
    if path.is_dir():
        times += [p.lstat().st_mtime for p in path.iterdir()]
    return max(times)

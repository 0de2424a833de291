"""File locks (flock): released by the kernel when their process ends, however it ends,
so a killed run never leaves a stale lock behind."""

from __future__ import annotations

import errno
import fcntl
import os
from contextlib import ExitStack, contextmanager
from pathlib import Path

from autocomp.core.errors import AutocompError


@contextmanager
def locked(path: Path):
    """Wait for an exclusive lock on `path` and hold it for the block."""
    with open(path, "a+") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


@contextmanager
def holding(paths: dict, what: str, of: str = "of this run"):
    """Hold an exclusive lock on each of `paths` (name -> lock file) for the block, or
    refuse at once, naming the first that another process holds and its pid. A folder
    that cannot be written to is not locked: nothing can be written twice there."""
    with ExitStack() as stack:
        for name, path in paths.items():
            fh = _open_lock(Path(path))
            if fh is None:
                continue
            stack.enter_context(fh)
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                fh.seek(0)
                pid = fh.read().strip() or "?"
                raise AutocompError(
                    f"another autocomp process (pid {pid}) is running {what} '{name}' {of}; "
                    "wait for it to finish (running both would do the same work twice)",
                    file=Path(path).parent) from None
            fh.seek(0)
            fh.truncate()
            fh.write(str(os.getpid()))
            fh.flush()
            stack.callback(fh.truncate, 0)  # released: empty again (same run, same bytes)
        yield


def held_by(path: Path) -> str | None:
    """The pid written in the lock file `path` while another process holds it (flock, so
    also across the nodes of an NFS or Lustre mount that honours flock); None when free."""
    path = Path(path)
    if not path.exists():
        return None
    try:
        fh = open(path, "a+")  # noqa: SIM115 (NFS emulates flock with write locks)
    except OSError:  # missing, or a read-only folder: no process runs a stage here
        return None
    with fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            return fh.read().strip() or "?"
        fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
        return None


def _open_lock(path: Path):
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return open(path, "a+")
    except OSError as exc:
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            return None
        raise

"""Locks on a run's stages, held by one process at a time across the nodes of a shared
filesystem, naming their holder (host, pid and SLURM job).

Two kinds, chosen by $AUTOCOMP_LOCKS (auto, the default; flock; files):
  flock   the kernel's flock: released when the holder ends, however it ends (on NFS a
          dead node's lease lapses after ~90 s). `auto` uses it unless the filesystem
          refuses it (ENOSYS, EOPNOTSUPP, ENOLCK: Lustre without flock), then falls back.
  files   an exclusive-create file `<lock>.held` naming the holder, whose counter a thread
          of the holder rewrites every BEAT seconds: a waiter takes the lock over once the
          counter stood still for STALE seconds on its own clock (no trust in other hosts'
          clocks or file times), or at once when the holder was a process of this host
          that is gone. Set AUTOCOMP_LOCKS=files where flock works per node only (Lustre
          mounted with localflock), so that jobs on other nodes see the lock.
A fallback to lock files, or lock files asked for, is said once per process (logged);
held_by() names the holder.

Fencing: each take draws a token, written with the holder into the lock (the flock file's
content, or `<lock>.held`). fence() checks, before every merge and every batch recorded,
that each lock this process holds, or watches for its launch's holder (watch(): the ranks of
a launch whose rank 0 holds the locks), still names its token, and stops the process with
exit status 4 (LockLost) when another holder took it over: a holder paused past the stale
time never writes beside its successor.
"""

from __future__ import annotations

import errno
import fcntl
import json
import logging
import os
import socket
import time
import uuid
from contextlib import ExitStack, contextmanager
from pathlib import Path

from autocomp.core.errors import AutocompError, Held
from autocomp.core.lockfiles import (
    FileLock,
    dead_here,
    describe,
    open_entry,
    owner,
    parse,
    read_entry,
    seconds_env,
)


def lock_wait() -> float:
    """Seconds a command waits for a held lock before it refuses ($AUTOCOMP_LOCK_WAIT; 0:
    refuse at once; the SLURM script waits, for a requeued job's earlier attempt)."""
    return seconds_env("AUTOCOMP_LOCK_WAIT", 0.0)


UNSUPPORTED = (errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOLCK)
log = logging.getLogger("autocomp")
_said: set[str] = set()
_fences: dict[str, str] = {}  # lock file -> the token this process holds it (or watches) by


class LockLost(Held):
    """A lock this process held was taken over (it was paused past the stale time)."""


def tokens() -> dict[str, str]:
    """The locks this process holds or watches: lock file -> token (for watch() in the
    other ranks of a launch)."""
    return dict(_fences)


def watch(fences: dict[str, str]) -> None:
    """Fence this process's writes on locks another process of its launch holds."""
    _fences.update(fences or {})


def unwatch(fences: dict[str, str]) -> None:
    for path in fences or {}:
        _fences.pop(path, None)


def fence() -> None:
    """Stop (LockLost, exit 4) when a lock this process writes under now names another
    holder's token; each check reads the lock afresh (close-to-open on NFS)."""
    for path, token in list(_fences.items()):
        holder = _token_holder(Path(path))
        if not (isinstance(holder, dict) and holder.get("token") == token):
            raise LockLost(f"lost the lock {Path(path).name}: it now names "
                           f"{describe(holder) if holder else 'no holder'}, generation "
                           f"{holder.get('gen', '?') if isinstance(holder, dict) else '?'}"
                           " (this process was paused or cut off past the stale time); "
                           "stopping so that only the new holder writes; what was recorded "
                           "before is kept", file=Path(path).parent)


def _token_holder(path: Path):
    """The holder a lock names now: `<lock>.held` where lock files are used, else the flock
    file's content."""
    for candidate in (Path(f"{path}.held"), path):
        try:
            text = read_entry(candidate)
        except OSError:
            continue
        holder = parse(text)
        if holder is not None or candidate == path:
            return holder
    return None


def mechanism() -> str:
    value = os.environ.get("AUTOCOMP_LOCKS", "auto").strip().lower() or "auto"
    if value not in ("auto", "flock", "files"):
        raise AutocompError(f"AUTOCOMP_LOCKS must be auto, flock or files, got {value!r}")
    return value


def _say(key: str, line: str) -> None:
    if key not in _said:
        _said.add(key)
        log.info(line)


@contextmanager
def locked(path: Path):
    """Wait for an exclusive lock on `path` and hold it for the block (a short critical
    section of this host: flock)."""
    with open_entry(path) as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


@contextmanager
def holding(paths: dict, what: str, of: str = "of this run", wait: float | None = None):
    """Hold an exclusive lock on each of `paths` (name -> lock file) for the block; one
    that another process holds is waited for up to `wait` seconds (default lock_wait()),
    then refused (Held, exit status 4) naming the holder. A folder that cannot be written
    to is not locked: nothing can be written twice there."""
    with ExitStack() as stack:
        for name, path in paths.items():
            release = _take(Path(path), lock_wait() if wait is None else wait)
            if release is False:
                continue  # read-only: nothing to guard
            if isinstance(release, dict | str) or release is None:
                raise Held(f"another autocomp process ({describe(release)}) is running "
                           f"{what} '{name}' {of}; wait for it to finish (running both would "
                           "do the same work twice)", file=Path(path).parent)
            stack.callback(release)
            token = getattr(release, "token", None)
            if token:
                _fences[str(path)] = token
                stack.callback(_fences.pop, str(path), None)
        yield


def _take(path: Path, wait: float):
    """A release function once `path` is ours; False where it cannot be written; else the
    holder (dict, str or None) after waiting `wait` seconds."""
    deadline = time.monotonic() + wait
    while True:
        got = _try(path)
        if callable(got) or got is False:
            return got
        if time.monotonic() >= deadline:
            return got
        time.sleep(min(1.0, max(deadline - time.monotonic(), 0.0)))


def _try(path: Path):
    """One attempt: a release function, False (read-only), or the holder."""
    mode = mechanism()
    if mode != "files":
        fh = _open_lock(path)
        if fh is None:
            return False
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = parse(fh.read())
            fh.close()
            return holder or "?"
        except OSError as exc:
            fh.close()
            if mode == "flock" or exc.errno not in UNSUPPORTED:
                raise
            _say(f"fallback:{path.parent}", f"locks: flock is not supported under "
                 f"{path.parent} ({errno.errorcode.get(exc.errno, exc.errno)}): lock files "
                 "with a heartbeat instead (AUTOCOMP_LOCKS=files)")
            return FileLock(path).try_take()
        token = uuid.uuid4().hex
        fh.seek(0)
        fh.truncate()
        fh.write(json.dumps({**owner(), "token": token}))
        fh.flush()

        def release(fh=fh):
            fh.truncate(0)  # released: empty again (same run, same bytes)
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
            fh.close()
        release.token = token
        return release
    fh = _open_lock(path)  # the lock file itself stays, as under flock
    if fh is None:
        return False
    fh.close()
    _say("files", "locks: lock files with a heartbeat (AUTOCOMP_LOCKS=files)")
    return FileLock(path).try_take()


def held_by(path: Path, watch: bool = False) -> str | None:
    """Who holds the lock `path` ('pid 123 on host node7 (job 4242)'), or None when it is
    free: through flock (also across the nodes of an NFS or Lustre mount that honours it),
    or the file lock beside it (`watch`: see holder_of)."""
    holder = holder_of(path, watch)
    return None if holder is None else describe(holder)


def holder_of(path: Path, watch: bool = False) -> dict | str | None:
    """The content of the lock `path` while another process holds it ({host, pid, job}, or
    a bare pid of an older lock), None when it is free. `watch`: a file lock whose counter
    this process has seen stand still for stale_after() seconds counts as free (a caller
    polling for a while)."""
    path = Path(path)
    if os.path.lexists(f"{path}.held"):
        lock = FileLock(path)
        holder, text = lock._read()
        gone = isinstance(holder, dict) and dead_here(holder)
        if holder is not None and not gone and not (watch and lock._stale(holder, text)):
            return holder
    if not os.path.lexists(path):
        return None
    try:
        fh = open_entry(path)  # NFS emulates flock with write locks: opened for writing
    except OSError:  # missing, or a read-only folder: no process runs a stage here
        return None
    with fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            return parse(fh.read()) or "?"
        except OSError as exc:
            if exc.errno in UNSUPPORTED:
                return None  # only file locks can be held here: none is
            raise
        fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
        return None


def mine(holder, pid: str | int | None) -> bool:
    """Whether `holder` (holder_of) is process `pid` of this host."""
    return isinstance(holder, dict) and str(holder.get("pid")) == str(pid) \
        and holder.get("host") == socket.gethostname()


def _open_lock(path: Path):
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return open_entry(path)  # held open for the lock's life
    except OSError as exc:
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            return None
        raise

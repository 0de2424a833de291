"""Lock files with a heartbeat and fencing (core/locks.py's `files` kind).

`<lock>.held` is created exclusively and never rewritten while held: it names its holder
({host, pid, job, gen, token}); `token` is drawn afresh by each take and `gen` counts the
takes of this lock (one more than the holder it replaced, or than the last recorded in
`<lock>.gen`). The holder's thread rewrites a counter in its own file `<lock>.held.beat-<token>`
every beat_every() seconds. A waiter takes the lock over once the holder's file and counter
stood still for stale_after() seconds on the waiter's own monotonic clock (no trust in
other hosts' clocks or in file times an NFS attribute cache may serve stale), or at once
when the holder was a process of this host that is gone.

Fencing: a holder paused past the stale time (SIGSTOP, a hung NFS call) finds on waking
that `<lock>.held` names another token. core/locks.fence() reads it before every merge and
every batch recorded, and stops the process (exit 4) when its token is gone; release
removes `<lock>.held` only while it holds the process's own token, and a heartbeat never
writes over another holder's file. The read-then-act windows left (microseconds between a
check and the write it guards) are what a filesystem without compare-and-swap allows."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import threading
import time
import uuid
from pathlib import Path

from autocomp.core.errors import plain
from autocomp.core.own_files import open_own
from autocomp.core.records import write_text

log = logging.getLogger("autocomp")

BEAT = 5.0  # seconds between a file lock's heartbeats (at most a quarter of the stale time)
STALE = 60.0  # seconds a file lock's counter may stand still before it is taken over


def seconds_env(name: str, default: float, env=None) -> float:
    """$name as seconds (tests and job scripts set them), else `default`; `env`: where to
    read it (default os.environ)."""
    try:
        return max(float((os.environ if env is None else env).get(name, "")), 0.0)
    except ValueError:
        return default


def stale_after() -> float:
    return seconds_env("AUTOCOMP_LOCK_STALE", STALE)


def beat_every() -> float:
    return max(min(BEAT, stale_after() / 4), 0.01)


def owner() -> dict:
    """Who holds a lock this process takes: written into the lock file."""
    return {"host": socket.gethostname(), "pid": os.getpid(),
            "job": os.environ.get("SLURM_JOB_ID") or None}


def describe(holder: dict | str | None) -> str:
    """'pid 123 on host node7 (job 4242)' from a lock file's content (each value plain and
    short: a lock entry is data, never printed as it is)."""
    def show(value) -> str:
        return plain(value)[:40] or "?"

    if not isinstance(holder, dict):
        return f"pid {show(holder or '?')}"
    job = f" (job {show(holder['job'])})" if holder.get("job") else ""
    return f"pid {show(holder.get('pid', '?'))} on host {show(holder.get('host', '?'))}{job}"


def parse(text: str) -> dict | str | None:
    text = text.strip()
    if not text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, dict):
        return value
    # an older lock file: a bare pid; anything else is no holder we can name
    return text if text.isdigit() and len(text) <= 20 else "?"


LOCK_TEXT = 4096  # bytes: a lock entry holds one small JSON object


LOCK_ADVICE = "autocomp neither follows nor replaces it; remove it (and ask who made it)"


def read_entry(path: Path) -> str:
    """The text of a lock entry (at most LOCK_TEXT bytes): a regular file, no link followed
    (FileNotFoundError where there is none; one line where a link, a directory or a FIFO
    stands there: a FIFO hung the reader, a link to a text file printed it whole)."""
    with open_own(path, "rb", "a lock entry", LOCK_ADVICE) as fh:
        return fh.read(LOCK_TEXT).decode("utf-8", "replace")


def open_entry(path: Path):
    """A lock file opened for reading and appending (created if missing): a regular file,
    no link followed (a link made autocomp truncate the file it pointed to, and a dangling
    one created its target)."""
    return open_own(path, "a+", "a lock entry", LOCK_ADVICE)


def dead_here(holder: dict) -> bool:
    if holder.get("host") != socket.gethostname():
        return False
    try:
        os.kill(int(holder.get("pid", 0)), 0)
    except ProcessLookupError:
        return True
    except (PermissionError, ValueError, OverflowError):
        return False
    return False


class FileLock:
    """`<lock>.held`, created exclusively, its holder's heartbeat in a file of its own."""

    watched: dict[str, tuple[str, float]] = {}  # file -> (content seen, since when)

    def __init__(self, path: Path):
        self.path = Path(f"{path}.held")
        self.gen_file = Path(f"{path}.gen")  # the last generation taken

    def beat_file(self, token: str) -> Path:
        return self.path.with_name(f"{self.path.name}.beat-{token}")

    def try_take(self):
        """A release function (with .token and .gen) once the lock is ours, else the
        holder."""
        for _ in range(2):  # once more after taking a stale lock over
            before, text = self._read()
            gen = max(_gen(before), self._last_gen()) + 1
            me = {**owner(), "gen": gen, "token": uuid.uuid4().hex}
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                holder, text = self._read()
                if not self._stale(holder, text):
                    return holder or "?"
                self._remove_if(text)
                continue
            with os.fdopen(fd, "w") as fh:
                fh.write(json.dumps(me))
            self._record_gen(gen)
            return self._hold(me)
        holder, _ = self._read()
        return holder or "?"

    def _read(self) -> tuple[dict | str | None, str]:
        try:
            text = read_entry(self.path)
        except FileNotFoundError:
            return None, ""
        return parse(text), text

    def _last_gen(self) -> int:
        """The generation the last holder recorded in `<lock>.gen` (0: none)."""
        try:
            return _gen(parse(read_entry(self.gen_file)))
        except OSError:
            return 0

    def _record_gen(self, gen: int) -> None:
        with contextlib.suppress(OSError):  # the count only: the token is what fences
            write_text(self.gen_file, json.dumps({"gen": gen}), sync=False)

    def _stale(self, holder, text: str) -> bool:
        """Gone: a process of this host that no longer runs, or a holder whose file and
        counter stood still for stale_after() seconds on this process's clock."""
        if isinstance(holder, dict) and dead_here(holder):
            return True
        if isinstance(holder, dict) and holder.get("token"):
            with contextlib.suppress(OSError):
                text += "|" + read_entry(self.beat_file(str(holder["token"])))
        now = time.monotonic()
        seen, since = self.watched.get(str(self.path), (None, now))
        if seen != text:
            self.watched[str(self.path)] = (text, now)
            return False
        return now - since >= stale_after()

    def _remove_if(self, text: str) -> None:
        """Remove the stale file, unless another holder replaced it meanwhile."""
        holder, now = self._read()
        if now == text:
            self.path.unlink(missing_ok=True)
            if isinstance(holder, dict) and holder.get("token"):
                self.beat_file(str(holder["token"])).unlink(missing_ok=True)
            log.info(f"locks: took over {self.path.name}, whose holder stopped "
                     f"({describe(parse(text))})")

    def holds(self, token: str) -> tuple[bool, dict | str | None]:
        """(whether `<lock>.held` still names `token`, who it names)."""
        holder, _ = self._read()
        return isinstance(holder, dict) and holder.get("token") == token, holder

    def _hold(self, me: dict):
        stop = threading.Event()
        beat_file = self.beat_file(me["token"])

        def beat(n: int = 0):
            while True:
                ours, now = self.holds(me["token"])
                if not ours:
                    log.warning(f"locks: {self.path.name} was taken over by {describe(now)} "
                                f"while this process held it (it stood still "
                                f"{stale_after():g} s: paused?)")
                    return  # never write over another holder's lock
                try:  # this holder's own file: nothing another holder reads as theirs
                    write_text(beat_file, str(n), sync=False)
                except OSError:
                    return
                n += 1
                if stop.wait(beat_every()):
                    return

        thread = threading.Thread(target=beat, name="autocomp-lock", daemon=True)
        thread.start()

        def release():
            stop.set()
            thread.join(timeout=beat_every() + 1)
            if self.holds(me["token"])[0]:  # only this holder's generation
                self.path.unlink(missing_ok=True)
            beat_file.unlink(missing_ok=True)
        release.token, release.gen, release.path = me["token"], me["gen"], self.path
        return release


def _gen(holder) -> int:
    try:
        return int(holder.get("gen", 0)) if isinstance(holder, dict) else 0
    except (TypeError, ValueError):
        return 0

"""Lock files with a heartbeat (core/locks.py's `files` kind): `<lock>.held`, created
exclusively, naming its holder ({host, pid, job, beat}); the holder's thread rewrites the
counter every BEAT seconds. A waiter takes it over once the counter stood still for
stale_after() seconds on the waiter's own monotonic clock (no trust in other hosts' clocks
or in file times an NFS attribute cache may serve stale), or at once when the holder was a
process of this host that is gone."""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from pathlib import Path

log = logging.getLogger("autocomp")

BEAT = 5.0  # seconds between a file lock's heartbeats
STALE = 60.0  # seconds a file lock's counter may stand still before it is taken over


def seconds_env(name: str, default: float) -> float:
    """$name as seconds (tests and job scripts set them), else `default`."""
    try:
        return max(float(os.environ.get(name, "")), 0.0)
    except ValueError:
        return default


def stale_after() -> float:
    return seconds_env("AUTOCOMP_LOCK_STALE", STALE)


def owner() -> dict:
    """Who holds a lock this process takes: written into the lock file."""
    return {"host": socket.gethostname(), "pid": os.getpid(),
            "job": os.environ.get("SLURM_JOB_ID") or None}


def describe(holder: dict | str | None) -> str:
    """'pid 123 on host node7 (job 4242)' from a lock file's content."""
    if not isinstance(holder, dict):
        return f"pid {holder or '?'}"
    job = f" (job {holder['job']})" if holder.get("job") else ""
    return f"pid {holder.get('pid', '?')} on host {holder.get('host', '?')}{job}"


def parse(text: str) -> dict | str | None:
    text = text.strip()
    if not text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return text  # an older lock file: a bare pid
    return value if isinstance(value, dict) else text


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
    """`<lock>.held`, created exclusively, rewritten by its holder's heartbeat."""

    watched: dict[str, tuple[str, float]] = {}  # file -> (content seen, since when)

    def __init__(self, path: Path):
        self.path = Path(f"{path}.held")

    def try_take(self):
        me = {**owner(), "beat": 0}
        for _ in range(2):  # once more after taking a stale lock over
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
            return self._hold(me)
        holder, _ = self._read()
        return holder or "?"

    def _read(self) -> tuple[dict | str | None, str]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None, ""
        return parse(text), text

    def _stale(self, holder, text: str) -> bool:
        """Gone: a process of this host that no longer runs, or a counter that stood
        still for STALE seconds on this process's clock."""
        if isinstance(holder, dict) and dead_here(holder):
            return True
        now = time.monotonic()
        seen, since = self.watched.get(str(self.path), (None, now))
        if seen != text:
            self.watched[str(self.path)] = (text, now)
            return False
        return now - since >= stale_after()

    def _remove_if(self, text: str) -> None:
        """Remove the stale file, unless its holder rewrote it meanwhile."""
        _, now = self._read()
        if now == text:
            self.path.unlink(missing_ok=True)
            log.info(f"locks: took over {self.path.name}, whose holder stopped "
                     f"({describe(parse(text))})")

    def _hold(self, me: dict):
        stop = threading.Event()

        def beat():
            while not stop.wait(BEAT):
                now, _ = self._read()
                if not (isinstance(now, dict) and now.get("pid") == me["pid"]
                        and now.get("host") == me["host"]):
                    log.warning(f"locks: {self.path.name} was taken over by "
                                f"{describe(now)} while this process held it (it stood "
                                f"still {stale_after():g} s: paused?)")
                    return  # never write over another holder's lock
                me["beat"] += 1
                tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
                try:
                    tmp.write_text(json.dumps(me), encoding="utf-8")
                    os.replace(tmp, self.path)
                except OSError:
                    return

        thread = threading.Thread(target=beat, name="autocomp-lock", daemon=True)
        thread.start()

        def release():
            stop.set()
            thread.join(timeout=BEAT + 1)
            self.path.unlink(missing_ok=True)
        return release

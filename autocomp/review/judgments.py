"""RUN/review/judgments.jsonl: one line per judgment, appended under a lock and flushed to
disk before the page is answered, never rewritten. A later judgment of the same unit by
the same annotator replaces the earlier one in the report; a damaged line is skipped with
a warning naming it.

An acknowledged judgment is on disk whole: a write that fails (disk full) is cut off again
before the error goes to the page, and a torn tail left by a killed writer is repaired
before the next line is appended (dropped; kept, with its newline, where it is a whole
record), so no later judgment is glued onto it."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import threading
import time
import warnings
from pathlib import Path

from autocomp.core.errors import AutocompError
from autocomp.core.own_files import open_own, own_fd

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 _.-]{0,39}$")


def check_name(name) -> str:
    if not isinstance(name, str) or not NAME.match(name.strip()):
        raise AutocompError(f"annotator name {name!r}: use 1-40 letters, digits, spaces, "
                            "'.', '_' or '-'")
    return name.strip()


class Judgments:
    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = threading.Lock()

    def append(self, record: dict) -> None:
        data = (json.dumps({**record, "time": round(time.time(), 3)}, sort_keys=True)
                + "\n").encode()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock:
            fd = own_fd(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, "the judgments file")
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)  # two pages on one run append whole lines
                start = _repair_tail(fd)
                try:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(fd, view):]
                    os.fsync(fd)
                except OSError:
                    with contextlib.suppress(OSError):
                        os.ftruncate(fd, start)  # nothing of the failed judgment stays
                    raise
            finally:
                os.close(fd)  # and with it the lock

    def read(self) -> list[dict]:
        if not os.path.lexists(self.path):
            return []
        with open_own(self.path, "rb", "the judgments file") as fh:
            text = fh.read().decode("utf-8", errors="replace")
        out, bad = [], []
        for i, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                if not isinstance(rec, dict) or not {"unit", "annotator", "answer"} <= set(rec):
                    raise ValueError
            except ValueError:
                bad.append(i)
                continue
            out.append(rec)
        if bad:
            warnings.warn(f"{self.path}:{bad[0]}: {len(bad)} damaged line(s) skipped; those "
                          "units are shown again", stacklevel=2)
        return out

    def latest(self, mode: str, sample_id: str) -> dict[tuple[str, str], dict]:
        """(annotator, unit key) -> the last judgment made on this sample."""
        return {(r["annotator"], r["unit"]): r for r in self.read()
                if r.get("mode") == mode and r.get("sample") == sample_id}


def _repair_tail(fd: int) -> int:
    """The end of the file's whole lines, after repairing a torn tail: a last line without
    its newline is dropped, or ended where it is a whole record."""
    end = os.lseek(fd, 0, os.SEEK_END)
    if end == 0 or os.pread(fd, 1, end - 1) == b"\n":
        return end
    pos = end
    while pos > 0:
        step = min(4096, pos)
        found = os.pread(fd, step, pos - step).rfind(b"\n")
        if found >= 0:
            pos = pos - step + found + 1
            break
        pos -= step
    tail = os.pread(fd, end - pos, pos)
    try:
        whole = isinstance(json.loads(tail), dict)
    except (ValueError, RecursionError):
        whole = False
    if whole:
        os.write(fd, b"\n")
        return end + 1
    os.ftruncate(fd, pos)
    return pos

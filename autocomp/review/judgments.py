"""RUN/review/judgments.jsonl: one line per judgment, appended under a lock and flushed to
disk before the page is answered, never rewritten. A later judgment of the same unit by
the same annotator replaces the earlier one in the report; a damaged line (a killed
write) is skipped with a warning naming it."""

from __future__ import annotations

import fcntl
import json
import os
import re
import threading
import time
import warnings
from pathlib import Path

from autocomp.core.errors import AutocompError

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
        line = json.dumps({**record, "time": round(time.time(), 3)}, sort_keys=True) + "\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock, open(self.path, "a", encoding="utf-8") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)  # two pages on one run append whole lines
            try:
                fh.write(line)
                fh.flush()
                os.fsync(fh.fileno())
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def read(self) -> list[dict]:
        if not self.path.is_file():
            return []
        out, bad = [], []
        for i, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), 1):
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

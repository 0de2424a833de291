"""Part files of one stage: `<stage>/part-<rank>.jsonl`, append-only, one batch per write.

A batch is written with one `write` call, flushed and fsynced before the next batch
starts, so a killed process loses at most the batch in flight. A torn last line (the
process died inside a write) is cut off when the rank opens its part file again, and every
reader ignores a last line without its newline, so a half-written record is never read as
whole. `merged.jsonl` (all ranks, in the stage's input order) and the stats are written
with a temp name and a rename.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path

from autocomp.core.bulk_gc import paused
from autocomp.core.own_files import open_own
from autocomp.core.records import dumps, loads
from autocomp.core.run_paths import PART_GLOB, part_name


def part_path(stage_dir: Path, rank: int) -> Path:
    return Path(stage_dir) / part_name(rank)


def part_files(stage_dir: Path) -> list[Path]:
    return sorted(Path(stage_dir).glob(PART_GLOB))


def read_part(path: Path) -> Iterator[dict]:
    """The complete records of a part file, read line by line (never the whole file at
    once); a torn last line is skipped. A damaged line inside the file (not a JSON record
    with an id) is skipped with a warning naming file:line: its item counts as not done, so
    the stage does it again."""
    bad = []
    with open_own(path, "rb", "a part file") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.endswith(b"\n"):
                break  # a torn last line: its batch was in flight
            record = _record(line)
            if record is False:
                continue
            if record is None:
                bad.append(number)
                continue
            yield record
    if bad:
        warnings.warn(f"{path}:{bad[0]}: {len(bad)} damaged line(s) skipped (lines "
                      f"{', '.join(map(str, bad[:10]))}{' ...' if len(bad) > 10 else ''}); "
                      "their items are done again", stacklevel=2)


def _record(line: bytes):
    """A line's record; None when damaged, False when blank."""
    if not line.strip():
        return False
    try:
        record = loads(line)
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) and "id" in record else None


def done_ids(stage_dir: Path) -> set[str]:
    """The ids of every complete record of every rank's part file, the records themselves
    dropped as they are read (what a launch needs to share out the work: each rank reading
    809,400 whole validation records held ~4 GiB of them)."""
    out: set[str] = set()
    with paused():
        for path in part_files(stage_dir):
            out.update(str(r["id"]) for r in read_part(path))
    return out


def repair(path: Path, what: str = "a part file") -> int:
    """Cut a torn last line off `path` (`what` it is, for a refusal); returns the number
    of bytes removed."""
    if not os.path.lexists(path):
        return 0
    with open_own(path, "rb+", what) as fh:
        data = fh.read()
        size = len(data)
        keep = data.rfind(b"\n") + 1
        if keep < size:
            fh.truncate(keep)
            fh.flush()
            os.fsync(fh.fileno())
    return size - keep


def done_records(stage_dir: Path) -> dict[str, dict]:
    """Every complete record of every rank's part file, by id (first one wins)."""
    out: dict[str, dict] = {}
    with paused():
        for path in part_files(stage_dir):
            for record in read_part(path):
                out.setdefault(record["id"], record)
    return out


class PartWriter:
    """Appends batches of records to one rank's part file."""

    def __init__(self, stage_dir: Path, rank: int):
        self.path = part_path(stage_dir, rank)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        repair(self.path)
        self._fh = open_own(self.path, "a", "a part file")  # closed in close()

    def append(self, records: Iterable[dict]) -> int:
        lines = [dumps(r) + "\n" for r in records]
        if lines:
            self._fh.write("".join(lines))
            self._fh.flush()
            os.fsync(self._fh.fileno())
        return len(lines)

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> PartWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

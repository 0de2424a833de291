"""JSON-lines records, written atomically (temp name, then rename)."""

from __future__ import annotations

import json
import os
import re
import socket
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

import orjson

from autocomp.core.bulk_gc import paused
from autocomp.core.errors import AutocompError

TRACKS = ("minimal", "contextual")  # every concept gets an image on each track
RECORD_LIMIT = 64 * 2 ** 20  # bytes: a line of any JSON-lines file autocomp reads


def dumps(record: dict) -> str:
    return json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _umask() -> int:
    """The process's umask: from /proc on Linux (reading it changes nothing), elsewhere by
    setting it and putting it back."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


TEMP_SUFFIX = ".autocomp.tmp"  # autocomp's own temp files: the only ones it ever cleans
_WRITER = re.compile(r"\.@([A-Za-z0-9_-]+)~(\d+)\.(?:[A-Za-z0-9_]+\.)?autocomp\.tmp$")


@lru_cache(maxsize=1)
def _host() -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", socket.gethostname())[:64] or "host"


def _writer_tag() -> str:
    """`@HOST~PID`: who writes a temp file, so a later process can tell a killed writer's
    file (same host, no such process) from a live one's."""
    return f"@{_host()}~{os.getpid()}"


def temp_path(path: Path) -> Path:
    """A hidden temp name beside `path` for this process: `.NAME.@HOST~PID.autocomp.tmp`."""
    path = Path(path)
    return path.with_name(f".{path.name}.{_writer_tag()}{TEMP_SUFFIX}")


def temp_writer_gone(name: str) -> bool:
    """Whether the temp file `name` was written by a process of this host that no longer
    runs (killed -9 mid-write): it is then garbage whatever its age. Names of other hosts
    (a shared file system) and of older versions are not known to be dead."""
    found = _WRITER.search(name)
    if not found or found.group(1) != _host():
        return False
    pid = int(found.group(2))
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # another user's live process
        return False
    return False


@contextmanager
def atomic_open(path: Path, mode: str = "w", sync: bool = True):
    """A file handle whose content replaces `path` only when the block ends without error
    (temp name in the same folder, made exclusively; fsync unless `sync` is False, for a
    heartbeat; rename); a failure leaves `path` untouched. A link standing at `path` is
    replaced, never written through."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{_writer_tag()}.",
                               suffix=TEMP_SUFFIX)
    os.fchmod(fd, 0o666 & ~_umask())  # mkstemp's 0600 -> what open() would have made
    try:
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as fh:
            yield fh
            fh.flush()
            if sync:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def atomic_dir(path: Path):
    """A temp folder beside `path` that becomes `path` (absent or empty) only when the block
    ends without error; a failure removes it, so `path` never holds a partial write."""
    import shutil

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.{_writer_tag()}.",
                                suffix=TEMP_SUFFIX))
    os.chmod(tmp, 0o777 & ~_umask())
    try:
        yield tmp
        if path.is_dir():
            path.rmdir()  # empty: the caller checked
        os.replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_problem(folder: Path) -> str | None:
    """Why new files cannot be written in `folder` (or where it would be made), or None;
    creates nothing, so a command that stops later leaves no empty folders."""
    probe = Path(folder).resolve()
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        if not probe.is_dir():
            return "a file stands where a folder should be"
        with tempfile.TemporaryFile(dir=probe):
            pass
    except OSError as exc:
        return (exc.strerror or str(exc)).lower()
    return None


def write_jsonl(path: Path, records: Iterable[dict]) -> int:
    """Write all records to `path` atomically; returns how many were written."""
    count = 0
    with atomic_open(path) as fh:
        for record in records:
            fh.write(dumps(record) + "\n")
            count += 1
    return count


def loads(line: bytes):
    """One JSON value: orjson, or json for what orjson refuses (NaN); ValueError if neither
    reads it."""
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return json.loads(line)


def numbered_jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    """(line number, record) for each record of a JSON-lines file (orjson, several times
    faster than json at the paper's sizes; a line orjson refuses, e.g. with NaN, is read by
    json). A line neither reads is an AutocompError naming the file and line."""
    with open(path, "rb") as fh:
        for number, line in enumerate(iter(lambda: fh.readline(RECORD_LIMIT + 1), b""), 1):
            if len(line) > RECORD_LIMIT:
                raise AutocompError(f"a line of over {RECORD_LIMIT:,} bytes (a record is "
                                    "KBs): not read", file=f"{path}:{number}")
            if line.strip():
                try:
                    with paused():  # a record is acyclic: a collection inside frees nothing
                        record = orjson.loads(line)
                    yield number, record
                except orjson.JSONDecodeError:
                    try:
                        yield number, json.loads(line)
                    except (ValueError, RecursionError) as exc:
                        raise AutocompError(f"not a JSON record ({str(exc)[:80]})",
                                            file=f"{path}:{number}") from None


def read_jsonl(path: Path) -> Iterator[dict]:
    """The records of a JSON-lines file (see numbered_jsonl)."""
    for _, record in numbered_jsonl(path):
        yield record


def write_text(path: Path, text: str, sync: bool = True) -> None:
    """Write a text file atomically (see atomic_open)."""
    with atomic_open(path, sync=sync) as fh:
        fh.write(text)

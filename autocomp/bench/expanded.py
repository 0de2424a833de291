"""A compact benchmark's negatives enumerated once, then read back: in memory and on disk.

Reading a compact item enumerates its negatives again (bench/store.py): on the demo, 1,354
items and 142,583 negatives take ~3 s on one core, every time a benchmark is read (by each
model, tie rule, export, audit). The first complete reading of a benchmark writes what it
enumerated to

    RUN/cache/negatives/<benchmark>.<key>.jsonl

(<benchmark>: a digest of the benchmark's name and split, so no name a user chose becomes
part of a path; one line per item read, its negatives as columns), and every later
reading, in any process, reads them back instead (~3x faster). Within one process the
lines of benchmarks that fit in BUDGET bytes (all benchmarks together) are also kept
in memory, as text: parsed items are not kept, so the heap does not grow with them (a run
folder that cannot be written has only this cache).

The key is a digest of the benchmark's fingerprint (the stored file, N, the run's
build.max_negatives, the split), the task's vocabularies and rules, and the source code
that enumerates and renders negatives, so a changed file, vocabulary or autocomp reads
afresh; an older key's file of the same benchmark and split is removed when a new one is
written. A line that does not parse or names another item than the stored row is not
trusted: the reading goes on by enumerating, the file is removed, and the next reading
writes it again. AUTOCOMP_NEGATIVES_CACHE=off turns both caches off.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache
from pathlib import Path

import orjson

from autocomp.core.log import package_logger

log = package_logger(__name__)

FORMAT = 1  # of a cache line
BUDGET = 64 * 2**20  # bytes of cache lines kept in memory per process
NEGATIVE_KEYS = ("caption", "kind", "edit", "category", "same_meaning")
# what enumerating and rendering a negative runs: a change here is a change of the key
SOURCES = ("negatives", "language", "concepts", "core/scene.py", "bench/store.py")

_readings: dict[str, list[bytes]] = {}  # key -> the cache lines of one reading, in order
_held = [0]  # bytes in _readings


@lru_cache(maxsize=1)
def code_digest() -> str:
    """A digest of autocomp's version and of the source files negatives come from."""
    from autocomp import __version__

    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256(f"{__version__} format={FORMAT}".encode())
    for name in SOURCES:
        path = root / name
        for f in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            if f.is_file():
                h.update(f.relative_to(root).as_posix().encode())
                h.update(f.read_bytes())
    return h.hexdigest()


def cache_key(fingerprint: str, task) -> str:
    """The key of a benchmark's expansions: its fingerprint, its task as loaded (where its
    files lie left out) and the code."""
    rules = re.sub(r"path='[^']*'", "", repr(task))
    text = f"{fingerprint}\n{rules}\n{code_digest()}"
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def cache_file(run_dir: Path, name: str, split: str, key: str) -> Path:
    """Where the expansions of benchmark `name`'s `split` under `key` are kept."""
    from autocomp.core.run_paths import RunPaths

    digest = hashlib.sha256(f"{name}\n{split}".encode()).hexdigest()[:16]
    return RunPaths(run_dir).negatives_cache(digest, key)


def to_line(item: dict) -> dict:
    """What a cache line keeps of an expanded item: the enumerated fields, negatives as
    columns (an item whose negatives do not share one shape keeps them as they are)."""
    negs = item["negatives"]
    line = {"id": item["id"], "positive": item["positive"],
            "duplicates": item["duplicates"]}
    keys = list(negs[0]["edit"]) if negs else []
    kind = negs[0]["kind"] if negs else None
    if all(tuple(n) == NEGATIVE_KEYS and list(n["edit"]) == keys and n["kind"] == kind
           for n in negs):
        line["columns"] = {"kind": kind, "edit_keys": keys,
                           "caption": [n["caption"] for n in negs],
                           "category": [n["category"] for n in negs],
                           "same_meaning": [n["same_meaning"] for n in negs],
                           "edit": [[n["edit"][k] for k in keys] for n in negs]}
    else:
        line["negatives"] = negs
    return line


def from_line(row: dict, line: dict) -> dict:
    """The expanded item of stored `row` from its cache line (exactly what expand gives)."""
    if line.get("id") != row.get("id"):
        raise ValueError(f"the line is of item {str(line.get('id'))[:60]!r}")
    if "columns" in line:
        c = line["columns"]
        kind, keys = c["kind"], c["edit_keys"]
        columns = (c["caption"], c["category"], c["same_meaning"], c["edit"])
        if len({len(col) for col in columns}) > 1:
            raise ValueError("its columns differ in length")
        negatives = [{"caption": cap, "kind": kind, "edit": dict(zip(keys, edit, strict=True)),
                      "category": cat, "same_meaning": same}
                     for cap, cat, same, edit in zip(*columns, strict=True)]
    else:
        negatives = line["negatives"]
        if not isinstance(negatives, list):
            raise ValueError("its negatives are not a list")
    out = {k: v for k, v in row.items() if k != "regenerate"}
    out.update(positive=line["positive"], duplicates=line["duplicates"], negatives=negatives)
    return out


def expanded(rows: Iterable[tuple[str, dict]], expand: Callable[[dict, str], dict],
             path: Path | None) -> Iterator[dict]:
    """The expanded item of each (where, stored row) of `rows`, through the cache at
    `path` (None: no cache; each row is expanded)."""
    expand = _unwatched(expand)
    if path is None or os.environ.get("AUTOCOMP_NEGATIVES_CACHE", "").lower() == "off":
        for where, row in rows:
            yield expand(row, where)
        return
    key = path.name
    if key in _readings:
        yield from _read(rows, expand, iter(_readings[key]), None, _Keep(0))
        return
    keep = _Keep(BUDGET - _held[0])
    lines = None
    if path.is_file():
        try:
            lines = open(path, "rb")  # noqa: SIM115 (closed below)
        except OSError:
            lines = None
    try:
        yield from (_read(rows, expand, lines, path, keep) if lines is not None
                    else _writing(rows, expand, path, keep))
    finally:
        if lines is not None:
            lines.close()
    if keep.lines is not None:  # read to its end, and it fits
        _readings[key] = keep.lines
        _held[0] += keep.size


class _Keep:
    """The cache lines of one reading, kept while they fit in `room` bytes."""

    def __init__(self, room: int):
        self.lines: list[bytes] | None = [] if room > 0 else None
        self.size, self.room = 0, room

    def add(self, text: bytes) -> None:
        if self.lines is not None:
            self.size += len(text)
            if self.size > self.room:
                self.lines = None
            else:
                self.lines.append(text)


def _unwatched(make: Callable) -> Callable:
    """`make` run with the cyclic collector paused: an item is thousands of acyclic dicts
    and lists, and collections while they pile up took a third of a compact benchmark's
    reading (2.1 of 6.1 s on the demo)."""
    from autocomp.core.bulk_gc import paused

    def run(*args):
        with paused():
            return make(*args)
    return run


def _read(rows, expand, lines, path: Path | None, keep: _Keep) -> Iterator[dict]:
    """Each row's item from the next of `lines` (a file's or memory's); from the first line
    that is not the row's on, the rows are enumerated again and a file is removed."""
    read = _unwatched(lambda row, text: from_line(row, orjson.loads(text or b"null")))
    trusted = True
    for where, row in rows:
        if trusted:
            text = next(lines, b"")
            try:
                item = read(row, text)
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                trusted = False
                log.warning(f"{path or 'memory'}: a damaged cache of enumerated negatives "
                            f"({exc}); enumerating them again")
            else:
                keep.add(text)
                yield item
                continue
        item = expand(row, where)
        keep.add(_line(item))
        yield item
    if not trusted and path is not None:
        path.unlink(missing_ok=True)


def _line(item: dict) -> bytes:
    return orjson.dumps(to_line(item)) + b"\n"


def _writing(rows, expand, path: Path, keep: _Keep) -> Iterator[dict]:
    """Expand each row, writing the lines to a temp file that becomes the cache once every
    row was read (a reading stopped early leaves none)."""
    from autocomp.core.own_files import create_new
    from autocomp.core.records import temp_path
    from autocomp.runtime.launch import clean_orphans

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        clean_orphans(path.parent, pattern=".*")  # what killed readings left
        tmp = temp_path(path)
        fh = create_new(tmp, "wb")  # closed below, after the rows
    except OSError as exc:  # a run folder that cannot be written: memory only
        log.debug(f"no cache of enumerated negatives at {path.parent}: {exc}")
        tmp = fh = None
    done = False
    try:
        for where, row in rows:
            item = expand(row, where)
            text = _line(item)
            if fh is not None:
                fh.write(text)
            keep.add(text)
            yield item
        done = True
    finally:
        if fh is not None:
            fh.close()
            if done:
                ident = path.name.split(".")[0]  # the benchmark's: older keys are stale
                for old in path.parent.glob(f"{ident}.*.jsonl"):
                    old.unlink(missing_ok=True)
                os.replace(tmp, path)
            else:
                Path(tmp).unlink(missing_ok=True)


def forget() -> None:
    """Drop the items kept in memory (tests; a long-lived process reading many runs)."""
    _readings.clear()
    _held[0] = 0

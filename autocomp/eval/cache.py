"""On-disk embedding cache: vectors keyed by content hash, in per-process shard files.

A key is the hash of what was encoded (an image file's bytes, a caption's text), so a
re-run, another benchmark of the same run or another run with the same images reuses the
vectors.

Layout, made for the network filesystems of a cluster (NFS, Lustre), where SQLite's locks
and WAL do not work: one folder per scorer, and in it one append-only shard per process
that ever wrote (`<host>-<pid>-<random>.vec`). Nobody writes another's file and nothing is
locked. A batch is one write, flushed and fsynced: a killed process keeps every batch it
finished, and a torn last frame is ignored. Readers merge the shards: an index of key ->
(shard, offset) is built by reading the frame headers, and refreshed from where each shard
was last read when a key is missing (another rank may have written it since). A damaged
frame inside a shard ends that shard's reading with a warning; its vectors are recomputed.
Every frame carries a CRC-32 of its key and vector, checked when the shard is indexed, so
a shard cut and padded with other bytes is never read as vectors (`damaged` counts such
shards); shards of the format before checksums (ACVEC1) are left unread and recomputed.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import socket
import struct
import uuid
import warnings
import zlib
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from autocomp.core.own_files import create_new, open_own
from autocomp.core.records import write_text

MAGIC = b"ACVEC2\n"
OLD_MAGIC = b"ACVEC1\n"  # frames without a checksum
_HEAD = struct.Struct("<HII")  # key length, vector length (float32s), CRC-32 of key + vector


def text_key(text: str) -> str:
    return "t:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def identity_key(identity: str) -> str:
    """The key of what a text tower reads of a caption (a scorer's text_identity: captions
    alike within its context share it)."""
    return "i:" + hashlib.sha256(identity.encode("utf-8")).hexdigest()[:32]


def file_key(path: Path) -> str:
    return "f:" + hashlib.sha256(Path(path).read_bytes()).hexdigest()[:32]


def slug(text: str, limit: int = 100) -> str:
    """A file-name-safe form of `text`; long ones end with a hash, so they stay distinct."""
    out = re.sub(r"[^A-Za-z0-9._+-]+", "_", text).strip("_") or "scorer"  # "++" kept
    if len(out) > limit:
        out = f"{out[:limit - 11]}-{hashlib.sha256(text.encode()).hexdigest()[:10]}"
    return out


def folder_name(text: str) -> str:
    """A file-name-safe and one-to-one name for a model spec: its slug and a hash of the
    spec itself ("ckpt v2" and "ckpt_v2" have the same slug, never the same name)."""
    return f"{slug(text, 80)}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


_LOW = (1 << 20) - 1


def _digest(key: str) -> bytes:
    return hashlib.blake2b(key.encode(), digest_size=16).digest()


def _place(shard: int, offset: int, dim: int) -> int:
    """(shard, byte offset, dimension) in one int: dim and shard under 2^20 each."""
    if dim > _LOW or shard > _LOW:
        raise ValueError(f"a cache of {shard + 1} shards or {dim}-d vectors is too large")
    return offset << 40 | shard << 20 | dim


class EmbeddingCache:
    """Vectors by key, in `directory` (None: in memory, for one process's lifetime)."""

    def __init__(self, directory: Path | None, scorer_id: str):
        self.hits = self.misses = self.damaged = 0
        self._memory: dict[str, np.ndarray] = {}
        # digest of a key -> its vector's place, packed (_place): ~150 bytes a vector, not
        # ~300 with the key and a tuple (685,800 captions: 100 MB, not 200)
        self._index: dict[bytes, int] = {}
        self._shards: list[Path] = []
        self._read_to: list[int] = []  # how far each shard has been indexed
        self._own = None
        self._fds: dict[int, int] = {}
        if directory is None:
            self.path = None
            return
        digest = hashlib.sha256(scorer_id.encode()).hexdigest()[:10]
        self.path = Path(directory) / f"{slug(scorer_id, 80)}-{digest}"
        self.path.mkdir(parents=True, exist_ok=True)
        label = self.path / "scorer.txt"
        if not label.exists():
            write_text(label, scorer_id + "\n", sync=False)
        self._refresh()

    # -- reading ---------------------------------------------------------------------------
    def _refresh(self) -> None:
        """Index what the shards hold beyond what was read before (new shards too)."""
        if self.path is None:
            return
        known = set(self._shards)
        for shard in sorted(self.path.glob("*.vec")):
            if shard not in known:
                self._shards.append(shard)
                self._read_to.append(0)
        for i, shard in enumerate(self._shards):
            self._read_to[i] = self._scan(i, shard, self._read_to[i])

    def _scan(self, i: int, shard: Path, start: int) -> int:
        """Index the whole frames of `shard` from byte `start`; returns where it stopped.
        The file is mapped, not read: only the frame headers are looked at."""
        import mmap

        try:
            with open(shard, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                if size <= start:
                    return start
                with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as whole, \
                        memoryview(whole) as view, view[start:] as rest:
                    return start + self._frames(i, shard, rest, start)
        except OSError:
            return start

    def _frames(self, i: int, shard: Path, data, start: int) -> int:
        pos = 0
        if start == 0:
            if bytes(data[:len(MAGIC)]) != MAGIC:
                if bytes(data[:len(OLD_MAGIC)]) == OLD_MAGIC:
                    warnings.warn(f"{shard}: written by an older autocomp, without checksums; "
                                  "its vectors are computed again", stacklevel=3)
                    return len(data)
                if len(data) >= len(MAGIC):
                    self._damaged(shard, 0)
                    return len(data)
                return 0
            pos = len(MAGIC)
        while pos + _HEAD.size <= len(data):
            klen, dim, crc = _HEAD.unpack_from(data, pos)
            end = pos + _HEAD.size + klen + 4 * dim
            if end > len(data):
                break  # a torn last frame (its writer was killed): not whole yet
            if zlib.crc32(data[pos + _HEAD.size:end]) != crc:
                self._damaged(shard, start + pos)
                return len(data)
            try:
                key = bytes(data[pos + _HEAD.size:pos + _HEAD.size + klen]).decode("ascii")
            except UnicodeDecodeError:
                key = ""
            if not key or dim == 0:
                self._damaged(shard, start + pos)
                return len(data)
            self._index.setdefault(_digest(key), _place(i, start + pos + _HEAD.size + klen,
                                                        dim))
            pos = end
        return pos

    def _damaged(self, shard: Path, offset: int) -> None:
        self.damaged += 1
        warnings.warn(f"{shard}: unreadable from byte {offset}; the vectors before it are "
                      "used and the ones after it are computed again", stacklevel=3)

    def _vector(self, key: str) -> np.ndarray:
        packed = self._index[_digest(key)]
        i, offset, dim = (packed >> 20) & _LOW, packed >> 40, packed & _LOW
        fd = self._fds.get(i)
        if fd is None:
            fd = self._fds[i] = os.open(self._shards[i], os.O_RDONLY)
        return np.frombuffer(os.pread(fd, 4 * dim, offset), dtype=np.float32)

    def get_many(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        out = {}
        for key in dict.fromkeys(keys):
            if key in self._memory:
                out[key] = self._memory[key]
            elif _digest(key) in self._index:
                out[key] = self._vector(key)
        return out

    def missing(self, keys: Iterable[str]) -> list[str]:
        keys = list(dict.fromkeys(keys))
        miss = [k for k in keys if k not in self._memory and _digest(k) not in self._index]
        if miss and self.path is not None:
            self._refresh()  # another process may have written them since
            miss = [k for k in miss if _digest(k) not in self._index]
        self.hits += len(keys) - len(miss)
        self.misses += len(miss)
        return miss

    # -- writing ---------------------------------------------------------------------------
    def put_many(self, keys: Sequence[str], vectors: np.ndarray) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if self.path is None:
            for i, k in enumerate(keys):
                self._memory[k] = vectors[i].copy()
            return
        if self._own is None:
            name = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}.vec"
            self._own_path = self.path / name
            self._own = create_new(self._own_path, "wb")  # closed in close()
            self._own.write(MAGIC)
            self._shards.append(self._own_path)
            self._read_to.append(len(MAGIC))
        frames, offsets = [], []
        at = self._own.tell()
        for i, key in enumerate(keys):
            kb, vb = key.encode("ascii"), vectors[i].tobytes()
            frames += [_HEAD.pack(len(kb), vectors.shape[1], zlib.crc32(kb + vb)), kb, vb]
            offsets.append(at + _HEAD.size + len(kb))
            at += _HEAD.size + len(kb) + 4 * vectors.shape[1]
        own = len(self._shards) - 1
        try:
            self._own.write(b"".join(frames))
            self._own.flush()
            os.fsync(self._own.fileno())
        except OSError:  # disk full: cut the shard back to its whole frames, then say so
            self._abandon(self._read_to[own])
            raise
        for key, offset in zip(keys, offsets, strict=True):
            self._index.setdefault(_digest(key), _place(own, offset, vectors.shape[1]))
        self._read_to[own] = at

    def _abandon(self, whole: int) -> None:
        """Drop this process's shard after a failed write, truncated to `whole` bytes (a
        later put opens a new one)."""
        with contextlib.suppress(OSError):
            self._own.close()
        self._own = None
        with contextlib.suppress(OSError), open_own(self._own_path, "rb+", "a cache shard") as fh:
            fh.truncate(whole)

    def __len__(self) -> int:
        return len(self._memory) + len(self._index)

    def close(self) -> None:
        if self._own is not None:
            self._own.close()
            self._own = None
        for fd in self._fds.values():
            os.close(fd)
        self._fds = {}


def keep(fresh: dict, keys: list[str], vectors) -> None:
    """Hold what was just encoded, as the cache would give it back (float32 rows)."""
    rows = np.asarray(vectors, dtype=np.float32).reshape(len(keys), -1)
    fresh.update(zip(keys, rows, strict=True))

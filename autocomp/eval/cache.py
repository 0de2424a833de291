"""On-disk embedding cache: one SQLite file per scorer, keyed by content hash.

A key is the hash of what was encoded (an image file's bytes, a caption's text), so a
re-run, another benchmark of the same run or another run with the same images reuses the
vectors. Each batch is committed when it is written: a killed evaluation keeps every batch
it finished. SQLite's locking lets several ranks share one file.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections.abc import Iterable, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from autocomp.core.errors import AutocompError

_MAX_VARS = 900  # SQLite's limit on bound parameters is 999 in old builds


def text_key(text: str) -> str:
    return "t:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def file_key(path: Path) -> str:
    return "f:" + hashlib.sha256(Path(path).read_bytes()).hexdigest()[:32]


def slug(text: str, limit: int = 100) -> str:
    """A file-name-safe form of `text`; long ones end with a hash, so they stay distinct."""
    out = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "scorer"
    if len(out) > limit:
        out = f"{out[:limit - 11]}-{hashlib.sha256(text.encode()).hexdigest()[:10]}"
    return out


def folder_name(text: str) -> str:
    """A file-name-safe and one-to-one name for a model spec: its slug and a hash of the
    spec itself ("ckpt v2" and "ckpt_v2" have the same slug, never the same name)."""
    return f"{slug(text, 80)}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


class EmbeddingCache:
    """Vectors by key, in `directory` (None: in memory, for one process's lifetime)."""

    def __init__(self, directory: Path | None, scorer_id: str):
        if directory is None:
            self.path = None
        else:
            directory = Path(directory)
            directory.mkdir(parents=True, exist_ok=True)
            digest = hashlib.sha256(scorer_id.encode()).hexdigest()[:10]
            self.path = directory / f"{slug(scorer_id, 80)}-{digest}.sqlite"
        with self._guard():
            self._db = sqlite3.connect(self.path or ":memory:", timeout=120)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS emb (key TEXT PRIMARY KEY, vec BLOB)")
            self._db.execute("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT)")
            self._db.execute("INSERT OR IGNORE INTO meta VALUES ('scorer', ?)", (scorer_id,))
            self._db.commit()
        self.hits = self.misses = 0

    @contextmanager
    def _guard(self):
        """A damaged cache file is one line naming it and the fix; results already written
        are untouched (the cache only holds vectors, which are recomputed)."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            raise AutocompError(f"the embedding cache is damaged ({exc}): delete this file "
                                "(its vectors are recomputed) or pass --cache DIR for another "
                                "folder", file=self.path) from None

    def get_many(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        with self._guard():
            return self._get_many(keys)

    def _get_many(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        unique = list(dict.fromkeys(keys))
        for i in range(0, len(unique), _MAX_VARS):
            part = unique[i:i + _MAX_VARS]
            marks = ",".join("?" * len(part))
            for key, blob in self._db.execute(
                    f"SELECT key, vec FROM emb WHERE key IN ({marks})", part):
                out[key] = np.frombuffer(blob, dtype=np.float32)
        return out

    def missing(self, keys: Iterable[str]) -> list[str]:
        with self._guard():
            return self._missing(keys)

    def _missing(self, keys: Iterable[str]) -> list[str]:
        keys = list(dict.fromkeys(keys))
        have = set()
        for i in range(0, len(keys), _MAX_VARS):
            part = keys[i:i + _MAX_VARS]
            marks = ",".join("?" * len(part))
            have |= {k for (k,) in self._db.execute(
                f"SELECT key FROM emb WHERE key IN ({marks})", part)}
        miss = [k for k in keys if k not in have]
        self.hits += len(keys) - len(miss)
        self.misses += len(miss)
        return miss

    def put_many(self, keys: Sequence[str], vectors: np.ndarray) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        rows = [(k, vectors[i].tobytes()) for i, k in enumerate(keys)]
        with self._guard(), self._db:
            self._db.executemany("INSERT OR REPLACE INTO emb VALUES (?, ?)", rows)

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM emb").fetchone()[0]

    def close(self) -> None:
        self._db.close()

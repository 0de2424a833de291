"""Why a launched process stopped, where the job script can read it: a launcher
(accelerate, torchrun) ends with its own exit status whatever its workers' were, so each
worker that fails writes `<run>/.failures/<host>-<pid>.json` ({code, meaning, message,
rank, time}) before it exits with the status core/errors.py gives its error.
`autocomp status RUN --failure --since EPOCH` prints the failure the job should act on and
exits with its status: one that a retry cannot fix wins over one that it can (a rank that
refused for memory, and its peers that then lost it)."""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

from autocomp.core.errors import MEANING, RETRYABLE, exit_code

FOLDER = ".failures"


def record(run_dir: Path, exc: BaseException, rank: int | None = None) -> int:
    """Write this process's failure; returns its exit status."""
    code = exit_code(exc)
    folder = Path(run_dir) / FOLDER
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{socket.gethostname()}-{os.getpid()}.json"
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(json.dumps({"code": code, "meaning": MEANING.get(code, "error"),
                                   "message": " ".join(str(exc).split())[:500],
                                   "type": type(exc).__name__, "rank": rank,
                                   "time": time.time()}), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:  # a full or read-only disk: the exit status still says it
        pass
    return code


def worst(run_dir: Path, since: float = 0.0) -> dict | None:
    """The failure to act on among those written at or after `since` (epoch seconds): the
    first that a retry cannot fix, else the first; None when there is none."""
    found = []
    for path in sorted((Path(run_dir) / FOLDER).glob("*.json")):
        try:
            got = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(got, dict) and float(got.get("time", 0)) >= since:
            found.append(got)
    if not found:
        return None
    found.sort(key=lambda f: (f.get("code") in RETRYABLE, f.get("time", 0)))
    return found[0]

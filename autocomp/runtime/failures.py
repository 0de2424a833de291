"""Why a launched process stopped, where the job script can read it: a launcher
(accelerate, torchrun) ends with its own exit status whatever its workers' were, so each
worker that fails writes `<run>/.failures/<host>-<pid>.json` ({code, meaning, message,
rank, launch, time}) before it exits with the status core/errors.py gives its error.
`autocomp status RUN --failure --launch ID` prints the failure the job should act on and
exits with its status: one that a retry cannot fix wins over one that it can (a rank that
refused for memory, and its peers that then lost it).

A launch is told by its id, not by a time: the job script writes a fresh id into
$AUTOCOMP_LAUNCH before it launches, every worker records it, and only that launch's
failures count, whatever the clocks of the batch host and the workers say (a batch host 600
s ahead once read a worker's missing weights as "no worker recorded why" and requeued)."""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

from autocomp.core.errors import CRASHED, MEANING, RETRYABLE, exit_code

FOLDER = ".failures"
LAUNCH = "AUTOCOMP_LAUNCH"  # the launch id a job script (or `autocomp run`) hands its workers


def launch_id() -> str | None:
    return os.environ.get(LAUNCH) or None


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
                                   "launch": launch_id(), "time": time.time()}),
                       encoding="utf-8")
        os.replace(tmp, path)
    except OSError:  # a full or read-only disk: the exit status still says it
        pass
    return code


def worst(run_dir: Path, since: float = 0.0, launch: str | None = None) -> dict | None:
    """The failure to act on among those of launch `launch` (any launch when None) written
    at or after `since` (epoch seconds, this host's clock: only for failures of this
    host): the first that a retry cannot fix, else the first; None when there is none."""
    found = []
    for path in sorted((Path(run_dir) / FOLDER).glob("*.json")):
        try:
            got = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(got, dict) or (launch is not None and got.get("launch") != launch):
            continue
        try:
            when = float(got.get("time", 0))
        except (TypeError, ValueError):
            continue
        if when >= since:
            found.append(got)
    if not found:
        return None
    found.sort(key=lambda f: (f.get("code") in RETRYABLE, f.get("time", 0)))
    got = dict(found[0])
    if launch is not None:
        got["again"] = repeats(run_dir, got, launch)
    return got


def repeats(run_dir: Path, failure: dict, launch: str) -> int:
    """How many earlier launches (other ids) recorded the same failure: the same status,
    and for a crash the same error and message (a deterministic crash fails alike however
    often it is requeued; a full disk counts whatever its figures)."""
    def same(other: dict) -> bool:
        if other.get("code") != failure.get("code"):
            return False
        return failure.get("code") != CRASHED or (
            other.get("type"), other.get("message")) == (failure.get("type"),
                                                         failure.get("message"))

    launches = set()
    for path in (Path(run_dir) / FOLDER).glob("*.json"):
        try:
            other = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(other, dict) and other.get("launch") not in (None, launch) \
                and same(other):
            launches.add(other["launch"])
    return len(launches)

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

from autocomp.core.errors import CRASHED, EXPLAINED, MEANING, RETRYABLE, exit_code
from autocomp.core.errors import plain as printable
from autocomp.core.records import write_text

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
        write_text(path, json.dumps({"code": code, "meaning": MEANING.get(code, "error"),
                                     "message": " ".join(str(exc).split())[:500],
                                     "type": type(exc).__name__, "rank": rank,
                                     "launch": launch_id(), "time": time.time()}))
    except OSError:  # a full or read-only disk: the exit status still says it
        pass
    return code


def read_record(path: Path) -> tuple[dict | None, str | None]:
    """(the failure record at `path`, checked and cleaned, or None; why not). Only a
    regular file of at most 64 KiB is read (a FIFO hung `status --failure`); its code must
    be one of autocomp's non-zero exit statuses (256 exited 0, 300 exited 44)."""
    from autocomp.core.own_files import read_small_json

    try:
        got = read_small_json(path, 64 * 1024)
    except (OSError, ValueError) as exc:
        return None, f"cannot be read ({type(exc).__name__})"
    if not isinstance(got, dict):
        return None, "not a JSON object"
    code = got.get("code")
    if isinstance(code, bool) or not isinstance(code, int) or code == 0 or code not in MEANING:
        return None, f"field 'code': {printable(repr(code))[:20]} is no autocomp exit status"
    when = got.get("time", 0)
    if isinstance(when, bool) or not isinstance(when, (int, float)) or when != when:
        return None, f"field 'time': {printable(repr(when))[:20]} is no time"
    rank = got.get("rank")
    return {**got, "code": code, "meaning": MEANING[code], "time": float(when),
            "message": printable(got.get("message", ""))[:500],
            "rank": rank if isinstance(rank, int) and not isinstance(rank, bool) else None,
            "launch": got.get("launch") if isinstance(got.get("launch"), str) else None}, None


def worst(run_dir: Path, since: float = 0.0, launch: str | None = None) -> dict | None:
    """The failure to act on among those of launch `launch` (any launch when None) written
    at or after `since` (epoch seconds, this host's clock: only for failures of this
    host): the first that a retry cannot fix, else the first; None when there is none.
    Damaged records are left out; where only damaged ones are there, one line saying so
    with status 1 (an error a requeue would not fix)."""
    found, damaged = [], []
    for path in sorted((Path(run_dir) / FOLDER).glob("*.json")):
        got, why = read_record(path)
        if got is None:
            damaged.append(f"{printable(path.name)[:80]}: {why}")
        elif (launch is None or got["launch"] == launch) and got["time"] >= since:
            found.append(got)
    if not found:
        if not damaged:
            return None
        return {"code": EXPLAINED, "meaning": MEANING[EXPLAINED], "rank": None,
                "message": f"{len(damaged)} damaged failure record(s) in {FOLDER}/ (first: "
                           f"{damaged[0]}) and none readable: see the job's log"}
    found.sort(key=lambda f: (f["code"] in RETRYABLE, f["time"]))
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
        other, _ = read_record(path)
        if other is not None and other.get("launch") not in (None, launch) and same(other):
            launches.add(other["launch"])
    return len(launches)

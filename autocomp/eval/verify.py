"""`autocomp results verify`: a result re-scored on a random sample of its items, from its
recorded inputs (the benchmark it names, the model spec, the tie rule and precision), with
nothing cached: it is verified when every sampled item gets the same outcome and scores
within TOLERANCE of the recorded ones. The sample is drawn with fresh randomness each time
(a seed the record keeps, with K and the items drawn), so a result altered on a share f of
its items passes a check of K items with probability (1 - f)^K, whichever items were
altered (a fixed sample was known in advance: a result forged on the other items passed).
The record goes beside the result (<benchmark>.verified.json) with the digests of the
result file AND its predictions file, so either changed afterwards is no longer verified.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from autocomp.core.errors import AutocompError
from autocomp.core.own_files import read_small_json

TOLERANCE = 1e-3  # absolute, on the recorded scores (rounded to 6 decimals)
SCORES = ("positive_score", "best_negative_score")


def _digest(path: Path) -> str:
    from autocomp.core.own_files import PREDICTIONS_LIMIT, open_regular

    sha = hashlib.sha256()
    with open_regular(path, PREDICTIONS_LIMIT, text=False) as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()


def predictions(path: Path) -> Path:
    return Path(path).with_suffix(".predictions.jsonl")


def sidecar(path: Path) -> Path:
    return Path(path).with_suffix(".verified.json")


def still_verified(path: Path) -> dict | None:
    """The verification record of the result as it is now (its result and predictions
    files unchanged since, every sampled item matched): {"items": K, "of": n, ...}; None
    otherwise (a record from before issue 67 covered the result file alone: None too)."""
    try:
        got = read_small_json(sidecar(path))
        ok = (bool(got.get("verified")) and got.get("result_sha256") == _digest(path)
              and got.get("predictions_sha256") == _digest(predictions(path)))
    except (OSError, ValueError, AttributeError):
        return None
    return got if ok else None


def sample_ids(ids: list[str], k: int, seed: int) -> list[str]:
    """k ids drawn at random by `seed` (the same ids for the same seed, whatever the
    order they are listed in)."""
    import random

    pool = sorted(ids)
    return sorted(random.Random(seed).sample(pool, min(k, len(pool))))


def verify(path: Path, k: int = 20, device: str = "auto", source: Path | None = None,
           seed: int | None = None, write: bool = True) -> dict:
    """Re-score `k` items of the result at `path`, drawn with `seed` (default: fresh
    randomness); returns the record, written beside the result when `write`."""
    import secrets
    import tempfile

    from autocomp.core.records import read_jsonl, write_text
    from autocomp.eval.cells import evaluate
    from autocomp.formats import open_suite

    path = Path(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    recorded = {p["id"]: p for p in read_jsonl(predictions(path))}
    seed = secrets.randbits(63) if seed is None else int(seed)
    ids = set(sample_ids(list(recorded), k, seed))
    where = Path(source or data.get("run") or "")
    try:
        suite = open_suite(where, None if data.get("format") == "run" else data.get("format"),
                           None, None, False)
    except AutocompError as exc:
        raise AutocompError(f"cannot reopen the benchmark it scored ({exc}): pass --source",
                            file=path) from None
    bench = next((b for b in suite.benchmarks if b.name == data["benchmark"]), None)
    if bench is None:
        raise AutocompError(f"{where} has no benchmark '{data['benchmark']}'", file=path)
    with tempfile.TemporaryDirectory(prefix="autocomp-verify-") as tmp:
        evaluate(where, [data["model"]], Path(tmp) / "out", [bench.name],
                 cache_dir=Path(tmp) / "cache", device=device, suite=suite,
                 items=frozenset(ids),
                 precision=data.get("precision") or "fp32", ties=data.get("ties") or "strict",
                 progress_every=None)
        again = {}
        for pred in Path(tmp, "out").rglob("*.predictions.jsonl"):
            again.update({p["id"]: p for p in read_jsonl(pred)})
    differ = []
    for i in sorted(ids):
        a, b = recorded[i], again.get(i)
        if b is None:
            differ.append(f"{i}: not scored again")
            continue
        if bool(a.get("correct")) != bool(b.get("correct")):
            differ.append(f"{i}: correct {a.get('correct')} then {b.get('correct')}")
        for key in SCORES:
            x, y = a.get(key), b.get(key)
            if x is not None and y is not None and abs(float(x) - float(y)) > TOLERANCE:
                differ.append(f"{i}: {key} {x} then {y}")
    record = {"verified": not differ, "items": len(ids), "of": len(recorded),
              "seed": seed, "sampled": sorted(ids), "differ": differ[:20],
              "tolerance": TOLERANCE, "result_sha256": _digest(path),
              "predictions_sha256": _digest(predictions(path)),
              "model": data["model"], "benchmark": data["benchmark"]}
    if write:
        write_text(sidecar(path), json.dumps(record, indent=1, sort_keys=True) + "\n")
    return record

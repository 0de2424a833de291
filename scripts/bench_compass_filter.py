"""COMPASS's similarity filter: how long `autocomp compass build` takes with it (each build a
fresh `autocomp` process with an empty cache, as a user runs it) against `--similarity
none`, what each scope rejects, and the items each N keeps.

    python scripts/bench_compass_filter.py [--runs demo scenes] [--scopes primitive ...]
                                           [--before CHECKOUT] [--vg DIR]

The runs are made from configs/<name>.yaml with the embedded backends. `--before` also
times an older checkout's code (its default filter) on the same runs, for a before/after.
`--vg` adds a Visual Genome folder (the tests' hand-made fixture with `--vg fixture`).
Needs the compass extra (all-MiniLM-L6-v2 offline, WordNet).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-c", "from autocomp.cli import main; main()"]


def build(source: list[str], out: Path, extra: list[str], code: Path = ROOT) -> tuple[float,
                                                                                   dict]:
    env = {**os.environ, "PYTHONPATH": str(code), "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1"}
    t0 = time.perf_counter()
    done = subprocess.run([*CLI, "compass", "build", *source, "--output", str(out), *extra],
                          env=env, capture_output=True, text=True, cwd=tempfile.gettempdir())
    # (not this checkout's folder: `python -c` puts the working folder first on sys.path)
    took = time.perf_counter() - t0
    if done.returncode:
        raise SystemExit(done.stdout + done.stderr)
    return took, json.loads((out / "manifest.json").read_text())


def rejected(manifest: dict, kind: str) -> str:
    """Rejected of tested over a set family (composed-R, skill-R, ...), every N."""
    by_n = manifest["filter"].get(kind, {}).values()
    tested, rej = sum(c["tested"] for c in by_n), sum(c["rejected"] for c in by_n)
    return f"{100 * rej / tested:.0f}%" if tested else "-"


def kept_by_n(manifest: dict, name: str) -> str:
    by_n = manifest["counts_by_n"].get(name, {})
    return " ".join(f"{n}:{k}" for n, k in by_n.items()) or "none"


def make_run(name: str, tmp: Path) -> Path:
    from autocomp.config import load_config
    from autocomp.pipeline import run_pipeline
    from autocomp.run import Run

    run = Run.create(load_config(ROOT / "configs" / f"{name}.yaml"), tmp / "runs" / name)
    run_pipeline(run, progress=False)
    return run.dir


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", nargs="+", default=["demo", "scenes"])
    ap.add_argument("--scopes", nargs="+", default=["primitive", "sentence", "caption"])
    ap.add_argument("--before", type=Path, default=None)
    ap.add_argument("--vg", default=None)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-compass-"))
    sources = {name: [str(make_run(name, tmp))] for name in args.runs}
    if args.vg:
        vg = Path(args.vg)
        if args.vg == "fixture":
            sys.path.insert(0, str(ROOT / "tests"))
            from vg_fixture import write_vg

            vg = write_vg(tmp / "vg")
        sources["vg"] = ["--vg", str(vg), "--images", str(vg / "images")]
    head = (f"{'source':<8}{'filter':<22}{'seconds':>8}{'x none':>8}  {'composed':>8}"
            f"{'skill-R':>8}  {'rejected: comp-R':>16}{'skill-R':>8}{'skill-A':>8}")
    print(head)
    survival = []
    for name, source in sources.items():
        base, none = build(source, tmp / "sets" / name / "none", ["--similarity", "none"])
        rows = [("none", base, none)]
        if args.before:
            took, m = build(source, tmp / "sets" / name / "before", [], code=args.before)
            rows.append((f"before ({args.before.name})", took, m))
        for scope in args.scopes:
            took, m = build(source, tmp / "sets" / name / scope, ["--filter-on", scope])
            rows.append((scope + (" (default)" if scope == "primitive" else ""), took, m))
        for label, took, m in rows:
            print(f"{name:<8}{label:<22}{took:>8.1f}{took / base:>7.1f}x  "
                  f"{m['counts']['composed']:>8}{m['counts']['skill-R']:>8}  "
                  f"{rejected(m, 'composed-R'):>16}{rejected(m, 'skill-R'):>8}"
                  f"{rejected(m, 'skill-A'):>8}")
            survival.append((name, label, m))
    print("\nItems kept per N (N:items)")
    for name, label, m in survival:
        for set_name in ("composed", "skill-R"):
            print(f"  {name:<8}{label:<22}{set_name:<10}{kept_by_n(m, set_name)}")


if __name__ == "__main__":
    main()

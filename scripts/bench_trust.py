"""Numbers a researcher can publish (issue 35), measured in one run:

    python scripts/bench_trust.py [--seeds 20] [--work DIR]

1. Coverage: reference:random with SEEDS seeds on every benchmark of the demo run; the
   share of cells whose 95% interval misses the true chance (the mean of 1 / candidates),
   for the interval eval stores (Clopper-Pearson) and for Wilson's.
2. COMPASS on the demo and on configs/scenes.yaml with the default similarity filter:
   skill-R items per N, relation negatives kept as opposites, and the old rule's fate for
   them (MiniLM similarity of a relation sentence and its opposite against 0.95 / 0.90);
   the width of b_R's 95% interval (R-negatives, coefficient of n_R) for reference:random.
3. Table 3 stars for reference:random over SEEDS seeds (nominal: 0.5% at p < 0.005).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def built(config: str, folder: Path):
    from autocomp.config import load_config
    from autocomp.pipeline import run_pipeline
    from autocomp.run import Run

    target = folder / Path(config).stem
    if (target / "stats" / "build.json").exists():
        return Run.open(target)
    run = Run.create(load_config(ROOT / config), target)
    run_pipeline(run, progress=False)
    return run


def coverage(run, seeds: int) -> None:
    from statsmodels.stats.proportion import proportion_confint

    from autocomp.eval.harness import Harness
    from autocomp.eval.metrics import Tally
    from autocomp.eval.scorers import load_scorer
    from autocomp.formats.runs import find_benchmarks

    harnesses = [Harness(load_scorer(f"reference:random@{s}"), run.dir, {}, None)
                 for s in range(seeds)]
    cells = missed = missed_wilson = 0
    for bench in find_benchmarks(run.dir, ()):
        items = [i for i in bench.items() if i.get("negatives")]
        for h in harnesses:
            tally = Tally()
            for item in items:
                scores = h.scorer.score_item(item, [None] * (1 + len(item["negatives"])), None)
                h._judge(item, np.asarray(scores), tally)
            m = tally.metrics()
            chance = m["chance"]
            lo, hi = m["intervals"]["accuracy"]
            wl, wh = (100 * x for x in proportion_confint(tally.strict, tally.n, 0.05, "wilson"))
            cells += 1
            missed += not lo <= chance <= hi
            missed_wilson += not wl <= chance <= wh
    for h in harnesses:
        h.close()
    print(f"coverage over {cells} cells (reference:random x {seeds} seeds, demo):")
    print(f"  Clopper-Pearson (stored): {missed} miss chance = {100 * missed / cells:.1f}%")
    print(f"  Wilson:                   {missed_wilson} miss chance = "
          f"{100 * missed_wilson / cells:.1f}%   (nominal 5%)")


def compass(run, out: Path, seeds: int) -> None:
    from scipy.stats import t

    from autocomp.compass.analysis import count_regression
    from autocomp.compass.build import build_run
    from autocomp.compass.evaluate import evaluate_compass
    from autocomp.compass.report import MIN_CLUSTERS, tables
    from autocomp.compass.similarity import Similarity

    sim = Similarity(cache_dir=out / "cache")
    try:
        manifest = build_run(run.dir, out, similarity=sim)
    finally:
        sim.close()
    models = [f"reference:random@{s}" for s in range(seeds)]
    evaluate_compass(out, models)
    by_n = manifest["counts_by_n"].get("skill-R", {})
    kept = sum(c.get("opposites_kept", 0) for name, per in manifest["filter"].items()
               if name.endswith("-R") for c in per.values())
    print(f"{run.config.name}: skill-R {manifest['counts'].get('skill-R', 0)} items "
          f"({', '.join(f'N={n}: {k}' for n, k in by_n.items()) or 'none'}); "
          f"relation negatives passed as opposites: {kept}")
    widths = []
    for m in models:
        for fit in count_regression(out, m, "skill-R").values():
            c = fit.get("n_R")
            if c and not c.get("collinear") and c["se"] == c["se"]:
                widths.append(2 * t.ppf(0.975, fit["clusters"] - 1) * c["se"])
    print("  b_R (skill-R, n_R) 95% interval width for reference:random: "
          + (f"mean {np.mean(widths):.1f} points over {len(widths)} fits" if widths
             else "not estimable"))
    t3 = next(x for x in tables([out]) if x.title.startswith("Table 3"))
    coefs = [c for row in t3.rows for c in row[3:] if c[:1] in "+-0" and "(" not in c]
    stars = sum("*" in c for c in coefs)
    print(f"  Table 3: {stars} starred of {len(coefs)} coefficients over {seeds} seeds "
          f"(stars need >= {MIN_CLUSTERS} clusters)")


def opposites_under_the_old_rule() -> None:
    from autocomp.compass.similarity import Similarity

    pairs = [("to the left of", "to the right of"), ("above", "under"),
             ("in front of", "behind"), ("left of", "right of"), ("above", "below")]
    sim = Similarity()
    try:
        scores = sim.similarities([(f"The cube is {a} the sphere.", f"The cube is {b} the "
                                    "sphere.") for a, b in pairs])
    finally:
        sim.close()
    print("old rule on opposites (one sentence each; rejected above 0.95, N >= 6: 0.90):")
    for (a, b), s in zip(pairs, scores, strict=True):
        print(f"  {a} / {b}: {s:.3f} -> {'rejected' if s > 0.95 else 'kept (N < 6)'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--work", type=Path, default=None)
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-trust-"))
    demo = built("configs/demo.yaml", work)
    coverage(demo, args.seeds)
    opposites_under_the_old_rule()
    for run in (demo, built("configs/scenes.yaml", work)):
        compass(run, work / f"compass-{run.config.name}", args.seeds)


if __name__ == "__main__":
    main()

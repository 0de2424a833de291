"""Can COMPASS's skill load tell n_O, n_A and n_R apart? Variance inflation factors of the
three regressors, and the skill-load coefficients of the oracle and a random scorer, on a
scene-task run (configs/scenes.yaml) beside Auto-Comp's own concepts and a VG set.

    python scripts/bench_scenes.py [--vg DIR] [--similarity default|none]

It samples the built-in `scenes` design and Auto-Comp's shape_color (N 1-3) and
shape_position (N 2-3) concepts, runs configs/scenes.yaml on the CPU (timed), builds its
COMPASS sets, scores them with reference:oracle and reference:random, and prints the VIF
table and Table 3 of `autocomp compass report`. Without --vg the VG column comes from the
tests' hand-made VG-format fixture (five scenes: a format check, not a measurement).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
COUNTS = ("n_O", "n_A", "n_R")


def counts(concepts) -> np.ndarray:
    return np.array([[c.graph.counts[k] for k in COUNTS] for c in concepts], dtype=float)


def fmt(v) -> str:
    return " ".join("    -" if x != x else "  inf" if x == float("inf") else f"{x:5.2f}"
                    for x in v)


def _p(p: float) -> str:
    return "  -  " if p != p else f"{p:.3f}"  # NaN: a constant score (the oracle)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vg", type=Path, default=None)
    ap.add_argument("--similarity", default="none", help="default (MiniLM filter) or none")
    args = ap.parse_args()
    from click.testing import CliRunner

    from autocomp.cli import main as cli
    from autocomp.compass.analysis import count_regression, design_vifs, vifs
    from autocomp.compass.build import build_run, build_vg
    from autocomp.concepts.load import load_task
    from autocomp.concepts.sampling import sample_concepts
    from autocomp.concepts.scene_sampling import sample_scenes
    from autocomp.config import load_config
    from autocomp.pipeline import run_pipeline
    from autocomp.run import Run

    scenes = load_task("scenes")
    design = counts(sample_scenes(scenes, 10 * len(scenes.cells())))
    auto = {task: counts([c for n in ns for c in sample_concepts(load_task(task), n, 100)])
            for task, ns in (("shape_color", (1, 2, 3)), ("shape_position", (2, 3)))}
    print("VIFs of (n_O, n_A, n_R) over sampled concepts (1 = independent, inf = determined,"
          " - = constant)")
    print(f"  {'scenes design':<34}{len(design):>5}  {fmt(vifs(design))}")
    for task, X in auto.items():
        print(f"  {'Auto-Comp ' + task:<34}{len(X):>5}  {fmt(vifs(X))}")
    pooled = np.vstack(list(auto.values()))
    print(f"  {'Auto-Comp both, pooled':<34}{len(pooled):>5}  {fmt(vifs(pooled))}")

    tmp = Path(tempfile.mkdtemp(prefix="bench-scenes-"))
    run = Run.create(load_config(ROOT / "configs" / "scenes.yaml"), tmp / "run")
    t0 = time.perf_counter()
    run_pipeline(run, progress=False)
    took = time.perf_counter() - t0
    print(f"\nconfigs/scenes.yaml: whole pipeline in {took:.1f} s on the CPU")
    sim = None
    if args.similarity != "none":
        from autocomp.compass.similarity import Similarity

        sim = Similarity()
    syn = tmp / "compass-synthetic"
    m = build_run(run.dir, syn, similarity=sim)
    print(f"COMPASS sets: {m['counts']}")
    vg = args.vg
    if vg is None:
        sys.path.insert(0, str(ROOT / "tests"))
        from vg_fixture import write_vg

        vg = write_vg(tmp / "vg")
    real = tmp / "compass-vg"
    build_vg(vg, vg / "images", real, similarity=sim, candidates="vocabulary")
    runner = CliRunner()
    for d in (syn, real):
        r = runner.invoke(cli, ["compass", "eval", str(d), "--model", "reference:oracle",
                                "--model", "reference:random"])
        if r.exit_code:
            raise SystemExit(r.output)
    print("\nVIFs over the skill-load items (every skill set pooled), per level")
    for name, d in (("synthetic (scenes)", syn), ("VG", real)):
        for level, v in sorted(design_vifs(d).items()):
            print(f"  {name:<20}{level:<5}{fmt(v)}")
    report = runner.invoke(cli, ["compass", "report", str(syn), str(real), "--no-figures"])
    text = report.output
    start = text.index("**Table 3")
    print("\n" + text[start:text.index("**Variance", start)].strip())
    print("\nComposed set (N negatives, chance 1/(N+1) falls with every primitive): OLS of "
          "R@1 on the counts, points per primitive (p)")
    for name, d in (("synthetic (scenes)", syn), ("VG", real)):
        for model in ("reference:oracle", "reference:random"):
            for level, fit in sorted(count_regression(d, model, "composed").items()):
                cells = "  ".join(
                    f"{c} {fit[c]['coef']:+6.2f} ({_p(fit[c]['p'])})" if c in fit else
                    f"{c}      -        " for c in COUNTS)
                print(f"  {name:<20}{model:<18}{level:<5}{cells}")


if __name__ == "__main__":
    main()

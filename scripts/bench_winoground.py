"""Synthetic Winoground on the embedded pipeline (issue 24), in numbers: the items built
from configs/winoground.yaml, the oracle's scores and the random scorer's against chance
(25 / 25 / 16.7), pooled over every benchmark, with how many standard errors apart.

    python scripts/bench_winoground.py [--seeds 0,1,2] [--keep DIR]

Each random seed is one `reference:random@SEED` scorer: its scores are uniform per
(seed, item, image, caption).
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from pathlib import Path

from click.testing import CliRunner


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--keep", type=Path, default=None, help="Keep the run in this folder.")
    args = ap.parse_args()
    from autocomp.cli import main as cli
    from autocomp.core.resources import data_dir

    folder = args.keep or Path(tempfile.mkdtemp(prefix="bench-winoground-"))
    run = folder / "winoground"
    runner = CliRunner()
    start = time.perf_counter()
    got = runner.invoke(cli, ["run", str(data_dir("configs") / "winoground.yaml"),
                              "--output", str(run), "--no-progress"])
    assert got.exit_code == 0, got.output
    built = time.perf_counter() - start
    models = ["reference:oracle", *[f"reference:random@{s}" for s in args.seeds.split(",")]]
    cmd = ["eval", str(run), "--benchmark", "*winoground", "--output", str(run / "results")]
    got = runner.invoke(cli, cmd + [x for m in models for x in ("--model", m)])
    assert got.exit_code == 0, got.output
    cells = [json.loads(p.read_text()) for p in (run / "results").glob("*/*.json")]
    items = {r["benchmark"]: r["n_items"] for r in cells}
    print(f"run + build: {built:.1f} s; items per benchmark:")
    for name, n in sorted(items.items()):
        print(f"  {name:<40} {n:>4}")
    print(f"  {'total':<40} {sum(items.values()):>4}")
    print("\nmodel                      text    image   group   (SEs from chance: text, "
          "image, group)")
    for model in models:
        rs = [r for r in cells if r["model"] == model]
        n = sum(r["n_items"] for r in rs)
        line, apart = [], []
        for key, p in (("text_score", 0.25), ("image_score", 0.25), ("group_score", 1 / 6)):
            pooled = sum(r["metrics"][key] * r["n_items"] for r in rs) / n
            line.append(f"{pooled:6.1f}")
            apart.append(f"{(pooled - 100 * p) / (100 * math.sqrt(p * (1 - p) / n)):+.2f}")
        print(f"{model:<24} {'  '.join(line)}   ({', '.join(apart)})")
    print("chance                     25.0    25.0    16.7")


if __name__ == "__main__":
    main()

"""How long the shipped configs take, as the docs quote them.

    python scripts/bench_configs.py [--repeat 1] [demo scenes vocabularies winoground]

Each config is run by `autocomp run CONFIG --output TMP` in a fresh process (what a reader
types), and the wall time is printed beside the time the docs claim, with the ratio. Also
`autocomp eval` of the demo run with the four weightless scorers the evaluation guide uses.
The docs' numbers come from this script's output on 2 CPU cores.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLAIMS = {  # config -> (where the docs say it, seconds claimed)
    "demo": ("README.md", 12), "scenes": ("docs/tasks.md", 10),
    "vocabularies": ("docs/vocabulary.md", 15), "winoground": ("docs/formats.md", 19)}
EVAL = ["--model", "reference:oracle", "--model", "reference:bag-of-concepts",
        "--model", "reference:random", "--model", "blind:unigram"]


def _timed(args: list[str], cwd: Path) -> float:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "autocomp", *args], cwd=cwd, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("configs", nargs="*", default=list(CLAIMS))
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    print(f"{'config':<14} {'claimed':>8} {'measured':>9} {'ratio':>6}  where")
    with tempfile.TemporaryDirectory(prefix="autocomp-bench-") as tmp:
        for name in args.configs:
            times = []
            for k in range(args.repeat):
                out = Path(tmp) / f"{name}-{k}"
                times.append(_timed(["run", str(ROOT / "configs" / f"{name}.yaml"),
                                     "--output", str(out)], Path(tmp)))
                if name == "demo" and k == 0:
                    demo = out
                else:
                    shutil.rmtree(out)
            where, claimed = CLAIMS.get(name, ("-", None))
            best = min(times)
            ratio = f"{best / claimed:.2f}" if claimed else "-"
            print(f"{name:<14} {claimed or '-':>7}s {best:>8.1f}s {ratio:>6}  {where}",
                  flush=True)
        if "demo" in args.configs:
            took = _timed(["eval", str(demo), *EVAL, "--output", str(Path(tmp) / "res")],
                          Path(tmp))
            print(f"{'demo eval (4)':<14} {'-':>8} {took:>8.1f}s {'-':>6}  "
                  "docs/evaluation.md", flush=True)
    print(f"(best of {args.repeat}; {os.cpu_count()} CPU cores; wall time of the command "
          "including Python start-up and imports)")


if __name__ == "__main__":
    main()

"""How long each long command stays silent: the longest gap between two output lines.

    python scripts/bench_silence.py [--every 1] [--only NAME ...] [--autocomp PATH]

Each command runs in a scratch folder with $AUTOCOMP_PROGRESS_EVERY set to --every
seconds (the progress interval; 10 s by default in use, 1 s here so that CPU-sized work
shows the gaps), with tiny random models built on the spot (nothing downloaded). It prints
per command the wall time, the longest silence, its ratio to the interval and the line
the silence followed. A command that honours the interval has a longest silence of about
one interval (plus the start of Python: importing torch).

  run        autocomp run configs/demo.yaml
  export     autocomp export of that run
  vlm        autocomp eval ... --model vlm:<tiny Gemma-3>@circular on one benchmark
  t2i        autocomp t2i ... -g procedural --vqascore vqascore:<tiny Gemma-3>
  api        api.run under api.show_progress() (the same config as `run`)
  clip_benchmark  the export's CLIP_benchmark harness with a tiny open_clip model
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))


def silence(cmd: list[str], cwd: Path, every: float) -> dict:
    """Run `cmd`, timing every line of its output (stdout and stderr together)."""
    env = dict(os.environ, AUTOCOMP_PROGRESS_EVERY=str(every), HF_HUB_OFFLINE="1",
               PYTHONUNBUFFERED="1")
    start = last = time.monotonic()
    worst, after, previous, lines = 0.0, "<start>", "<start>", 0
    with subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, bufsize=1) as proc:
        for raw in proc.stdout:
            for line in raw.replace("\r", "\n").splitlines():  # a tqdm bar's redraws too
                now = time.monotonic()
                if now - last > worst:
                    worst, after = now - last, previous
                last, previous, lines = now, line.strip()[:120] or previous, lines + 1
        code = proc.wait()
    now = time.monotonic()
    if now - last > worst:
        worst, after = now - last, previous
    return {"rc": code, "wall_s": now - start, "silence_s": worst, "after": after,
            "lines": lines}


def commands(work: Path, autocomp: str, clip: Path) -> dict[str, list[str]]:
    py = sys.executable
    api = ("from autocomp import api; api.show_progress(); "
           f"api.run({str(ROOT / 'configs' / 'demo.yaml')!r}, 'api-run')")
    return {
        "run": [autocomp, "run", str(ROOT / "configs" / "demo.yaml"), "--output", "demo"],
        "export": [autocomp, "export", "demo", "-o", "export"],
        "vlm": [autocomp, "eval", "demo", "--model", f"vlm:{work / 'vlm'}@circular",
                "--benchmark", "shape_color-n2/minimal-swap", "-o", "vlm-results"],
        "t2i": [autocomp, "t2i", "demo", "-g", "procedural", "-k", "1", "--tasks",
                "shape_color-n*", "--vqascore", f"vqascore:{work / 'vlm'}", "-o", "t2i"],
        "api": [py, "-c", api],
        "clip_benchmark": [py, str(work / "export" / "harness" / "clip_benchmark_autocomp.py"),
                           "--model", f"local-dir:{clip}", "--pretrained", "",
                           "--config", "shape_color-n2-minimal-swap", "--output",
                           str(work / "cb-{dataset}.json")],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=float, default=1.0)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--autocomp", default=shutil.which("autocomp") or "autocomp",
                        help="the autocomp command to time (another checkout's, say)")
    args = parser.parse_args()
    from tiny_models import tiny_gemma_vlm, tiny_open_clip

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        tiny_gemma_vlm(work / "vlm")
        clip = tiny_open_clip(work / "clip")
        todo = commands(work, args.autocomp, clip)
        names = args.only or list(todo)
        if any(n in names for n in ("export", "vlm", "t2i", "clip_benchmark")):
            names = ["run"] + [n for n in names if n != "run"]  # they need the run
        if "clip_benchmark" in names and "export" not in names:
            names.insert(1, "export")
        print(f"progress interval {args.every:g} s; {args.autocomp}")
        print(f"{'command':15s} {'rc':>3s} {'wall s':>7s} {'silence s':>10s} {'x interval':>11s}"
              "  after the line")
        for name in names:
            got = silence(todo[name], work, args.every)
            print(f"{name:15s} {got['rc']:3d} {got['wall_s']:7.1f} {got['silence_s']:10.1f} "
                  f"{got['silence_s'] / args.every:11.1f}  {got['after']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

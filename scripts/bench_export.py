"""The export of Auto-Comp's Table 2 sizes: bytes beside the images' own, seconds, peak RSS.

    python scripts/bench_export.py [--scale 1.0] [--max-negatives K] [--output DIR]

Builds the benchmark of scripts/bench_scale.py (Table 2's validated samples, swap and
confusion, 64px stand-in images, each in a file of its own so no two share bytes), then,
in a process of its own, `autocomp export` of it (no audit: the export alone) and prints:
  export   seconds, items/s, peak RSS
  size     the parquet's bytes; the images' own bytes (each validated image counted once at
           its file's size, as if every image had a file of its own); their ratio (goal:
           about 2, each image being embedded once per benchmark it is in: swap and
           confusion); and the bytes the negatives and their metadata take per item
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def step_export(out: Path, max_negatives: int | None) -> dict:
    from autocomp.core.log import attach

    attach()  # progress lines on standard error, as the CLI shows them
    from bench_scale import peak_rss_mb

    from autocomp.publish.export import export_benchmarks

    t = time.perf_counter()
    got = export_benchmarks(out / "run", out / "export", max_negatives, 0, audit=False)
    seconds = time.perf_counter() - t
    items = sum(c["rows"] for c in got["configs"].values())
    return {"seconds": seconds, "items": items, "bytes": got["bytes"],
            "negatives_shown": sum(c["negatives_shown"] for c in got["configs"].values()),
            "peak_rss_mb": peak_rss_mb()}


def own_image_bytes(run_dir: Path) -> tuple[int, int]:
    """(images, bytes): every validated image once, at its file's size."""
    from autocomp.core.records import read_jsonl

    sizes, count, total = {}, 0, 0
    for v in read_jsonl(run_dir / "validation" / "merged.jsonl"):
        if v.get("passed"):
            path = run_dir / v["image"]
            if path not in sizes:
                sizes[path] = path.stat().st_size
            count += 1
            total += sizes[path]
    return count, total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of Table 2's sizes")
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--max-negatives", type=int, default=None)
    ap.add_argument("--output", "--out", dest="out", type=Path, default=None)
    ap.add_argument("--step", default=None)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "scripts"))
    if args.step == "export":
        print(json.dumps(step_export(args.out, args.max_negatives)))
        return
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-export-"))
    if not (out / "run" / "bench").is_dir():
        from bench_scale import step_build

        built = step_build(out, args.scale, args.processes, unique_images=True)
        from autocomp.report.summary import summarize
        from autocomp.run import Run

        # what `autocomp run` writes when it ends (stats/funnel.json, agreement.json): the
        # export's card reads them instead of every record
        summarize(Run.open(out / "run"), figures=False, write=True)
        print(f"build: {built['items']:,} items of {built['concepts']:,} concepts "
              f"(scale {args.scale})", flush=True)
    cmd = [sys.executable, __file__, "--step", "export", "--output", str(out)]
    if args.max_negatives:
        cmd += ["--max-negatives", str(args.max_negatives)]
    got = json.loads(subprocess.run(cmd, check=True, capture_output=True,
                                    text=True).stdout.strip().splitlines()[-1])
    images, image_bytes = own_image_bytes(out / "run")
    print(f"export   {got['seconds']:.1f} s, {got['items'] / got['seconds']:,.0f} items/s, "
          f"peak RSS {got['peak_rss_mb']:,.0f} MB ({got['items']:,} items, "
          f"{got['negatives_shown']:,} negatives)")
    print(f"size     {got['bytes']:,} bytes of parquet; the images' own {image_bytes:,} "
          f"bytes ({images:,} validated images); ratio {got['bytes'] / image_bytes:.2f}")
    text = got["bytes"] - 2 * image_bytes  # each image is embedded in swap and confusion
    print(f"         beyond two copies of the images: {text:,} bytes, "
          f"{text / got['items']:,.0f} an item, "
          f"{text / max(got['negatives_shown'], 1):.2f} a negative")


if __name__ == "__main__":
    main()

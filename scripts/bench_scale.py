"""Paper scale: the benchmark of Auto-Comp's Table 2 built, stored and scored.

    python scripts/bench_scale.py [--scale 1.0] [--processes 2] [--output DIR] [--no-clip]

Table 2's validated samples (both tracks): color N=2 62.6k, N=3 6.0k; position N=2 69.1k,
N=3 12.7k, so half as many concepts per track. It samples those concepts (seed 0), writes
their captions with the template writer through the runtime (run_stage on 2 forked ranks,
part files, merge), gives every image the same small pool
of procedural stand-in images (validation skipped: every image counts as validated; this
measures the benchmark, not faithfulness), builds the swap and confusion items in the
compact store, and prints:
  build     seconds per step and in all (goal: 30 s on 2 cores), peak RSS
  store     the compact bench's bytes (goal: 250 MB), and the full store's estimated from
            a 1% sample
  eval      reference:oracle and reference:random over every item (negatives enumerated
            again as items are read), then a tiny random open_clip model on the N=3 minimal
            benchmarks: seconds, items/s, captions/s, peak RSS; reference:random again on
            the benchmark with the largest items alone (color N=3 confusion), to show that
            eval memory is set by the largest chunk, not by the number of items (goal: peak
            RSS under 1 GB)
Each measured step runs in its own process, so its peak RSS is its own.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLE2 = {("color", 2): 62_600, ("color", 3): 6_000, ("position", 2): 69_100,
          ("position", 3): 12_700}
POOL = 64  # stand-in images shared by every item


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _caption_rank(args):
    """One rank of the captions stage, through the runtime's own sharding and part files."""
    run_dir, rank, world = args
    from autocomp.captions.stage import CaptionStage
    from autocomp.run import Run
    from autocomp.runtime.runner import run_stage

    # done=set(): the run is new; each rank reading the stage folder itself would see the
    # records another rank already wrote, shard the rest differently and lose items
    return run_stage(CaptionStage(Run.open(Path(run_dir))), rank, world, progress=False,
                     done=set())


def step_build(out: Path, scale: float, processes: int, unique_images: bool = False) -> dict:
    """`unique_images`: every image record gets a file of its own, the pool's pixels with
    noise seeded by the image id, so that, as photographs, no two images share bytes and
    compression cannot fold them together (scripts/bench_export.py measures bytes)."""
    from multiprocessing import get_context

    import numpy as np
    from PIL import Image

    from autocomp.bench.build import build
    from autocomp.captions.stage import CaptionStage
    from autocomp.concepts.stage import make_concepts
    from autocomp.config import parse_config
    from autocomp.core.records import TRACKS, write_jsonl
    from autocomp.core.run_records import ImageRecord, ValidationRecord
    from autocomp.run import Run
    from autocomp.runtime.runner import merge
    from autocomp.synth.base import ImageRequest
    from autocomp.synth.procedural import ProceduralGenerator

    times = {}
    concepts = [{"task": t, "n": [n], "count": max(1, round(k * scale / 2))}
                for (t, n), k in TABLE2.items()]
    cfg = parse_config({"name": "scale", "seed": 0, "concepts": concepts,
                        "captions": {"options": {"slip_rate": 0.0}},
                        "generate": {"options": {"size": 64, "stand_ins": True}},
                        # color-blobs cannot name stand-ins; validation is written by hand
                        "validate": {"detector": "grounding-dino+sam2"}})
    run = Run.create(cfg, out / "run")
    t = time.perf_counter()
    records = make_concepts(run)
    times["concepts"] = time.perf_counter() - t

    t = time.perf_counter()
    from autocomp.language.grammar import indefinite_article

    indefinite_article("cube")  # inflect's import (seconds) once, before the workers fork
    stage = CaptionStage(run)
    with get_context("fork").Pool(processes) as pool:
        pool.map(_caption_rank, [(str(run.dir), r, processes) for r in range(processes)])
    merge(stage)
    times["captions"] = time.perf_counter() - t

    t = time.perf_counter()
    gen = ProceduralGenerator(64, stand_ins=True)
    concepts = run.read("concepts")
    pool_paths = []
    for i, c in enumerate(concepts[:POOL]):
        img = gen.generate_one(ImageRequest(c.id, c.scene, run.tasks[c.task], "minimal", c.seed,
                                            ""))
        rel = f"images/pool/{i}.png"
        (run.dir / rel).parent.mkdir(parents=True, exist_ok=True)
        img.image.save(run.dir / rel)
        pool_paths.append(rel)
    images, validation = [], []
    pool_images = ([np.asarray(Image.open(run.dir / p).convert("RGB")) for p in pool_paths]
                   if unique_images else [])
    for i, c in enumerate(concepts):
        for track in TRACKS:
            image_id, rel = f"{c.id}-{track}", pool_paths[i % len(pool_paths)]
            if unique_images:
                rel = run.paths.image(image_id)
                (run.dir / rel).parent.mkdir(parents=True, exist_ok=True)
                rng = np.random.default_rng(int(c.id[:8], 16) * 2 + (track == "contextual"))
                pixels = pool_images[i % len(pool_images)].astype(np.int16)
                noise = rng.integers(-6, 7, size=pixels.shape, dtype=np.int16)
                Image.fromarray(np.clip(pixels + noise, 0, 255).astype(np.uint8)).save(
                    run.dir / rel)
            images.append(ImageRecord(image_id, c.id, c.task, c.n, track, c.seed, rel, 64, 64,
                                      [], {}).to_dict())
            validation.append(ValidationRecord(image_id, c.id, c.task, c.n, track, rel, True,
                                               None, []).to_dict())
    write_jsonl(run.paths.merged("images"), images)
    write_jsonl(run.paths.merged("validation"), validation)
    times["images (stand-in pool)"] = time.perf_counter() - t

    t = time.perf_counter()
    stats = build(run)
    times["build stage (compact)"] = time.perf_counter() - t
    return {"seconds": times, "items": sum(stats["benchmarks"].values()),
            "concepts": len(records), "peak_rss_mb": peak_rss_mb()}


def step_full_estimate(out: Path) -> dict:
    """The full store's bytes, estimated from every 100th item of each benchmark."""
    from autocomp.bench.store import expand
    from autocomp.core.records import read_jsonl
    from autocomp.formats.runs import find_benchmarks

    total = negatives = 0
    for b in find_benchmarks(out / "run"):
        rows = list(read_jsonl(b.path))
        sample = rows[::100]
        expanded = [expand(r, b.tasks[r["task"]]) for r in sample]
        per_item = sum(len(json.dumps(e, ensure_ascii=False)) + 1 for e in expanded) / len(sample)
        total += per_item * len(rows)
        negatives += sum(len(e["negatives"]) for e in expanded) / len(sample) * len(rows)
    return {"bytes": total, "negatives": negatives}


def step_eval(out: Path, models: list[str], patterns: list[str], tag: str) -> dict:
    from autocomp.eval.cells import evaluate

    t = time.perf_counter()
    got = evaluate(out / "run", models, out / f"results-{tag}", patterns,
                   cache_dir=out / f"cache-{tag}", batch_size=64,
                   progress_every=None)
    seconds = time.perf_counter() - t
    items = sum(r["n_items"] for r in got)
    captions = sum(r["captions"] for r in got)
    return {"seconds": seconds, "items": items, "captions": captions,
            "peak_rss_mb": peak_rss_mb(),
            "accuracy": {f"{r['model']} {r['benchmark']}": r["metrics"]["accuracy"]
                         for r in got}}


def make_clip(out: Path) -> str:
    sys.path.insert(0, str(ROOT / "scripts"))
    from bench_eval import make_model

    return f"open_clip:local-dir:{make_model(out, 64, 2)}"


def child(step: str, out: Path, *extra) -> dict:
    cmd = [sys.executable, __file__, "--step", step, "--output", str(out), *extra]
    done = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ})
    if done.returncode:
        raise SystemExit(f"{step} failed:\n{done.stdout}\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of Table 2's sizes")
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--output", "--out", dest="out", type=Path, default=None)
    ap.add_argument("--no-clip", action="store_true")
    ap.add_argument("--step", default=None)
    ap.add_argument("--models", default="")
    ap.add_argument("--patterns", default="")
    ap.add_argument("--tag", default="")
    args = ap.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-scale-"))
    if args.step == "build":
        print(json.dumps(step_build(out, args.scale, args.processes)))
        return
    if args.step == "estimate":
        print(json.dumps(step_full_estimate(out)))
        return
    if args.step == "eval":
        print(json.dumps(step_eval(out, args.models.split(","),
                                   [p for p in args.patterns.split(",") if p], args.tag)))
        return

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    b = child("build", out, "--scale", str(args.scale), "--processes", str(args.processes))
    total = sum(b["seconds"].values())
    print(f"Table 2 x {args.scale}: {b['concepts']:,} concepts, {b['items']:,} items "
          f"(swap + confusion, both tracks) -> {out}")
    for name, s in b["seconds"].items():
        print(f"  build  {name:<26}{s:8.1f} s")
    own = total - b["seconds"]["images (stand-in pool)"]
    print(f"  build  {'total':<26}{total:8.1f} s   peak RSS {b['peak_rss_mb']:,.0f} MiB")
    print(f"  build  {'autocomp stages':<26}{own:8.1f} s   (concepts, captions, build: goal "
          "30 s on 2 cores; the stand-in images stand for the GPU stages)")
    bench = du(out / "run" / "bench")
    est = child("estimate", out)
    print(f"  store  compact bench {bench / 2**20:,.1f} MiB; full store (every negative "
          f"written, estimated from 1%) {est['bytes'] / 2**30:,.2f} GiB for "
          f"{est['negatives'] / 1e6:,.2f} M negatives")
    for models, patterns, tag in (("reference:oracle,reference:random", "", "ref"),
                                  ("reference:random", "color-n3/minimal-confusion", "one")):
        e = child("eval", out, "--models", models, "--patterns", patterns, "--tag", tag)
        print(f"  eval   {models} on {patterns or 'every benchmark'}: {e['seconds']:.1f} s, "
              f"{e['items'] / e['seconds']:,.0f} items/s, {e['captions'] / e['seconds']:,.0f} "
              f"captions/s, peak RSS {e['peak_rss_mb']:,.0f} MiB")
        if tag == "ref":
            oracle = {k: v for k, v in e["accuracy"].items() if k.startswith("reference:oracle")}
            assert all(v == 100.0 for v in oracle.values()), oracle
    if not args.no_clip:
        spec = make_clip(out)
        pats = "color-n3/minimal-swap,position-n3/minimal-swap,position-n3/minimal-confusion"
        e = child("eval", out, "--models", spec, "--patterns", pats, "--tag", "clip")
        print(f"  eval   tiny open_clip (width 64, 2 layers) on {pats}: {e['seconds']:.1f} s, "
              f"{e['items'] / e['seconds']:,.0f} items/s, {e['captions'] / e['seconds']:,.0f} "
              f"captions/s, peak RSS {e['peak_rss_mb']:,.0f} MiB")


if __name__ == "__main__":
    main()

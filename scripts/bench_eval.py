"""The eval harness against a per-sample reference loop, on a full benchmark suite.

    python scripts/bench_eval.py [--count 16] [--width 128] [--layers 4] [--output DIR]

Builds a run of the built-in color (N = 1, 2, 3) and position (N = 2, 3) tasks with the
template writer and procedural stand-in images (validation skipped: every image counts as
validated; this measures scoring, not faithfulness), then scores every benchmark
(swap, confusion with up to 729 captions per item, N = 1 variations, and the paired subsets
as their own benchmarks) with one random open_clip CLIP loaded from a local folder:

  reference  for each item: encode the image, encode all its captions (77 tokens), cosine,
             correct if the positive is strictly above every negative (the way
             SugarCrepe's main_eval.py scores); paired subsets are evaluated again
  harness    autocomp's: captions once per scorer across the suite, batched, context cut
             to the longest caption (causal text tower), embeddings cached on disk

It asserts identical accuracy on every benchmark and prints the cold and warm speed
ratios and the peak traced memory at 1x and 2x the items of the largest benchmark.

    python scripts/bench_eval.py --demo

times `autocomp eval runs/demo --model reference:random` as a user runs it: negatives
enumerated at each reading (the cache off), the first run, a later run; and whether torch
was imported.

    python scripts/bench_eval.py --gpu-parts [--images 48]

times what decides eval cost on a GPU node and can be measured on a CPU: images read and
decoded in this thread vs on worker threads one batch ahead (1024 px PNGs; a sleep stands in
for the GPU's encoding), image encodes per distinct image under --distributed (cells dealt
round-robin vs shares by hash; tests/test_gpu_ready.py checks the 1.00 on a launch), and
the accuracy of bf16 and fp16 autocast against fp32 on every
benchmark of the suite (the tiny random model; real models differ less or more).
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np


def build_suite(out: Path, count: int) -> Path:
    from autocomp.bench.build import build
    from autocomp.config import parse_config
    from autocomp.core.records import write_jsonl
    from autocomp.pipeline import run_pipeline
    from autocomp.run import Run

    cfg = parse_config({
        "name": "bench-eval", "seed": 0,
        "concepts": [{"task": "color", "n": [1, 2, 3], "count": count},
                     {"task": "position", "n": [2, 3], "count": count}],
        "generate": {"options": {"size": 128, "stand_ins": True}},
        # color-blobs cannot name stand-ins; validation is written by hand
        "validate": {"detector": "grounding-dino+sam2"}})
    run = Run.create(cfg, out / "run")
    run_pipeline(run, stages=("concepts", "captions", "images"), progress=False)
    images = run.records("images")
    write_jsonl(run.dir / "validation" / "merged.jsonl", [
        {"id": r["id"], "concept": r["concept"], "task": r["task"], "n": r["n"],
         "track": r["track"], "image": r["image"], "passed": True, "failed_at": None,
         "checks": []} for r in images])
    build(run, "full")  # negatives written out: this measures scoring, not enumeration
    return run.dir


def make_model(out: Path, width: int, layers: int) -> Path:
    import open_clip
    import torch
    from safetensors.torch import save_file

    cfg = {"embed_dim": 64,
           "vision_cfg": {"image_size": 64, "layers": layers, "width": width,
                          "head_width": 32, "patch_size": 16},
           "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": width,
                        "heads": max(1, width // 32), "layers": layers}}
    folder = out / "model"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bench-ViT.json").write_text(json.dumps(cfg))
    open_clip.add_model_config(folder)
    torch.manual_seed(0)
    model, _, _ = open_clip.create_model_and_transforms("bench-ViT", pretrained=None)
    (folder / "open_clip_config.json").write_text(json.dumps({"model_cfg": cfg}))
    save_file({k: v.contiguous() for k, v in model.state_dict().items()},
              str(folder / "open_clip_model.safetensors"))
    return folder


def reference_loop(run_dir: Path, weights: Path) -> dict:
    """Per item: image and every caption encoded; paired subsets evaluated again."""
    import open_clip
    import torch
    from PIL import Image

    from autocomp.formats.runs import find_benchmarks

    model, _, preprocess = open_clip.create_model_and_transforms(f"local-dir:{weights}")
    tokenizer = open_clip.get_tokenizer(f"local-dir:{weights}")
    model.eval()
    out = {}
    for bench in find_benchmarks(run_dir):
        for paired_only in (False, True):
            correct = n = 0
            for item in bench.items():
                if paired_only and not item["paired"]:
                    continue
                with torch.inference_mode():
                    img = preprocess(Image.open(run_dir / item["image"]).convert("RGB"))
                    iv = model.encode_image(img[None]).float()
                    caps = [item["positive"], *[c["caption"] for c in item["negatives"]]]
                    tv = model.encode_text(tokenizer(caps)).float()
                iv = (iv / iv.norm(dim=-1, keepdim=True)).numpy()[0].astype(np.float64)
                tv = (tv / tv.norm(dim=-1, keepdim=True)).numpy().astype(np.float64)
                s = tv @ iv
                correct += bool(s[0] > s[1:].max()) if len(s) > 1 else True
                n += 1
            key = "accuracy_paired" if paired_only else "accuracy"
            out.setdefault(bench.name, {})[key] = round(100.0 * correct / n, 4) if n else None
    return out


def harness(run_dir: Path, spec: str, results: Path, cache: Path) -> dict:
    from autocomp.eval.cells import evaluate

    got = evaluate(run_dir, [spec], results, cache_dir=cache, batch_size=256)
    return {r["benchmark"]: {"accuracy": r["metrics"]["accuracy"],
                             "accuracy_paired": r["metrics"]["accuracy_paired"]} for r in got}


def memory_at(run_dir: Path, spec: str, bench_name: str, factor: int, tmp: Path) -> float:
    """Peak traced memory (MiB) scoring one benchmark with its items repeated `factor` x,
    read in chunks of 8 items (so both sizes span several chunks)."""
    from autocomp.core.records import read_jsonl, write_jsonl
    from autocomp.eval.harness import Harness
    from autocomp.eval.scorers import load_scorer
    from autocomp.formats.runs import Benchmark, find_benchmarks
    from autocomp.run import Run

    run = Run.open(run_dir)
    bench = find_benchmarks(run_dir, [bench_name])[0]
    path = tmp / f"x{factor}.jsonl"
    items = list(read_jsonl(bench.path))
    write_jsonl(path, (dict(it, id=f"{it['id']}#{k}") for k in range(factor) for it in items))
    big = Benchmark(bench.name, bench.task, bench.n, bench.track, bench.kind, path, run.tasks)
    h = Harness(load_scorer(spec, batch_size=256), run.dir, run.tasks, tmp / "cache-mem",
                chunk_items=8)
    h.run(big, tmp / "warmup.jsonl")  # fill the cache: memory of the steady state
    tracemalloc.start()
    h.run(big, tmp / f"p{factor}.jsonl")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    h.close()
    return peak / 2**20


def time_decode(out: Path, n: int, gpu_seconds: float = 0.01) -> None:
    """Seconds per image of the harness's image pass, decoding inline vs on workers."""
    import os
    import sys

    from autocomp.eval.harness import Harness
    from autocomp.eval.scorers.base import DualEncoder

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_generate import photo_like

    folder = out / "photos"
    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for k in range(n):
        names.append(f"photos/{k}.png")
        photo_like(1024, k).save(out / names[-1])

    class Sleeps(DualEncoder):
        """Encodes nothing: a sleep per image stands in for the GPU."""
        family = "bench"

        def encode_images(self, images):
            time.sleep(gpu_seconds * len(images))
            return np.ones((len(images), 4), np.float32)

    seconds = {}
    workers = min(8, os.cpu_count() or 1)
    for w in (0, workers):
        h = Harness(Sleeps("sleeps", batch_size=8), out, {}, None, workers=w)
        start = time.perf_counter()
        h.image_vectors(names)
        seconds[w] = (time.perf_counter() - start) / n
        h.close()
    print(f"images, 1024 px PNG, {gpu_seconds} s/image on the 'GPU': read and decoded inline "
          f"{seconds[0] * 1000:.1f} ms/image -> {workers} worker threads one batch ahead "
          f"{seconds[workers] * 1000:.1f} ms/image ({seconds[0] / seconds[workers]:.2f}x)")


def precision_gap(run_dir: Path, spec: str, out: Path) -> None:
    """Accuracy under bf16 / fp16 autocast against fp32, per benchmark."""
    from autocomp.eval.cells import evaluate

    acc = {}
    for precision in ("fp32", "bf16", "fp16"):
        got = evaluate(run_dir, [spec], out / precision, cache_dir=None, batch_size=256,
                       precision=precision)
        acc[precision] = {r["benchmark"]: r["metrics"]["accuracy"] for r in got}
    for precision in ("bf16", "fp16"):
        gaps = [abs(acc[precision][b] - acc["fp32"][b]) for b in acc["fp32"]]
        print(f"{precision} autocast vs fp32 on {len(gaps)} benchmarks (tiny random model): "
              f"accuracy differs by {sum(gaps) / len(gaps):.2f} pp on average, "
              f"{max(gaps):.2f} pp at most")


def encode_shares(run_dir: Path) -> None:
    """Image encodes per distinct image with K ranks: cells dealt round-robin, each rank
    encoding what its cells' benchmarks hold (before), vs shares by hash (after: 1.00)."""
    from autocomp.eval.harness import image_ref
    from autocomp.formats.runs import find_benchmarks

    benches = find_benchmarks(run_dir, [])
    images = {b.name: {image_ref(it) for it in b.items()} for b in benches}
    distinct = set().union(*images.values())
    for world in (2, 4, 8):
        per_rank = [set().union(*[images[b.name] for b in benches[r::world]] or [set()])
                    for r in range(world)]
        ratio = sum(map(len, per_rank)) / len(distinct)
        print(f"--distributed on {world} ranks, {len(distinct)} distinct images: encodes per "
              f"image, cells dealt round-robin {ratio:.2f}x -> shared by hash 1.00x")


def gpu_parts(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--images", type=int, default=48)
    parser.add_argument("--count", type=int, default=8)
    args = parser.parse_args(argv)
    out = Path(tempfile.mkdtemp(prefix="bench_eval_gpu-"))
    time_decode(out, args.images)
    run_dir = build_suite(out, args.count)
    encode_shares(run_dir)
    weights = make_model(out, 128, 4)
    precision_gap(run_dir, f"open_clip:local-dir:{weights}", out / "results")


def demo_command(repeats: int = 3) -> None:
    """`autocomp eval runs/demo --model reference:random` as a user runs it (a process
    each, best of `repeats`): negatives enumerated at every reading (the cache off, as
    before issue 57), the first run (enumerates, writes RUN/cache/negatives/), a later run
    (reads it back); and whether the process imported torch."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    out = Path(tempfile.mkdtemp(prefix="bench_eval_demo-"))
    probe = ("import sys\ntry:\n    from autocomp.cli import main\n"
             "    main(sys.argv[1:], prog_name='autocomp')\n"
             "finally:\n    print('torch imported:', 'torch' in sys.modules, "
             "file=sys.stderr)")
    subprocess.run([sys.executable, "-c", probe, "run", str(root / "configs" / "demo.yaml"),
                    "--output", str(out / "demo"), "--no-progress"],
                   check=True, capture_output=True)

    def once(run: Path, env: dict) -> tuple[float, str]:
        start = time.perf_counter()
        got = subprocess.run([sys.executable, "-c", probe, "eval", str(run), "--model",
                              "reference:random", "--output", str(run / "results")],
                             env={**os.environ, **env}, capture_output=True, text=True,
                             check=True)
        return time.perf_counter() - start, got.stderr.strip().splitlines()[-1]

    def best(fresh: bool, env: dict) -> tuple[float, str]:
        times = []
        for k in range(repeats):
            run = out / f"copy{k}"
            if fresh or not run.exists():
                shutil.rmtree(run, ignore_errors=True)
                shutil.copytree(out / "demo", run)
                if not fresh:
                    once(run, env)  # the first run, not timed
            times.append(once(run, env))
        return min(times)

    off, torch_line = best(True, {"AUTOCOMP_NEGATIVES_CACHE": "off"})
    first, _ = best(True, {})
    later, _ = best(False, {})
    print(f"autocomp eval runs/demo --model reference:random (1,354 items, 142,583 "
          f"negatives; best of {repeats} processes; {torch_line}):")
    print(f"  negatives enumerated at each reading (cache off) {off:5.2f} s")
    print(f"  first run (enumerates, writes the cache)          {first:5.2f} s  "
          f"{off / first:4.2f}x")
    print(f"  later run (reads the cache)                       {later:5.2f} s  "
          f"{off / later:4.2f}x")


def main() -> None:
    import sys

    if "--gpu-parts" in sys.argv:
        gpu_parts([a for a in sys.argv[1:] if a != "--gpu-parts"])
        return
    if "--demo" in sys.argv:
        demo_command()
        return
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=16, help="concepts per task and N")
    parser.add_argument("--width", type=int, default=128)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--output", "--out", dest="out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="bench_eval-"))
    shutil.rmtree(out / "results", ignore_errors=True)
    shutil.rmtree(out / "cache", ignore_errors=True)
    t = time.perf_counter()
    run_dir = build_suite(out, args.count)
    weights = make_model(out, args.width, args.layers)
    spec = f"open_clip:local-dir:{weights}"
    stats = json.loads((run_dir / "stats" / "build.json").read_text())
    n_items = sum(stats["benchmarks"].values())
    print(f"suite: {len(stats['benchmarks'])} benchmarks, {n_items} items "
          f"(built in {time.perf_counter() - t:.0f} s) -> {run_dir}")

    t = time.perf_counter()
    ref = reference_loop(run_dir, weights)
    t_ref = time.perf_counter() - t
    t = time.perf_counter()
    cold = harness(run_dir, spec, out / "results" / "cold", out / "cache")
    t_cold = time.perf_counter() - t
    t = time.perf_counter()
    warm = harness(run_dir, spec, out / "results" / "warm", out / "cache")
    t_warm = time.perf_counter() - t

    mismatches = [(b, ref[b], cold[b]) for b in ref if ref[b] != cold[b] or cold[b] != warm[b]]
    for b, r, c in mismatches:
        print(f"MISMATCH {b}: reference {r} harness {c}")
    assert not mismatches, "harness and reference loop disagree"
    print(f"accuracy: identical on all {len(ref)} benchmarks (and their paired subsets)")
    print(f"reference loop {t_ref:7.1f} s")
    print(f"harness cold   {t_cold:7.1f} s   speed ratio {t_ref / t_cold:5.1f}x")
    print(f"harness warm   {t_warm:7.1f} s   speed ratio {t_ref / t_warm:5.1f}x")
    name = "color-n3/minimal-confusion"  # 729 captions per item
    with tempfile.TemporaryDirectory() as tmp:
        m1 = memory_at(run_dir, spec, name, 2, Path(tmp))
        m2 = memory_at(run_dir, spec, name, 4, Path(tmp))
    print(f"peak traced memory on {name} (items repeated 2x / 4x): {m1:.1f} MiB / "
          f"{m2:.1f} MiB (ratio {m2 / m1:.2f})")


if __name__ == "__main__":
    main()

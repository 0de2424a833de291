"""`autocomp run CONFIG --dry-run`: what a run will do and roughly what it will cost.

Two estimates side by side:
- the paper's own measurements (Auto-Comp Table 18, 16 x A100, 100k concepts): captions
  0.2 h, images 8.5 h, object/background check 0.8 h, VQA 0.1 h on the ~47% of images that
  pass the object check. Its 4.9 s per image is below what an A100 can do for SD3.5-large
  at 1024 px and 28 steps (1.75 PFLOP per image: 5.6 s at 100% of bf16 peak);
- a range per GPU type from the work itself (costs.py): FLOPs per unit at the config's
  sizes and steps over the GPU's bf16 peak at a stated utilisation, memory-bound decoding
  over its bandwidth, and the CPU work that sits on the GPU's clock.
`--cost FILE` replaces both with what scripts/bench_generate.py measured on your hardware.
Embedded backends cost no GPU.
"""

from __future__ import annotations

import json
from pathlib import Path

from autocomp import costs
from autocomp.config import RunConfig
from autocomp.core import registry

GPUS, CONCEPTS = 16, 100_000
PAPER_COST = {  # GPU-seconds per unit (Auto-Comp Table 18)
    "caption": 0.2 * 3600 * GPUS / CONCEPTS,
    "image": 8.5 * 3600 * GPUS / CONCEPTS,
    "detect": 0.8 * 3600 * GPUS / CONCEPTS,
    "vqa": 0.1 * 3600 * GPUS / 47_000,
}
VQA_SHARE = 0.47  # images that reach the VQA check (paper, Table 3 average)
EMBEDDED = {"template", "procedural", "color-blobs", "pixels"}


def _model(options: dict) -> str:
    """The model(s) a backend will load (`options`: its own over its defaults)."""
    names = [str(options[k]) for k in ("model", "detector_model", "segmenter_model")
             if options.get(k)]
    return " + ".join(names) or "-"


def plan(cfg: RunConfig, cost_file: Path | None = None, processes: int | None = None,
         gpus: tuple[str, ...] = ("A100", "H100")) -> dict:
    cost, source = dict(PAPER_COST), "Auto-Comp Table 18 (A100)"
    if cost_file:
        measured = json.loads(Path(cost_file).read_text(encoding="utf-8"))
        cost.update({k: float(v) for k, v in measured.get("gpu_seconds", {}).items()})
        source = f"{cost_file} ({measured.get('device', 'measured')})"
    counts = {f"{s.task} N={n}": s.count for s in cfg.concepts for n in s.n}
    concepts = sum(counts.values())
    images = 2 * concepts
    stages = [
        ("captions", "writer", cfg.captions.writer, concepts, "caption"),
        ("images", "generator", cfg.generate.generator, images, "image"),
        ("validation: objects", "detector", cfg.validate.detector, images, "detect"),
        ("validation: attributes", "answerer", cfg.validate.answerer,
         round(images * VQA_SHARE), "vqa"),
    ]
    gpus = () if cost_file else gpus  # measured costs replace the estimate
    weights = [(n, s.count) for s in cfg.concepts for n in (s.n or (3,))]
    mean_n = sum(n * c for n, c in weights) / max(sum(c for _, c in weights), 1)
    rows = []
    for name, family, backend, units, key in stages:
        embedded = backend.name in EMBEDDED
        seconds = 0.0 if embedded else units * cost[key]
        options = {**registry.resolve(family, backend.name).defaults(), **backend.options}
        if key == "vqa":  # a generate call holds the questions of the batch's survivors
            options["batch_size"] = max(1, min(int(options.get("batch_size", 32)), round(
                cfg.validate.batch_size * VQA_SHARE * mean_n)))
        estimate = {}
        for gpu in gpus:
            best, worst = (0.0, 0.0) if embedded else costs.seconds(
                key, options, gpu, mean_n, cfg.validate.region == "masks")
            estimate[gpu] = [round(units * best / 3600, 1), round(units * worst / 3600, 1)]
        rows.append({"stage": name, "backend": backend.name, "model": _model(options),
                     "units": units, "gpu_hours": round(seconds / 3600, 2),
                     "estimate": estimate})
    procs = processes or cfg.processes
    total = sum(r["gpu_hours"] for r in rows)
    ranges = {gpu: [round(sum(r["estimate"][gpu][i] for r in rows), 1) for i in (0, 1)]
              for gpu in gpus}
    return {"name": cfg.name, "concepts": counts, "total_concepts": concepts,
            "images": images, "stages": rows, "gpu_hours": round(total, 1),
            "processes": procs, "wall_hours": round(total / max(procs, 1), 1),
            "cost_source": source, "estimate": ranges,
            "utilisation": list(costs.UTILISATION),
            "settings": {"generator": dict(cfg.generate.generator.options),
                         "writer": dict(cfg.captions.writer.options),
                         "retries": cfg.captions.retries,
                         "detector": dict(cfg.validate.detector.options),
                         "background": {"min_fraction": cfg.validate.min_fraction,
                                        "min_gray": cfg.validate.min_gray,
                                        "region": cfg.validate.region}}}


def format_plan(p: dict) -> str:
    lines = [f"Run '{p['name']}': {p['total_concepts']:,} concepts, up to {p['images']:,} "
             "images (minimal + contextual)"]
    lines += [f"  {k:<24} {v:>9,}" for k, v in p["concepts"].items()]
    gpus = list(p["estimate"])
    head = "".join(f" {gpu + ' GPU-h':>16}" for gpu in gpus)
    lines += ["", f"  {'stage':<24} {'backend':<20} {'units':>9} {'GPU-h':>8}{head}  model"]
    for r in p["stages"]:
        est = "".join(f" {_range(r['estimate'][g]):>16}" for g in gpus)
        lines.append(f"  {r['stage']:<24} {r['backend']:<20} {r['units']:>9,} "
                     f"{r['gpu_hours']:>8.2f}{est}  {r['model']}")
    lines += ["", f"Expected: {p['gpu_hours']} GPU-hours, about {p['wall_hours']} h on "
                  f"{p['processes']} process(es); cost per unit from {p['cost_source']}."]
    best, worst = p["utilisation"]
    for gpu, (low, high) in p["estimate"].items():
        lines.append(f"Estimated from the work on {gpu}: {low:,.0f}-{high:,.0f} GPU-hours, "
                     f"{low / p['processes']:,.0f}-{high / p['processes']:,.0f} h on "
                     f"{p['processes']} process(es) (compute at {worst:.0%}-{best:.0%} of bf16 "
                     "peak; decoding memory-bound; see autocomp/costs.py).")
    lines.append("then: build (benchmarks, CPU, minutes)")
    return "\n".join(lines)


def _range(pair) -> str:
    low, high = pair
    return f"{low:,.0f}-{high:,.0f}" if max(pair) >= 10 else f"{low:.1f}-{high:.1f}"

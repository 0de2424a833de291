"""`autocomp run CONFIG --dry-run`: what a run will do and roughly what it will cost.

GPU cost per unit of work, by default the paper's own measurements (Auto-Comp Table 18,
16 x A100, 100k concepts): captions 0.2 h, images 8.5 h, object/background check 0.8 h,
VQA 0.1 h on the ~47% of images that pass the object check. `--cost FILE` replaces them with
what scripts/bench_generate.py measured on your hardware. Embedded backends cost no GPU.
"""

from __future__ import annotations

import json
from pathlib import Path

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


def _model(family: str, backend) -> str:
    """The model(s) a backend will load: its options over its own defaults."""
    options = {**registry.resolve(family, backend.name).defaults(), **backend.options}
    names = [str(options[k]) for k in ("model", "detector_model", "segmenter_model")
             if options.get(k)]
    return " + ".join(names) or "-"


def plan(cfg: RunConfig, cost_file: Path | None = None, processes: int | None = None) -> dict:
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
    rows = []
    for name, family, backend, units, key in stages:
        seconds = 0.0 if backend.name in EMBEDDED else units * cost[key]
        rows.append({"stage": name, "backend": backend.name, "model": _model(family, backend),
                     "units": units, "gpu_hours": round(seconds / 3600, 2)})
    procs = processes or cfg.processes
    total = sum(r["gpu_hours"] for r in rows)
    return {"name": cfg.name, "concepts": counts, "total_concepts": concepts,
            "images": images, "stages": rows, "gpu_hours": round(total, 1),
            "processes": procs, "wall_hours": round(total / max(procs, 1), 1),
            "cost_source": source,
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
    lines += ["", f"  {'stage':<24} {'backend':<20} {'units':>9} {'GPU-h':>8}  model"]
    for r in p["stages"]:
        lines.append(f"  {r['stage']:<24} {r['backend']:<20} {r['units']:>9,} "
                     f"{r['gpu_hours']:>8.2f}  {r['model']}")
    lines += ["", f"Expected: {p['gpu_hours']} GPU-hours, about {p['wall_hours']} h on "
                  f"{p['processes']} process(es); cost per unit from {p['cost_source']}.",
              "then: build (benchmarks, CPU, minutes)"]
    return "\n".join(lines)

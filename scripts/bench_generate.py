"""Generation throughput of a run config: images per second per device and seconds per
validated sample, measured on a small slice of the run.

    python scripts/bench_generate.py CONFIG [--concepts 8] [--tiny] [--processes 1]
                                     [--cost-out cost.json]

With real weights on GPUs it runs the config's own backends. `--tiny` (the default when no
GPU is present) swaps in tiny random models built from configs (SD3, Gemma-3, GroundingDINO,
SAM2) so the wiring and the bookkeeping can be timed on a CPU; its numbers are printed
with "cpu, tiny" and say nothing about real models. `--cost-out` writes the per-unit
seconds for `autocomp run CONFIG --dry-run --cost FILE`.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

PAPER_SURVIVAL = 0.2  # validated share of images, roughly (Auto-Comp Table 3)


def tiny_config(cfg, folder: Path):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from tiny_models import tiny_backends

    from autocomp.config import Backend

    t = {k: str(v) for k, v in tiny_backends(folder).items()}
    return replace(
        cfg,
        captions=replace(cfg.captions, writer=Backend("template")),
        generate=replace(cfg.generate, generator=Backend(
            "diffusers", {"model": t["sd3"], "size": 64, "steps": 2})),
        validate=replace(cfg.validate,
                         detector=Backend("grounding-dino+sam2", {
                             "detector_model": t["dino"], "segmenter_model": t["sam2"]}),
                         answerer=Backend("transformers", {"model": t["gemma_vlm"],
                                                           "max_new_tokens": 4}))), t


def time_llm_captions(run, model: str | None, n: int) -> float | None:
    """Seconds per prompt of the transformers writer (sampling only, no check)."""
    from autocomp.captions.llm import TransformersWriter
    from autocomp.captions.prompts import contextual_prompt
    from autocomp.captions.writers import CaptionRequest
    from autocomp.core.scene import SceneGraph

    if model is None:
        return None
    concepts = run.records("concepts")[:n]
    reqs = []
    for c in concepts:
        task = run.tasks[c["task"]]
        graph = SceneGraph.from_dict(c["graph"])
        system, user = contextual_prompt(graph, task)
        reqs.append(CaptionRequest(c["id"], graph, task, c["seed"], 0, system, user))
    writer = TransformersWriter(model=model, max_new_tokens=150 if "tiny" not in model else 16)
    writer.write(reqs[:1])  # load
    start = time.perf_counter()
    writer.write(reqs)
    return (time.perf_counter() - start) / max(len(reqs), 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("config")
    parser.add_argument("--concepts", type=int, default=8, help="concepts per (task, N)")
    parser.add_argument("--tiny", action="store_true", help="tiny random models on CPU")
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--cost-out", type=Path, default=None)
    args = parser.parse_args()

    import torch
    import transformers

    transformers.utils.logging.set_verbosity_error()

    from autocomp.cli.run import config_path
    from autocomp.config import load_config
    from autocomp.pipeline import run_pipeline
    from autocomp.report.funnel import funnel
    from autocomp.run import Run

    cfg = load_config(config_path(args.config))
    cfg = replace(cfg, concepts=tuple(replace(s, count=min(s.count, args.concepts))
                                      for s in cfg.concepts))
    tiny = args.tiny or not torch.cuda.is_available()
    tmp = Path(tempfile.mkdtemp(prefix="bench_generate-"))
    llm = cfg.captions.writer.options.get("model") if cfg.captions.writer.name == \
        "transformers" else None
    if tiny:
        cfg, t = tiny_config(cfg, tmp / "models")
        llm = t["gemma_lm"] + "#tiny" if llm else None
        llm = llm.split("#")[0] if llm else None
        device = "cpu, tiny"
    else:
        device = f"{torch.cuda.get_device_name(0)} x{args.processes}"
    run = Run.create(cfg, tmp / "run")
    start = time.perf_counter()
    run_pipeline(run, args.processes, progress=False)
    wall = time.perf_counter() - start
    stats = {s: {**json.loads((run.dir / "stats" / f"{s}.json").read_text()),
                 "timing": json.loads((run.dir / "stats" / "timing" / f"{s}.json").read_text())}
             for s in ("captions", "images", "validation")}
    images = stats["images"]["done"]
    img_s = stats["images"]["timing"]["seconds"] * stats["images"]["timing"]["processes"]
    val_s = stats["validation"]["timing"]["seconds"] * stats["validation"]["timing"]["processes"]
    cap_s = time_llm_captions(run, llm, 8) if llm else 0.0
    validated = stats["validation"]["passed"]
    per_image = img_s / max(images, 1)
    per_check = val_s / max(images, 1)
    per_sample_work = 2 * per_image + 2 * per_check + (cap_s or 0.0)  # one concept, 2 images
    survival = validated / images if images else 0.0
    label = f"[{device}]"
    print(f"{label} {images} images in {img_s:.1f} device-s: "
          f"{1 / per_image:.2f} images/s per device ({per_image:.3f} s/image)")
    print(f"{label} validation {per_check:.3f} s/image; captions "
          f"{cap_s:.3f} s/prompt" if cap_s is not None else "")
    if validated:
        print(f"{label} {validated}/{images} validated: {per_sample_work / 2 / survival:.2f} "
              "device-s per validated sample")
    else:
        print(f"{label} 0/{images} validated (random tiny models validate nothing); at the "
              f"paper's ~{PAPER_SURVIVAL:.0%} survival: "
              f"{per_sample_work / 2 / PAPER_SURVIVAL:.2f} device-s per validated sample")
    rows = funnel(run.records("concepts"), run.records("captions"), run.records("validation"))
    print(f"{label} wall {wall:.1f} s for {len(run.records('concepts'))} concepts "
          f"({len(rows)} benchmarks); run directory {run.dir}")
    if args.cost_out:
        args.cost_out.write_text(json.dumps({
            "device": device, "gpu_seconds": {"caption": cap_s or 0.0, "image": per_image,
                                              "detect": per_check, "vqa": 0.0}}, indent=1))
        print(f"{label} per-unit costs -> {args.cost_out} (autocomp run CONFIG --dry-run "
              f"--cost {args.cost_out})")


if __name__ == "__main__":
    main()

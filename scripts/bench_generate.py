"""Generation throughput of a run config: images per second per device and seconds per
validated sample, measured on a small slice of the run.

    python scripts/bench_generate.py CONFIG [--concepts 8] [--tiny] [--processes 1]
                                     [--cost-out cost.json]
    python scripts/bench_generate.py --cpu-parts [CONFIG]

`--cpu-parts` times, before and after, what keeps a GPU waiting and can be measured on a
CPU: PNG encoding inline vs on writer threads (a sleep stands in for the GPU's batch),
how evenly the ranks share the images stage (dealt by parity vs by hash and track, with
per-track costs measured on CONFIG's own generator), GroundingDINO with vs without SAM2
masks, and the VQA check image by image with every question encoding the image vs a whole
batch in one call with one encoding per image (tiny models: the ratios and counts, not the
seconds, are the point).

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


def photo_like(size: int, seed: int):
    """An image that compresses like a photo (smooth shading plus sensor noise)."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:size, 0:size] / size
    base = np.stack([200 * x, 180 * y, 150 * (1 - x * y)], axis=-1)
    return Image.fromarray(np.clip(base + rng.normal(0, 12, base.shape), 0, 255)
                           .astype(np.uint8))


def time_png_writer(images: int = 16, batch: int = 4, gpu_seconds: float = 0.35) -> None:
    """The images stage's loop: a batch on the 'GPU' (a sleep), then its PNGs written."""
    from types import SimpleNamespace

    from autocomp.core.run_paths import RunPaths
    from autocomp.runtime.runner import run_stage
    from autocomp.runtime.stage import Deferred, Item, ItemStage
    from autocomp.synth.stage import PngWriter

    pictures = [photo_like(1024, k) for k in range(batch)]

    class Loop(ItemStage):
        name = "png"
        batch_size = batch

        def __init__(self, run, threads):
            super().__init__(run)
            self.writer = PngWriter(threads)

        def items(self):
            return [Item(f"i{k}") for k in range(images)]

        def process(self, items):
            time.sleep(gpu_seconds * len(items))  # the GPU's share of the batch
            writes = [self.writer.save(pictures[k % batch], self.paths.root / f"{it.id}.png")
                      for k, it in enumerate(items)]
            return Deferred([{"id": it.id} for it in items], writes)

    seconds = {}
    for threads in (0, 4):
        root = Path(tempfile.mkdtemp(prefix="bench_png-"))
        start = time.perf_counter()
        run_stage(Loop(SimpleNamespace(paths=RunPaths(root)), threads), progress=False)
        seconds[threads] = (time.perf_counter() - start) / images
    print(f"[cpu] PNG writer, 1024 px, {gpu_seconds} s/image on the 'GPU': inline "
          f"{seconds[0]:.3f} s/image -> writer threads {seconds[4]:.3f} s/image "
          f"({seconds[0] / seconds[4]:.2f}x; the GPU waits {seconds[0] - gpu_seconds:.3f} -> "
          f"{max(seconds[4] - gpu_seconds, 0):.3f} s/image)")


def time_rank_balance(config: str) -> None:
    """Per-rank seconds of the images stage of CONFIG, dealt by parity (before) and by
    hash and track (after); per-track costs measured on CONFIG's generator."""
    from autocomp.cli.run import config_path
    from autocomp.config import load_config
    from autocomp.pipeline import run_pipeline
    from autocomp.runtime.runner import shard
    from autocomp.synth.stage import ImageStage

    run_dir = Path(tempfile.mkdtemp(prefix="bench_balance-")) / "run"
    from autocomp.run import Run

    run = Run.create(load_config(config_path(config)), run_dir)
    run_pipeline(run, 1, ("concepts", "captions"), progress=False)
    stage = ImageStage(run)
    items = stage.items()
    cost = {}
    for track in ("minimal", "contextual"):
        sample = [it for it in items if it.data["track"] == track][:12]
        start = time.perf_counter()
        stage.process(sample).result()
        cost[track] = (time.perf_counter() - start) / max(len(sample), 1)

    def seconds(part):
        return sum(cost[it.data["track"]] for it in part)

    for world in (2, 4, 8):
        before = [seconds(items[r::world]) for r in range(world)]
        after = [seconds(shard(items, r, world, stratum=stage.stratum)) for r in range(world)]
        print(f"[cpu] images stage of {config}, {len(items)} images, {world} ranks: slowest "
              f"rank / mean, parity {max(before) / (sum(before) / world):.2f} -> hash and "
              f"track {max(after) / (sum(after) / world):.2f} (minimal {cost['minimal']:.3f} "
              f"s, contextual {cost['contextual']:.3f} s per image)")


def time_masks(folder: Path, repeats: int = 8) -> None:
    import numpy as np

    from autocomp.validators.grounded_sam import GroundedSam2Detector

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from tiny_models import tiny_grounding_dino, tiny_sam2

    dino, sam = tiny_grounding_dino(folder / "dino"), tiny_sam2(folder / "sam2")
    img = np.full((64, 64, 3), 255, np.uint8)
    img[10:40, 10:40] = (200, 30, 30)
    out = {}
    for masks in (True, False):
        det = GroundedSam2Detector(str(dino), str(sam), 0.0, 0.0, device="cpu", masks=masks)
        det.detect(img, ["cube", "sphere"])  # load
        start = time.perf_counter()
        for _ in range(repeats):
            det.detect(img, ["cube", "sphere"])
        out[masks] = (time.perf_counter() - start) / repeats
    print(f"[cpu, tiny] object check per image: GroundingDINO + SAM2 masks {out[True]:.4f} s "
          f"-> boxes only (the default region) {out[False]:.4f} s "
          f"({out[True] / out[False]:.2f}x)")


def time_vqa(folder: Path, images: int = 8, questions: int = 3) -> None:
    """The attribute check of a validation batch: before, one call per image and the vision
    tower once per question; now, one call for the batch and the tower once per image."""
    import contextlib

    import numpy as np

    import autocomp.models.encode_once as encode_once
    from autocomp.concepts.questions import Question
    from autocomp.validators.vqa import TransformersAnswerer

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from tiny_models import tiny_gemma_vlm

    ans = TransformersAnswerer(str(tiny_gemma_vlm(folder / "vlm")), max_new_tokens=4,
                               device="cpu")
    rows, calls = [], []
    model = ans._load()[1]
    model.base_model.vision_tower.register_forward_hook(
        lambda mod, args, kwargs, out: rows.append(
            len(kwargs["pixel_values"] if "pixel_values" in kwargs else args[0])),
        with_kwargs=True)
    model.register_forward_pre_hook(lambda mod, args, kwargs: calls.append(
        kwargs.get("pixel_values") is not None or kwargs.get("mm_encoder_outputs") is not None),
        with_kwargs=True)
    rng = np.random.default_rng(0)
    jobs = [(rng.integers(0, 255, (32, 32, 3), dtype=np.uint8),
             [Question(f"What color is object {k}?", ("red", "blue"), "red", "cube")
              for k in range(questions)], []) for _ in range(images)]
    ans.answer_many(jobs[:1])  # load and warm up
    out = {}
    for name in ("before", "after"):
        rows.clear()
        calls.clear()
        real = encode_once.encode_once
        if name == "before":
            encode_once.encode_once = lambda *a, **k: contextlib.nullcontext()
        start = time.perf_counter()
        try:
            got = ([ans.answer(img, qs) for img, qs, _ in jobs] if name == "before"
                   else ans.answer_many(jobs))
        finally:
            encode_once.encode_once = real
        out[name] = (time.perf_counter() - start, sum(rows) / images, sum(calls), got)
    same = [[a["answer"] for a in g] for g in out["before"][3]] == \
        [[a["answer"] for a in g] for g in out["after"][3]]
    print(f"[cpu, tiny] VQA check of {images} images x {questions} questions: vision tower "
          f"rows per image {out['before'][1]:.1f} -> {out['after'][1]:.1f}; prefills "
          f"{out['before'][2]} -> {out['after'][2]}; {out['before'][0] / images:.4f} -> "
          f"{out['after'][0] / images:.4f} s per image "
          f"({out['before'][0] / out['after'][0]:.2f}x); same answers: {same}")


def cpu_parts(config: str) -> None:
    import transformers

    transformers.utils.logging.set_verbosity_error()
    time_png_writer()
    time_rank_balance(config)
    time_masks(Path(tempfile.mkdtemp(prefix="bench_masks-")))
    time_vqa(Path(tempfile.mkdtemp(prefix="bench_vqa-")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    if "--cpu-parts" in sys.argv:
        rest = [a for a in sys.argv[1:] if a != "--cpu-parts"]
        cpu_parts(rest[0] if rest else "demo")
        return
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

"""`autocomp run CONFIG --dry-run`: what a run will do, what it will cost and whether each
stage fits the GPU's memory.

- Cost: the headline is estimated from the work itself (costs.py), per GPU type, on the
  launch's nodes x GPUs: FLOPs per unit at the config's sizes and steps over the GPU's
  bf16 peak at a stated utilisation, memory-bound decoding over its bandwidth plus a
  measured fixed cost per forward pass of a chat model (costs.FORWARD_OVERHEAD), and the
  CPU work that sits on the GPU's clock. The paper's own figures (Auto-Comp Table 18, 16 x
  A100) follow as a labelled comparison only: their 4.9 s per image is faster than an A100
  can run SD3.5-large at 1024 px, 28 steps, with guidance (1.74 PFLOP per image: 5.6 s at
  100% of bf16 peak). `--cost FILE` replaces the estimate with what
  scripts/bench_generate.py measured on your hardware.
- Throughput levers (run-only options) with their FLOP and memory effect.
- Memory: memory.py's per-stage peak on each GPU; a stage that does not fit is refused
  with the largest batch that does.
Embedded and served backends cost no GPU here.
"""

from __future__ import annotations

import json
from pathlib import Path

from autocomp.config import RunConfig
from autocomp.core import registry
from autocomp.core.errors import AutocompError
from autocomp.core.fields import dump_section
from autocomp.planning import costs, disk, host_memory, memory
from autocomp.planning.weights import missing_packages
from autocomp.validators.checks import cascade

GPUS, CONCEPTS = 16, 100_000  # the paper's Table 18 run
PAPER_COST = {  # GPU-seconds per unit (Auto-Comp Table 18)
    "caption": 0.2 * 3600 * GPUS / CONCEPTS,
    "image": 8.5 * 3600 * GPUS / CONCEPTS,
    "detect": 0.8 * 3600 * GPUS / CONCEPTS,
    "vqa": 0.1 * 3600 * GPUS / 47_000,
}
VQA_SHARE = 0.47  # images that reach the VQA check (paper, Table 3 average)


def _model(options: dict) -> str:
    """The model(s) a backend will load (`options`: its own over its defaults)."""
    names = [str(options[k]) for k in ("model", "detector_model", "segmenter_model")
             if options.get(k)]
    return " + ".join(names) or "-"


def read_cost(path: Path) -> tuple[dict, str]:
    """(unit -> GPU seconds, the device) of a --cost file (scripts/bench_generate.py's
    JSON: {"gpu_seconds": {unit: seconds}, "device": ...}); every problem one line naming
    the file and the field."""
    import math

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise AutocompError(f"not a readable JSON file ({type(exc).__name__})",
                            file=path) from None
    units = data.get("gpu_seconds") if isinstance(data, dict) else None
    if not isinstance(units, dict) or not units:
        raise AutocompError("field 'gpu_seconds': expected {unit: seconds per unit}",
                            file=path)
    out = {}
    for unit, value in units.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value) or not 0 <= value <= PLAUSIBLE_SECONDS:
            raise AutocompError(f"field 'gpu_seconds.{unit}': expected seconds in [0, "
                                f"{PLAUSIBLE_SECONDS:g}] (0: a stage not counted), got "
                                f"{value!r:.40}", file=path)
        out[str(unit)] = float(value)
    return out, str(data.get("device", "measured"))


PLAUSIBLE_SECONDS = 3600.0  # a unit (an image, a caption) measured above an hour is a typo


def plan(cfg: RunConfig, cost_file: Path | None = None, processes: int | None = None,
         gpus: tuple[str, ...] = ("A100-80", "H100"), nodes: int = 1,
         calibrate: Path | None = None) -> dict:
    """The plan of `cfg` on `nodes` nodes of `processes` GPUs each (default: the config's
    processes), for each GPU in memory.CARDS named in `gpus`. `cost_file`: GPU seconds per
    unit (scripts/bench_generate.py); `calibrate`: a scripts/gpu_check.py JSON, from which
    each unit is rebuilt at the config's settings (autocomp/planning/calibrate.py)."""
    for gpu in gpus:
        memory.card(gpu)  # an unknown name is one line
    paper = dict(PAPER_COST)
    measured, source, cal, notes = {}, None, None, []
    if cost_file:
        measured, device = read_cost(Path(cost_file))
        source = f"{cost_file} ({device})"
    if calibrate:
        from autocomp.planning.calibrate import Calibration

        cal = Calibration(calibrate)
        source = f"{calibrate} (scripts/gpu_check.py on {cal.device})"
    counts = {f"{s.task} N={n}": s.count for s in cfg.concepts for n in s.n}
    concepts = sum(counts.values())
    images = 2 * concepts
    generators = cfg.generate.generators()  # each draws every image (generate.compare)
    drawn = images * len(generators)
    stages = [
        ("captions", "writer", cfg.captions.writer, concepts, "caption"),
        *(("images" + (f" @{label}" if label else ""), "generator", g, images, "image")
          for label, g in generators),
        ("validation: objects", "detector", cfg.validate.detector, drawn, "detect"),
        ("validation: attributes", "answerer", cfg.validate.answerer,
         round(drawn * VQA_SHARE), "vqa"),
    ]
    weights = [(n, s.count) for s in cfg.concepts for n in (s.n or (3,))]
    mean_n = sum(n * c for n, c in weights) / max(sum(c for _, c in weights), 1)
    masks = any(c.needs_masks for c in cascade(cfg.validate.checks))
    rows, image_options, unpriced = [], {}, []
    for name, family, backend, units, key in stages:
        cost = memory.gpu_cost(family, backend)
        free = cost in ("none", "undeclared")
        if cost == "undeclared":
            where = registry.FAMILIES[family][backend.name]
            unpriced.append(f"{name}: {family} '{backend.name}' ({where}) declares no GPU "
                            "cost (its class's gpu_cost: model, served or none): counted "
                            "as 0 GPU-h, its memory not planned")
        options = {**registry.resolve(family, backend.name).defaults(), **backend.options}
        if backend.name == "vllm":
            options = served(options, cfg.captions.batch_size if key == "caption" else 256)
        if key == "vqa":  # a generate call holds the questions of the batch's survivors
            options["batch_size"] = max(1, min(int(options.get("batch_size", 32)), round(
                cfg.validate.batch_size * VQA_SHARE * mean_n)))
        if key == "image" and not image_options:  # the run's own generator's
            image_options = options
        estimate = {}
        for gpu in gpus:
            best, worst = (0.0, 0.0) if free else costs.seconds(
                key, options, memory.CARDS[gpu][1], mean_n, masks)
            estimate[gpu] = [round(units * best / 3600, 1), round(units * worst / 3600, 1)]
        if cal is not None and not free:
            measured[key], how = _calibrated(cal, key, options, mean_n, masks)
            notes.append(f"{name}: {measured[key]:.3g} s a unit x {units:,} = "
                         f"{units * measured[key] / 3600:,.1f} GPU-h, {how}")
        elif cal is not None:
            measured[key] = 0.0
        rows.append({"stage": name, "backend": backend.name, "model": _model(options),
                     "units": units, "estimate": estimate,
                     "paper_hours": 0.0 if free else round(units * paper[key] / 3600, 2),
                     "measured_hours": None if not measured else
                     0.0 if free else round(units * measured.get(key, 0.0) / 3600, 2)})
    t2i = t2i_cost(cfg, gpus, mean_n)
    writers = writer_costs(cfg, concepts, gpus)
    per_node = processes or cfg.processes
    total = per_node * nodes
    ranges = {gpu: [round(sum(r["estimate"][gpu][i] for r in rows), 1) for i in (0, 1)]
              for gpu in gpus}
    return {"name": cfg.name, "concepts": counts, "total_concepts": concepts,
            "images": images, "generators": len(generators), "stages": rows,
            "nodes": nodes, "per_node": per_node,
            "processes": total, "estimate": ranges,
            "paper_hours": round(sum(r["paper_hours"] for r in rows), 1),
            "measured": None if not measured else {
                "source": source, "hours": round(sum(r["measured_hours"] for r in rows), 1),
                "gpu": cal.gpu if cal else None, "notes": notes},
            "levers": levers(image_options, images, gpus,
                             memory.gpu_cost("generator", cfg.generate.generator) != "model"),
            "unpriced": unpriced,
            "memory": {gpu: memory.fit(cfg, memory.card(gpu)[0]) for gpu in gpus},
            "host": host_memory.plan(memory.stage_rows(cfg), per_node, None if cal is None else
                              cal.parts.get("host_memory", {}).get("new_anon_peak_gib")),
            "disk": disk.plan(cfg, concepts, drawn),
            "utilisation": list(costs.UTILISATION),
            "t2i": t2i, "writers": writers, "packages": missing_packages(cfg),
            "settings": {"generator": dict(cfg.generate.generator.options),
                         "writer": dict(cfg.captions.writer.options),
                         "retries": cfg.captions.retries,
                         "detector": dict(cfg.validate.detector.options),
                         **{name: dump_section(o)
                            for name, o in cfg.validate.checks.items()}}}


def served(options: dict, batch: int) -> dict:
    """A vllm backend's options for costs.seconds: its engine, the requests it runs at once
    and the model's KV cache bytes per token."""
    layers, kv, head, _, _ = memory.llm_shape(str(options.get("model", "")))
    return {**options, "engine": "vllm", "batch_size": batch,
            "kv_bytes": layers * 2 * kv * head * 2}


def writer_costs(cfg: RunConfig, concepts: int, gpus) -> dict:
    """The captions stage's GPU-hours on each GPU with each GPU writer (the config's LLM,
    prompts and sampling): transformers' generate at its batch, vLLM with the stage's batch
    handed at once. Empty when the config's writer runs no model here."""
    writer = cfg.captions.writer
    if memory.gpu_cost("writer", writer) != "model":
        return {}
    out = {}
    for name in ("transformers", "vllm"):
        options = {**registry.resolve("writer", name).defaults(),
                   **{k: v for k, v in writer.options.items()
                      if k in ("model", "max_new_tokens", "batch_size")}}
        if name == "vllm":
            options = served(options, cfg.captions.batch_size)
        out[name] = {"batch": int(options.get("batch_size", 16)), "hours": {
            gpu: [round(concepts * v / 3600, 1) for v in costs.seconds(
                "caption", options, memory.CARDS[gpu][1])] for gpu in gpus}}
    return out


def _calibrated(cal, key: str, options: dict, mean_n: float, masks: bool) -> tuple[float, str]:
    """(GPU seconds of one unit from the calibration, how it was had); the estimate's worst
    case on the calibrated GPU where the file lacks what the unit needs."""
    try:
        seconds, estimated = cal.seconds(key, options, mean_n, masks)
    except KeyError as exc:
        worst = costs.seconds(key, options, cal.gpu, mean_n, masks)[1]
        return worst, f"{str(exc).strip(chr(39))} not measured: the estimate's worst case"
    return seconds, "measured" + (f" (estimated: {', '.join(estimated)})" if estimated else "")


def t2i_cost(cfg: RunConfig, gpus, mean_n: float) -> dict:
    """GPU seconds per image of `autocomp t2i` with this config's generator and
    validators: the image, the detector with masks (GenEval colors), every probe of the
    image to the answerer (~2N + 1: its objects, attributes and relations), their soft
    answers (Soft-TIFA, from an answerer that gives them) and one VQAScore prompt to the
    same model; CLIPScore's encoders are small and left out."""
    parts = {}
    answerer = cfg.validate.answerer
    soft = hasattr(registry.resolve("answerer", answerer.name), "expected_probabilities")
    for key, family, backend, unit, n in (
            ("image", "generator", cfg.generate.generator, "image", 1),
            ("detect", "detector", cfg.validate.detector, "detect", 1),
            ("questions", "answerer", answerer, "vqa", 2 * mean_n + 1),
            ("soft", "answerer", answerer, "soft", 2 * mean_n + 1),
            ("vqascore", "answerer", answerer, "vqascore", 1)):
        options = {**registry.resolve(family, backend.name).defaults(), **backend.options}
        free = memory.gpu_cost(family, backend) in ("none", "undeclared") or (
            key == "soft" and not soft)
        parts[key] = {gpu: [0.0, 0.0] if free else [round(v, 3) for v in costs.seconds(
            unit, options, memory.CARDS[gpu][1], n, masks=True)] for gpu in gpus}
    total = {gpu: [round(sum(p[gpu][i] for p in parts.values()), 2) for i in (0, 1)]
             for gpu in gpus}
    return {"seconds_per_image": total, "parts": parts, "questions_per_image": 2 * mean_n + 1}


def levers(options: dict, images: int, gpus, embedded: bool) -> list[dict]:
    """The images stage's GPU-hours on each GPU with each run-only lever (None: the GPU
    cannot use it), and what it does to FLOPs and memory."""
    if embedded:
        return []
    turbo = {**options, "model": "stabilityai/stable-diffusion-3.5-large-turbo", "steps": 4,
             "guidance": 0.0}
    out = []
    for name, changed, effect in (
            ("fp8", {**options, "fp8": True},
             "linear layers in float8, attention in bf16 (an H100 measured 1.16x a compiled "
             "step, 0.71x an uncompiled one: fp8 pays only with compile); denoiser weights "
             "halved (generate.options.fp8: true; slightly different images)"),
            ("draft", turbo,
             f"stable-diffusion-3.5-large-turbo, 4 steps, no guidance: "
             f"{_ratio(turbo, options):.0%} of the FLOPs (not the paper's images)")):
        hours = {}
        for gpu in gpus:
            try:
                best, worst = costs.seconds("image", changed, memory.CARDS[gpu][1])
            except ValueError:  # no fp8 on this GPU
                hours[gpu] = None
                continue
            hours[gpu] = [round(images * best / 3600, 1), round(images * worst / 3600, 1)]
        out.append({"lever": name, "effect": effect, "hours": hours})
    on = bool(options.get("compile"))
    flipped = {gpu: [round(images * v / 3600, 1) for v in costs.seconds(
        "image", {**options, "compile": not on}, memory.CARDS[gpu][1])] for gpu in gpus}
    said = (f"{costs.COMPILE_SPEEDUP:.2f}x per denoising step as measured on an H200, 1.49x "
            "on an H100; each process first compiles for "
            f"~{costs.COMPILE_SECONDS:.0f} s")
    out.append({"lever": "eager" if on else "compile", "hours": flipped,
                "effect": f"compile is on in this config and in the plan above; "
                          f"generate.options.compile: false runs the denoiser eager ({said})"
                          if on else
                          f"FLOPs and weights unchanged; {said} (generate.options.compile: "
                          "true)"})
    return out


def _ratio(changed: dict, options: dict) -> float:
    def flops(o):
        return costs.dit_flops(2432, 38, int(o.get("size", 1024)), int(o.get("steps", 28)),
                               float(o.get("guidance", 4.5)))

    return flops(changed) / flops(options)


def format_plan(p: dict) -> str:
    drawn = p.get("generators", 1)
    lines = [f"Run '{p['name']}': {p['total_concepts']:,} concepts, up to {p['images']:,} "
             "images (minimal + contextual)" + (f" per generator, {p['images'] * drawn:,} "
                                                f"from its {drawn}" if drawn > 1 else "")]
    if p.get("packages"):  # the run refuses before its first stage until they are
        lines += ["Not installed on this machine (install them where the run goes):",
                  *[f"  {line}" for line in p["packages"]]]
    lines += [f"  {k:<24} {v:>9,}" for k, v in p["concepts"].items()]
    gpus = list(p["estimate"])
    head = "".join(f" {gpu + ' GPU-h':>16}" for gpu in gpus)
    lines += ["", f"  {'stage':<24} {'backend':<20} {'units':>9}{head} {'paper GPU-h':>12}"
                  "  model"]
    for r in p["stages"]:
        est = "".join(f" {_range(r['estimate'][g]):>16}" for g in gpus)
        lines.append(f"  {r['stage']:<24} {r['backend']:<20} {r['units']:>9,}{est} "
                     f"{r['paper_hours']:>12.2f}  {r['model']}")
    lines += [f"  Not priced: {u}" for u in p.get("unpriced", [])]
    where = (f"{p['processes']} GPU(s) ({p['nodes']} node(s) x {p['per_node']})")
    best, worst = p["utilisation"]
    lines.append("")
    if p["measured"]:
        m = p["measured"]
        what = (f"calibrated on {m['gpu']} from" if m.get("gpu") else "measured per unit in")
        lines.append(f"Expected ({what} {m['source']}): {m['hours']:,} GPU-hours, "
                     f"about {m['hours'] / p['processes']:,.1f} h on {where}.")
        lines += [f"  {note}" for note in m.get("notes", [])]
        others = [g for g in p["estimate"] if g != m.get("gpu")]
        if m.get("gpu") and others:  # two headlines, two cards: say so
            lines.append(f"  (measured on {m['gpu']}; {', '.join(others)} below is estimated "
                         f"only, a different card: calibrate on it with scripts/gpu_check.py "
                         "there)")
    if not p["paper_hours"] and not any(high for _, high in p["estimate"].values()):
        lines.append("No GPU work: every backend is embedded (CPU)." if not p.get("unpriced")
                     else "No GPU work priced: every other backend runs on the CPU.")
        lines += [disk.format_plan(p["disk"]), "then: build (benchmarks, CPU, minutes)"]
        return "\n".join(lines)
    for gpu, (low, high) in p["estimate"].items():
        lines.append(f"{'Estimated' if p['measured'] else 'Expected'} on {gpu}: "
                     f"{low:,.0f}-{high:,.0f} GPU-hours, {low / p['processes']:,.0f}-"
                     f"{high / p['processes']:,.0f} h on {where} (compute at {worst:.0%}-"
                     f"{best:.0%} of bf16 peak, decoding memory-bound + "
                     f"{1000 * costs.FORWARD_OVERHEAD:.0f} ms a forward pass; "
                     "autocomp/planning/costs.py).")
    lines.append(f"Paper, for comparison only (Auto-Comp Table 18, 16 x A100): "
                 f"{p['paper_hours']:,} GPU-hours; its 4.9 s per image is above the A100's "
                 "bf16 peak for SD3.5-large at 1024 px, 28 steps, guidance 4.5 (1.74 PFLOP: "
                 "5.6 s at 100%).")
    t2i = p.get("t2i")
    if t2i and any(high for _, high in t2i["seconds_per_image"].values()):
        lines.append("autocomp t2i with this generator and these validators, per image "
                     f"(the image, detection with masks, ~{t2i['questions_per_image']:.0f} "
                     "questions and their soft answers, one VQAScore prompt): " + "; ".join(
                         f"{gpu} {low:.1f}-{high:.1f} s"
                         for gpu, (low, high) in t2i["seconds_per_image"].items()) + ".")
    if p.get("writers"):
        lines += ["", "The captions stage by writer (same model, prompts and sampling; GPU-h, "
                      "one attempt per concept):"]
        for name, cost in p["writers"].items():
            how = (f"generate {cost['batch']} prompts at a time (options.batch_size), a step "
                   f"{1000 * (costs.FORWARD_OVERHEAD + costs.SAMPLER_STEP):.0f} ms + the "
                   "weights' read (measured)" if name == "transformers" else
                   f"{cost['batch']} requests at once (captions.batch_size), a step "
                   f"{1000 * costs.VLLM_STEP_OVERHEAD:.0f} ms + the weights' and KV cache's "
                   "read (estimated)")
            lines.append(f"  {name:<13} " + "; ".join(f"{g} {_range(h)}" for g, h in
                                                     cost["hours"].items()) + f": {how}")
    if p["levers"]:
        lines += ["", "Throughput levers for the images stage (run-only options; its GPU-hours "
                      "on " + ", ".join(gpus) + "):"]
        for lever in p["levers"]:
            cost = "; ".join(f"{g} {_range(h) if h else 'n/a (no fp8)'}"
                             for g, h in lever["hours"].items())
            lines.append(f"  {lever['lever']:<8} {cost + ': ' if cost else ''}{lever['effect']}")
    for gpu, rows in p["memory"].items():
        gib = memory.card(gpu)[0]
        lines += ["", *memory.format_rows(rows, gpu, gib)]
        lines += [f"  REFUSED: {line}" for line in memory.refusals(rows, gpu, gib)]
    if p["host"]["page_cache"]:
        lines += ["", *host_memory.format_plan(p["host"])]
    lines += ["", disk.format_plan(p["disk"])]
    lines.append("then: build (benchmarks, CPU, minutes)")
    return "\n".join(lines)


def refused(p: dict) -> list[str]:
    """Every stage that does not fit a GPU of the plan, one line each."""
    return [line for gpu, rows in p["memory"].items()
            for line in memory.refusals(rows, gpu, memory.card(gpu)[0])]


def _range(pair) -> str:
    low, high = pair
    return f"{low:,.0f}-{high:,.0f}" if max(pair) >= 10 else f"{low:.1f}-{high:.1f}"

"""`autocomp run CONFIG --dry-run --calibrate FILE`: GPU seconds per unit of work from what
scripts/gpu_check.py measured on one GPU (its JSON), in place of costs.py's estimates.

Each unit is built from the measured components at the config's own settings:
- image: the denoiser's measured step, per image (the batch under guidance), times the
  config's steps, scaled by FLOPs when its size or guidance differ from the measured 1024
  px and guidance; the compiled step when `compile: true` and one was measured; plus the
  three text encoders (prompt and negative prompt) and the VAE decoding one image;
- caption: the prefill rate per prompt token times 450 tokens, plus `max_new_tokens`
  decoding steps with the sampler shared by the config's batch (a step costs about the
  same at any batch this size: launches and the weights' read dominate); a `vllm` writer
  or answerer from gpu_check's vLLM figures (gemma3_12b_vllm: its step at 256 requests),
  never from transformers' step (without them, the estimate, said so);
- detect: GroundingDINO per image, SAM2 per image when a check reads masks, plus reading
  and decoding the PNG (costs.DECODE_PNG, on the CPU, on the GPU's clock);
- vqa and vqascore: the LLM's measured prefill rate and step (greedy: no sampler) over
  each question's tokens; the vision tower is not measured and stays estimated
  (costs.VISION_TOWER at costs.UTILISATION's worst share).
Only the measured GPU type is calibrated; the dry-run says which estimates it replaced.
compare(report) sets a gpu_check report's times and memory beside what the plan expects of
them (the lines scripts/gpu_check.py prints; OVER PLAN where one is above the worst case).
"""

from __future__ import annotations

import json
from pathlib import Path

from autocomp.core.errors import AutocompError
from autocomp.planning import costs

MEASURED_SIZE, MEASURED_STEPS, MEASURED_GUIDANCE = 1024, 28, 4.5  # gpu_check's settings


def gpu_type(name: str) -> str | None:
    """The cost plan's GPU type of a device name ("NVIDIA H100 80GB HBM3" -> H100)."""
    return next((g for g in costs.GPUS if g in str(name).upper()), None)


class Calibration:
    """The measured components of one gpu_check JSON, and the GPU they ran on."""

    def __init__(self, path: Path):
        self.path = Path(path)
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise AutocompError(f"{path}: not a readable gpu_check JSON ({exc})") from None
        if not isinstance(data, dict) or not isinstance(data.get("components"), dict):
            raise AutocompError(f"{path}: field components: missing (write the file with "
                                "scripts/gpu_check.py --out FILE)")
        if data.get("tiny"):
            raise AutocompError(f"{path}: field tiny: true (tiny configurations on the CPU "
                                "say nothing about a GPU; run scripts/gpu_check.py on one)")
        self.device = str(data.get("device", ""))
        self.gpu = gpu_type(self.device)
        if self.gpu is None:
            raise AutocompError(f"{path}: field device: '{self.device}' is none of the GPU "
                                f"types the plan knows ({', '.join(costs.GPUS)})")
        self.parts = {k: v for k, v in data["components"].items()
                      if isinstance(v, dict) and "error" not in v}

    def _get(self, component: str, key: str) -> float:
        """A measured number: KeyError where the file lacks it (the plan estimates it); one
        line naming the file and field where it is there but no positive, finite, plausible
        number (batch 0 divided by zero, "4" was a TypeError, NaN printed "nan GPU-hours")."""
        import math

        part = self.parts.get(component, {})
        if key not in part:
            raise KeyError(f"{component}.{key}")
        value, most = part[key], (1e6 if "batch" in key or "tokens" in key else 3600.0)
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value) or not 0 < value <= most:
            raise AutocompError(f"{self.path}: field components.{component}.{key}: expected a "
                                f"number in (0, {most:g}], got {value!r:.40}")
        return float(value)

    def seconds(self, unit: str, options: dict, mean_n: float = 2.0,
                masks: bool = False) -> tuple[float, list[str]]:
        """(GPU seconds of one unit, what was estimated rather than measured). KeyError
        names the component the unit needs that the file lacks or measured on another
        model."""
        self._same_model(unit, options)
        if unit == "image":
            return self._image(options), []
        if unit == "detect":
            s = self._get("grounding_dino", "s_per_image") + costs.DECODE_PNG
            return s + (self._get("sam2", "s_per_image") if masks else 0.0), []
        if "gemma3_12b" not in self.parts:
            raise KeyError("gemma3_12b")
        if options.get("engine") == "vllm":  # transformers' step says nothing of vLLM's
            if "step_s" not in self.parts.get("gemma3_12b_vllm", {}):
                raise KeyError("gemma3_12b_vllm (vLLM's decoding)")
            return self._served(unit, options, mean_n)
        prefill = self._prefill_per_token()
        step = self._get("gemma3_12b", "step_s_after")
        batch = int(options.get("batch_size", 16))
        if unit == "caption":
            return (prefill * 450 + step * int(options.get("max_new_tokens", 150)) / batch,
                    [])
        greedy = max(step - costs.SAMPLER_STEP, 0.0)
        peak = costs.GPUS[self.gpu][0]
        tower = costs.VISION_TOWER / (peak * costs.UTILISATION[1])
        if unit == "vqa":
            tokens = mean_n * (costs.IMAGE_TOKENS + 40)
            decode = greedy * int(options.get("max_new_tokens", 12)) * mean_n / batch
            return tower + prefill * tokens + decode, ["vision tower"]
        if unit == "vqascore":
            return tower + prefill * (costs.IMAGE_TOKENS + 60) + greedy, ["vision tower"]
        raise ValueError(f"unknown unit {unit!r}")

    def _served(self, unit: str, options: dict, mean_n: float) -> tuple[float, list[str]]:
        """A unit through vLLM from gpu_check's gemma3_12b_vllm: its prefill rate and its
        step at the captions batch it ran (256 requests at once), the vision tower
        estimated as for transformers."""
        lm = self.parts["gemma3_12b_vllm"]
        big = "step_s_batch256" in lm
        step = self._get("gemma3_12b_vllm", "step_s_batch256" if big else "step_s")
        batch = self._get("gemma3_12b_vllm", "batch") if "batch" in lm else 32
        tokens = self._get("gemma3_12b_vllm", "prompt_tokens") if "prompt_tokens" in lm else 450
        ran = 256 if big else int(batch)
        # the measured call at 32 prompts is their prefill and one step at that batch
        prefill = max(self._get("gemma3_12b_vllm", "prefill_s")
                      - self._get("gemma3_12b_vllm", "step_s"), 0.0) / (batch * tokens)
        if unit == "caption":
            return prefill * 450 + step * int(options.get("max_new_tokens", 150)) / ran, []
        tower = costs.VISION_TOWER / (costs.GPUS[self.gpu][0] * costs.UTILISATION[1])
        if unit == "vqa":
            decode = step * int(options.get("max_new_tokens", 12)) * mean_n / ran
            return tower + prefill * mean_n * (costs.IMAGE_TOKENS + 40) + decode, [
                "vision tower"]
        return tower + prefill * (costs.IMAGE_TOKENS + 60) + step, ["vision tower"]

    @staticmethod
    def _same_model(unit: str, options: dict) -> None:
        """KeyError when the config's model is not the architecture gpu_check measured."""
        model = str(options.get("model", "")).lower()
        if unit == "image" and "stable-diffusion-3.5-large" not in model:
            raise KeyError(f"sd35_transformer (measured SD3.5-large; the config has {model})")
        if unit in ("caption", "vqa", "vqascore") and costs.llm_params(model) != 12e9:
            raise KeyError(f"gemma3_12b (measured a 12B model; the config has {model})")

    def _prefill_per_token(self) -> float:
        tokens = self._get("gemma3_12b", "batch") * self._get("gemma3_12b", "prompt_tokens")
        # the measured call is the prefill and one decoding step
        return max(self._get("gemma3_12b", "prefill_s_after")
                   - self._get("gemma3_12b", "step_s_after"), 0.0) / tokens

    def _image(self, options: dict) -> float:
        batch = self._get("sd35_transformer", "batch_images")
        # fp8 steps come from gpu_check's sd35_fp8 part, at the same batch
        steps_measured = {**self.parts.get("sd35_transformer", {}),
                          **{k: v for k, v in self.parts.get("sd35_fp8", {}).items()
                             if k.startswith("step_s_fp8")}}
        key = step_key(options, steps_measured)
        steps = int(options.get("steps", 28))
        size, guidance = int(options.get("size", 1024)), float(options.get("guidance", 4.5))
        dit = costs.DITS["stable-diffusion-3.5-large"]  # only it is measured (see above)
        scale = (costs.dit_flops(dit.width, dit.blocks, size, 1, guidance)
                 / costs.dit_flops(dit.width, dit.blocks, MEASURED_SIZE, 1, MEASURED_GUIDANCE))
        step = self._get("sd35_fp8" if key.startswith("step_s_fp8") else "sd35_transformer",
                         key)
        denoise = step / batch * steps * scale
        encoders = 2 * sum(self._get(c, "forward_s") / self._get(c, "batch")
                           for c in ("t5_xxl", "clip_l", "clip_g"))
        return denoise + encoders + self._get("vae_decode", "decode_s_per_image")


def step_key(options: dict, measured: dict) -> str:
    """The sd35_transformer figure a config's denoiser is costed with: the fp8 step only
    where fp8 was measured (KeyError otherwise: the bf16 step says nothing of fp8), the
    compiled one when `compile` is on and it was measured."""
    base = "step_s_fp8" if options.get("fp8") else "step_s"
    if options.get("fp8") and base not in measured:
        raise KeyError("sd35_transformer.step_s_fp8 (fp8 was not measured on this GPU)")
    compiled = f"{base}_compiled"
    return compiled if options.get("compile") and compiled in measured else base


# -- a gpu_check report beside the plan (scripts/gpu_check.py prints these lines) ------
def planned(gpu: str, prompts: int = 32) -> dict:
    """What autocomp's cost plan (autocomp/planning/costs.py) expects of each number
    scripts/gpu_check.py measures on `gpu` (A100, H100, H200, L40S), the captions writer's
    prefill at `prompts` prompts: component -> key -> (best, worst) seconds."""
    peak, bandwidth = costs.GPUS[gpu]
    params = costs.llm_params("gemma-3-12b")

    def compute(flops, shares=costs.UTILISATION):
        return tuple(flops / (peak * u) for u in shares)

    step = (2 * params / (bandwidth * costs.BANDWIDTH_SHARE) + costs.FORWARD_OVERHEAD
            + costs.SAMPLER_STEP)
    prefill = compute(2 * params * 450 * prompts)
    return {"sd35_transformer": {"s_per_image_28_steps": costs.seconds("image", {}, gpu)},
            # a point estimate: over the plan means 25% over it
            "gemma3_12b": {"step_s_after": (step, 1.25 * step),
                           "prefill_s_after": (prefill[0] + step, prefill[1] + step)},
            "grounding_dino": {"s_per_image": compute(costs.DINO_TINY,
                                                      costs.DETECT_UTILISATION)},
            # gpu_check before issue 66 ran GroundingDINO at 800 x 1333
            "grounding_dino_1333": {"s_per_image": compute(costs.DINO_TINY_1333,
                                                           costs.DETECT_UTILISATION)},
            "sam2": {"s_per_image": compute(costs.SAM2_LARGE, costs.DETECT_UTILISATION)}}


def planned_memory(report: dict) -> dict:
    """GPU memory autocomp's plan (autocomp/planning/memory.py) expects of each measured call:
    label -> (component, the report's key of max_memory_allocated, low GiB, high GiB), the
    weights counted from the built model and the activations at the batch (and size) the
    call ran at."""
    from autocomp.planning import memory

    gib = 2 ** 30
    parts = report["components"]
    out = {}

    def weights(name):
        return parts[name]["parameters"] * 2 / gib  # bf16

    def add(label, name, acts, key="max_allocated_gib"):
        if "parameters" in parts.get(name, {}) and key in parts[name]:
            out[label] = (name, key, *(weights(name) + a for a in acts))

    if "batch_images" in parts.get("sd35_transformer", {}):
        batch = parts["sd35_transformer"]["batch_images"]
        add("sd35_transformer", "sd35_transformer", memory.images({}, batch)["denoise"])
    vae = parts.get("vae_decode", {})
    batches = sorted(int(k.rsplit("_b", 1)[1]) for k in vae if k.startswith("max_allocated_gib_b"))
    for n in batches:  # n images decoded at once: slicing off (n = 1: autocomp's default)
        add(f"vae_decode (batch {n})", "vae_decode",
            memory.images({"vae_slicing": n == 1}, n)["decode"], f"max_allocated_gib_b{n}")
    if not batches:  # gpu_check before issue 66: one image
        add("vae_decode", "vae_decode", memory.images({}, 1)["decode"])
    lm = parts.get("gemma3_12b", {})
    if "batch" in lm:
        new = 17  # gpu_check's longest call: 16 tokens after the first
        add("gemma3_12b", "gemma3_12b", memory.llm({"model": "google/gemma-3-12b-it"},
                                                   lm["batch"], lm["prompt_tokens"], new)[1])
    dino = parts.get("grounding_dino", {})
    if "batch" in dino:  # the plan's figure is for the validator's square 800 px image
        pixels = 1.0 if dino.get("size") == [800, 800] else 1333 / 800
        add("grounding_dino", "grounding_dino",
            [dino["batch"] * d * pixels for d in memory.DETECT])
    if "sam2" in parts:  # its peak: the batched call
        batch = parts["sam2"].get("batch", 1)
        add("sam2", "sam2", [batch * d for d in memory.SEGMENT])
    return out


def compare(report: dict) -> list[str]:
    """A line per planned number, measured beside the plan; "OVER PLAN" where a measured
    time is above the plan's worst case. Adds them to the report under "plan"."""
    gpu = gpu_type(report["device"])
    if gpu is None or report.get("tiny"):
        return []
    lines, report["plan"] = [], {"gpu": gpu, "over": []}
    prompts = int(report["components"].get("gemma3_12b", {}).get("batch", 32))
    dino = report["components"].get("grounding_dino", {})
    square = dino.get("size") == [800, 800]  # gpu_check before issue 66: 800 x 1333
    for name, keys in planned(gpu, prompts).items():
        if name.startswith("grounding_dino") and square != (name == "grounding_dino"):
            continue
        got = report["components"].get(name.removesuffix("_1333"), {})
        for key, (best, worst) in keys.items():
            if key not in got:
                continue
            over = got[key] > worst
            verdict = "OVER PLAN" if over else ("faster than planned" if got[key] < best
                                                else "within plan")
            if over:
                report["plan"]["over"].append(f"{name}.{key}")
            lines.append(f"{name}.{key}: measured {got[key]:.4g} s, plan {best:.4g}-"
                         f"{worst:.4g} s on {gpu}: {verdict}")
    for label, (name, key, low, high) in planned_memory(report).items():
        got = report["components"][name]
        used, held = got[key], got.get(key.replace("allocated", "reserved"), 0.0)
        over = used > high
        verdict = "OVER PLAN" if over else ("below the plan" if used < low else "within plan")
        if over:
            report["plan"]["over"].append(f"{label}.memory")
        slack = (f"; reserved {held:.1f} GiB is {held - high:.1f} GiB above the plan's high "
                 "(allocator slack: the plan leaves 5% of the card)" if held > high else "")
        reserved = f" (reserved {held:.1f})" if held else ""
        lines.append(f"{label}.memory: allocated {used:.1f} GiB{reserved}, plan "
                     f"{low:.1f}-{high:.1f} GiB: {verdict}{slack}")
    return lines

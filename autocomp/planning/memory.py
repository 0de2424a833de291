"""GPU memory per stage, planned before anything loads: what each process holds at its peak
in each stage (the stages release their models when they end, so stages never add up).

peak = weights + the largest activations of one step, in GiB, as a (low, high) range:
- weights: parameters x bytes of the loaded dtype. Parameters are counted from the model's
  own safetensors headers when its folder (or its Hugging Face cache snapshot) is here,
  else taken from KNOWN (the model cards' counts);
- SD3.5 denoising: every joint block's live tensors (residual stream, norm, q/k/v,
  attention out, the MLP's 4x-wide hidden and its activation: 6-10 widths per token) for
  2 x batch sequences under guidance (attention is SDPA: no tokens^2 matrix);
- VAE decode, per image decoded at once: the 256-channel map upsampled to full size and
  its neighbours (3-5.5 such maps), plus the float32 image; one image at a time with
  vae_slicing, one tile of vae_tile px with vae_tiling;
- LLM generation (captions, VQA): the KV cache of the batch (prompt + new tokens) plus
  the prefill's MLP activations; the VQA vision tower on the batch's distinct images;
- GroundingDINO and SAM2: their largest feature maps per image (DETECT, SEGMENT).
A stage fits a card when its high estimate fits in the card's memory less the CUDA
context (CONTEXT) and 5% left to the allocator (HEADROOM). docs/pipeline.md has the
arithmetic for configs/autocomp-cp.yaml.
"""

from __future__ import annotations

import functools
import json
import math
import struct
from pathlib import Path

GIB = 2 ** 30
# memory as nvidia-smi reports it (MiB), and the card's type in costs.py
CARDS = {"A100-40": (40960, "A100"), "A100-80": (81920, "A100"), "H100": (81559, "H100"),
         "H200": (143771, "H200"), "L40S": (46068, "L40S")}
CONTEXT = 0.8  # GiB: CUDA context, cuBLAS/cuDNN workspaces (outside PyTorch's allocator)
HEADROOM = 0.05  # of the card, left free for the caching allocator's fragmentation
SD3_ENCODERS = {"text_encoder": 0.124e9, "text_encoder_2": 0.695e9, "text_encoder_3": 4.762e9,
                "vae": 0.084e9}
KNOWN = {  # parameters per component, from the model cards (used when no weights are here)
    "stable-diffusion-3.5-large": {"transformer": 8.06e9, **SD3_ENCODERS},
    "stable-diffusion-3.5-medium": {"transformer": 2.47e9, **SD3_ENCODERS},
    # FLUX.1-dev / -schnell: 11.90e9 counted on the released transformer's architecture
    # (tests/test_flops.py); CLIP-L and T5-XXL's encoder as SD3's first and third
    "flux.1": {"transformer": 11.90e9, "text_encoder": 0.124e9, "text_encoder_2": 4.762e9,
               "vae": 0.084e9},
    "gemma-3-27b": {"model": 27.43e9}, "gemma-3-12b": {"model": 12.19e9},
    "gemma-3-4b": {"model": 4.30e9},
    "grounding-dino-tiny": {"model": 0.172e9}, "grounding-dino-base": {"model": 0.233e9},
    "sam2.1-hiera-large": {"model": 0.224e9}, "sam2.1-hiera-base-plus": {"model": 0.081e9},
    "sam2.1-hiera-small": {"model": 0.046e9}, "sam2.1-hiera-tiny": {"model": 0.039e9},
}
# chat LLMs: layers, KV heads, head width, hidden width, MLP width
LLM_DIMENSIONS = {"gemma-3-27b": (62, 16, 128, 5376, 21504),
                  "gemma-3-12b": (48, 8, 256, 3840, 15360),
                  "gemma-3-4b": (34, 4, 256, 2560, 10240)}
VAE_CHANNELS = (128, 256, 512, 512)  # SD3's VAE decoder, full size first
# Activation factors, each range around what scripts/gpu_check.py measured on an H200 in
# bf16 (max_memory_allocated less the weights; docs/pipeline.md has the table):
DECODE_MAPS = (3.0, 5.5)  # full-size maps of the widest channels live at the decode's peak
#                           (measured 4.8: 2.41 GiB decoding one 1024 px image)
BLOCK_WIDTHS = (14.0, 20.0)  # widths per token live inside a joint block (measured 16.7:
#                              2.68 GiB for 8 sequences of 4,429 tokens at width 2,432)
DETECT = (0.36, 0.6)  # GiB per image, GroundingDINO (Swin-T) at the validator's square 800 px
#                       (measured 0.41 on an H100; 0.69 at 800 x 1333, 1.67x the pixels)
SEGMENT = (0.25, 0.6)  # GiB per image, SAM2 Hiera-L at 1024 px, one image at a time
#                        (measured 0.29)
PREFILL_WIDTHS = (3.0, 5.0)  # MLP widths per prompt token live at an LLM's prefill
#                             (measured 3.9 beyond the KV cache, Gemma-3-12B, 32 x 450)
VISION = (4096, 4304, (2.0, 4.0))  # Gemma-3's SigLIP: patches, MLP width, live widths
PROMPT, VQA_PROMPT, IMAGE_TOKENS = 450, 40, 256


def card(name: str) -> tuple[float, str]:
    """(GiB usable by a stage, the GPU type) of a card in CARDS."""
    from autocomp.core.errors import AutocompError

    if name not in CARDS:
        raise AutocompError(f"unknown GPU '{name}' (known: {', '.join(CARDS)})")
    mib, gpu = CARDS[name]
    return usable(mib / 1024), gpu


def usable(total_gib: float) -> float:
    return total_gib * (1 - HEADROOM) - CONTEXT


def _bytes(dtype: str) -> int:
    return {"float32": 4, "float8": 1}.get(dtype, 2)


# -- parameters --------------------------------------------------------------------------
def folder_of(ref: str) -> Path | None:
    """The model's folder: a local path, or its snapshot in the Hugging Face cache (never
    downloaded)."""
    if Path(ref).is_dir():
        return Path(ref)
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(ref, local_files_only=True))
    except Exception:  # not cached, not a repo id, or huggingface_hub missing
        return None


def counted(folder: Path) -> dict[str, float]:
    """Parameters per component (a diffusers pipeline's subfolder, else "model"), read from
    the safetensors headers (8-byte length, then JSON: dtype, shape, offsets)."""
    out: dict[str, float] = {}
    for path in sorted(folder.rglob("*.safetensors")):
        with open(path, "rb") as fh:
            (size,) = struct.unpack("<Q", fh.read(8))
            header = json.loads(fh.read(size))
        rel = path.relative_to(folder).parts
        part = rel[0] if len(rel) > 1 else "model"
        out[part] = out.get(part, 0.0) + sum(math.prod(v["shape"]) for k, v in header.items()
                                             if k != "__metadata__")
    return out


@functools.lru_cache(maxsize=64)  # the batch search asks again for every candidate
def params(ref: str) -> tuple[dict[str, float], str]:
    """(parameters per component, where the count comes from); read once per process."""
    folder = folder_of(ref)
    if folder is not None:
        found = counted(folder)
        if found:
            return found, "its weights"
    key = _known(ref, KNOWN)
    if key is None:
        return {}, "unknown"
    return dict(KNOWN[key]), "model card"


def _known(ref: str, table: dict) -> str | None:
    name = str(ref).lower()
    hits = [k for k in table if k in name]
    return max(hits, key=len) if hits else None


@functools.lru_cache(maxsize=64)
def _config(ref: str, sub: str = "") -> dict:
    folder = folder_of(ref)
    path = folder / sub / "config.json" if folder else None
    if path is None or not path.is_file():
        return {}
    cfg = json.loads(path.read_text(encoding="utf-8"))
    return cfg.get("text_config") or cfg


def llm_shape(ref: str) -> tuple[int, int, int, int, int]:
    """(layers, KV heads, head width, hidden width, MLP width) from the model's config, else
    LLM_DIMENSIONS, else Gemma-3-12b's."""
    cfg = _config(ref)
    if cfg.get("num_hidden_layers"):
        heads = cfg.get("num_attention_heads", 1)
        hidden = cfg.get("hidden_size", 0)
        return (cfg["num_hidden_layers"], cfg.get("num_key_value_heads") or heads,
                cfg.get("head_dim") or hidden // heads, hidden,
                cfg.get("intermediate_size", 4 * hidden))
    return LLM_DIMENSIONS[_known(ref, LLM_DIMENSIONS) or "gemma-3-12b"]


# -- stages ------------------------------------------------------------------------------
def _weights(parts: dict[str, float], dtype: str, skip=(), fp8: tuple = ()) -> float:
    return sum(n * (1 if k in fp8 else _bytes(dtype)) for k, n in parts.items()
               if k not in skip) / GIB


def images(options: dict, batch: int) -> dict:
    """SD3.5 through diffusers at `batch` images per call."""
    from autocomp.planning.costs import dit_of

    model = str(options.get("model", "stabilityai/stable-diffusion-3.5-large"))
    parts, source = params(model)
    skip = ("text_encoder_3",) if options.get("drop_t5") else ()
    fp8 = ("transformer",) if options.get("fp8") else ()
    dtype = options.get("dtype", "auto")
    weights = _weights(parts, dtype, skip, fp8)
    if options.get("cpu_offload"):  # model offload: one component on the GPU at a time
        weights = max((_weights({k: v}, dtype, fp8=fp8) for k, v in parts.items()
                       if k not in skip), default=0.0)
    cfg, dit = _config(model, "transformer"), dit_of(model)
    if cfg.get("num_layers"):
        width = cfg["num_attention_heads"] * cfg["attention_head_dim"]
    else:
        width = dit.width
    size = int(options.get("size", 1024))
    tokens = (size // 16) ** 2 + dit.text_tokens
    passes = 2 if dit.cfg and float(options.get("guidance", 4.5)) > 1 else 1
    per = _bytes(dtype)
    denoise = [passes * batch * tokens * width * per * k / GIB for k in BLOCK_WIDTHS]
    channels = _config(model, "vae").get("block_out_channels") or VAE_CHANNELS
    side = int(options.get("vae_tile", 512)) if options.get("vae_tiling") else size
    at_once = 1 if options.get("vae_slicing", True) else batch
    widest = max(channels[:2]) * side ** 2 * per  # upsampled into the full-size block
    out_image = batch * 3 * size ** 2 * 4
    decode = [(at_once * widest * k + out_image) / GIB for k in DECODE_MAPS]
    acts = [max(d, v) for d, v in zip(denoise, decode, strict=True)]
    levers = [lever for lever, on in (("generate.options.vae_slicing: true", at_once == 1),
                                      ("vae_tiling: true", side != size)) if not on]
    return {"weights": weights, "activations": acts, "source": source, "levers": levers,
            "denoise": denoise, "decode": decode,
            "what": f"denoise {_range(denoise)}, VAE decode {_range(decode)} "
                    f"({at_once} image(s) at once{', tiled' if side != size else ''})"}


def llm(options: dict, batch: int, prompt: int, new: int) -> tuple[float, list[float], str]:
    """(weights, activations, source) of a chat LLM generating for `batch` prompts."""
    model = str(options.get("model", "google/gemma-3-12b-it"))
    parts, source = params(model)
    per = _bytes(options.get("dtype", "auto"))
    layers, kv, head, _hidden, mlp = llm_shape(model)
    cache = batch * (prompt + new) * layers * 2 * kv * head * per
    prefill = [batch * prompt * mlp * per * k for k in PREFILL_WIDTHS]
    return _weights(parts, options.get("dtype", "auto")), [(cache + p) / GIB for p in
                                                            prefill], source


def captions(options: dict) -> dict:
    batch = int(options.get("batch_size", 16))
    weights, acts, source = llm(options, batch, PROMPT, int(options.get("max_new_tokens",
                                                                         150)))
    return {"weights": weights, "activations": acts, "source": source,
            "what": f"KV cache and prefill of {batch} prompts"}


def validation(detector: dict | None, answerer: dict | None, batch: int,
               masks: bool) -> dict:
    """Both models of the cascade stay loaded for the stage (a batch goes through both)."""
    weights, detect, sources = 0.0, [0.0, 0.0], []
    if detector is not None:
        dtype = detector.get("dtype", "auto")
        for key, default, on in (("detector_model", "grounding-dino-tiny", True),
                                 ("segmenter_model", "sam2.1-hiera-large", masks)):
            if on:
                parts, src = params(str(detector.get(key, default)))
                weights += _weights(parts, dtype)
                sources.append(src)
        detect = [batch * d + (s if masks else 0.0) for d, s in zip(DETECT, SEGMENT,
                                                                      strict=True)]
    vqa = [0.0, 0.0]
    if answerer is not None:
        questions = int(answerer.get("batch_size", 32))
        w, vqa, src = llm(answerer, questions, IMAGE_TOKENS + VQA_PROMPT,
                          int(answerer.get("max_new_tokens", 12)))
        patches, width, live = VISION
        per = _bytes(answerer.get("dtype", "auto"))
        tower = [min(batch, questions) * patches * width * per * k / GIB for k in live]
        vqa = [v + t for v, t in zip(vqa, tower, strict=True)]
        weights += w
        sources.append(src)
    acts = [max(a, b) for a, b in zip(detect, vqa, strict=True)]
    source = "its weights" if sources and all(s == "its weights" for s in sources) else (
        "model card" if "unknown" not in sources else "unknown")
    return {"weights": weights, "activations": acts, "source": source,
            "what": f"detection {_range(detect)} (batch {batch}), VQA {_range(vqa)}"}


def _range(pair) -> str:
    return f"{pair[0]:.1f}-{pair[1]:.1f} GiB"


# -- the plan ----------------------------------------------------------------------------
def gpu_cost(family: str, backend) -> str:
    """What the backend's class declares (core/backend.Backend.gpu_cost: "model",
    "served", "none"), or "undeclared"."""
    from autocomp.core import registry

    return getattr(registry.resolve(family, backend.name), "gpu_cost", None) or "undeclared"


def local_model(family: str, backend) -> bool:
    """Whether the backend runs a model in this process (its memory is planned)."""
    return gpu_cost(family, backend) == "model"


def _options(family: str, backend) -> dict:
    from autocomp.core import registry

    return {**registry.resolve(family, backend.name).defaults(), **backend.options}


def stage_rows(cfg, batches: dict | None = None) -> list[dict]:
    """One row per GPU stage of the run config `cfg`: weights, activations (low, high) and
    the batch field that sets them; `batches` overrides a stage's batch (for the search)."""
    batches = batches or {}
    rows = []
    w = cfg.captions.writer
    if local_model("writer", w):
        opts = _options("writer", w)
        opts["batch_size"] = batches.get("captions", opts.get("batch_size", 16))
        rows.append({"stage": "captions", **captions(opts), "batch": opts["batch_size"],
                     "field": "captions.options.batch_size"})
    for label, g in cfg.generate.generators():  # one held at a time (synth/stage.py)
        if local_model("generator", g):
            batch = batches.get("images", cfg.generate.batch_size)
            rows.append({"stage": "images" + (f" @{label}" if label else ""),
                         **images(_options("generator", g), batch), "batch": batch,
                         "field": "generate.batch_size"})
    v = cfg.validate
    detector = _options("detector", v.detector) if local_model("detector", v.detector) \
        else None
    answerer = _options("answerer", v.answerer) if local_model("answerer", v.answerer) \
        else None
    if detector is not None or answerer is not None:
        batch = batches.get("validation", v.batch_size)
        from autocomp.validators.checks import cascade

        masks = (any(c.needs_masks for c in cascade(v.checks))
                 or bool((detector or {}).get("masks")))
        rows.append({"stage": "validation", **validation(detector, answerer, batch, masks),
                     "batch": batch, "field": "validate.batch_size"})
    for r in rows:
        r["peak"] = [r["weights"] + a for a in r["activations"]]
    return rows


def fit(cfg, gib: float) -> list[dict]:
    """stage_rows with, for each row, whether its high estimate fits in `gib` and, when it
    does not, the largest batch that does (0: not even one)."""
    rows = stage_rows(cfg)
    for r in rows:
        r["fits"] = r["peak"][1] <= gib
        if r["fits"]:
            continue
        r["largest"] = 0
        for b in range(r["batch"] - 1, 0, -1):
            again = next(x for x in stage_rows(cfg, {r["stage"]: b}) if x["stage"] == r["stage"])
            if again["peak"][1] <= gib:
                r["largest"] = b
                break
    return rows


def refusals(rows: list[dict], where: str, gib: float) -> list[str]:
    """One line per stage that does not fit, saying what to change."""
    out = []
    for r in rows:
        if r.get("fits", True):
            continue
        fix = (f"set {r['field']}: {r['largest']}" if r["largest"] else
               "even a batch of 1 does not fit: a larger GPU, cpu_offload or fp8")
        if r.get("levers"):
            fix += f" (or {', '.join(r['levers'])})"
        out.append(f"stage {r['stage']} needs up to {r['peak'][1]:.1f} GiB at {r['field']} "
                   f"{r['batch']}, more than the {gib:.1f} GiB usable on {where}: {fix}")
    return out


def format_rows(rows: list[dict], where: str, gib: float) -> list[str]:
    wide = max([11, *(len(r["stage"]) for r in rows)])  # "images @<label>" too
    lines = [f"GPU memory per process on {where} ({gib:.1f} GiB usable: the card less the "
             f"CUDA context and {HEADROOM:.0%} headroom):",
             f"  {'stage':<{wide}} {'weights':>8} {'activations':>12} {'peak':>12}  "
             f"{'batch':>5}  fits  weights from; largest activations"]
    for r in rows:
        acts, peak = r["activations"], r["peak"]
        verdict = "yes" if r["fits"] else "NO"
        lines.append(f"  {r['stage']:<{wide}} {r['weights']:>8.1f} {acts[0]:>5.1f}-{acts[1]:<6.1f}"
                     f" {peak[0]:>5.1f}-{peak[1]:<6.1f}  {r['batch']:>5}  {verdict:<4}  "
                     f"{r['source']}; {r['what']}")
    if not rows:
        lines.append("  (no stage loads a model on the GPU: embedded or served backends)")
    return lines

"""GPU seconds per unit of work, estimated from the work itself, per GPU type.

Compute-bound work (diffusion, prefill, detection) is FLOPs over the GPU's dense bf16 peak
at a utilisation of 33-55% (what large batched bf16 transformer inference reaches);
token-by-token decoding is memory-bound: every step reads the weights once for the whole
batch, at 70% of the memory bandwidth, plus a fixed cost per forward pass (FORWARD_OVERHEAD,
measured). CPU work on the GPU's clock is added as measured:
reading and decoding a 1024 px PNG for validation (~55 ms). PNG encoding (~0.35 s per
image) runs on writer threads beside the GPU and is not on its clock.

SD3.5's MMDiT at S px and T steps: (S/16)^2 image tokens and 333 text tokens (77 CLIP +
256 T5) through L joint blocks of width h; per block and token 12 h^2 weights of its stream
(attention 4 h^2, MLP 8 h^2) and attention over all tokens; two passes per step under
classifier-free guidance. SD3.5-large (h = 2432, L = 38), 1024 px, 28 steps: 1.74 PFLOP.
FLUX.1 (h = 3072, 19 + 38 blocks, 512 T5 tokens, one pass a step): 2.08 PFLOP.
"""

from __future__ import annotations

from dataclasses import dataclass

# bf16 dense peak FLOP/s and memory bandwidth (bytes/s), SXM parts
GPUS = {"A100": (312e12, 2.0e12), "H100": (989e12, 3.35e12), "H200": (989e12, 4.8e12),
        "L40S": (362e12, 0.864e12)}
FP8 = {"H100": 1979e12, "H200": 1979e12, "L40S": 733e12}  # dense fp8 peak (no A100: none)
# (best, worst) share of peak for compute-bound work. SD3.5-large's eager denoiser at 16
# images measured 35.5% on an H200 and 35.0% on an H100 (2.89 s a step); the worst leaves
# room below both.
UTILISATION = (0.55, 0.33)
# GroundingDINO and SAM2 are small: launches and pre/post-processing dominate. Measured on
# an H100 (scripts/gpu_check.py, docs/pipeline.md): GroundingDINO-tiny at 800 x 800 (the
# validator's square image), 17.4 ms an image at a batch of 16 (2.9% of peak; 29 ms at
# 800 x 1333, 2.8%; H200 26 ms there, 3.2%), SAM2.1-L 33 ms for one image (5.6%; 11 ms an
# image batched, 17%). The worst case leaves room below the lowest.
DETECT_UTILISATION = (0.06, 0.025)
# fp8 linears uncompiled (row-wise scales, activations quantised at each call): one step of
# SD3.5-large at 16 images took 4.12 s against bf16's 2.93 on an H100 (1.41x); compiled,
# 1.67 s against 1.94 (scripts/gpu_check.py's sd35_fp8 part)
FP8_EAGER_SLOWDOWN = 1.41
FP8_COMPILED_RATIO = 0.86  # 1.67 / 1.94: far from the 2x of the fp8 peak
BANDWIDTH_SHARE = 0.7
DECODE_PNG = 0.055  # s per 1024 px image read + decoded by the validation stage
TEXT_TOKENS = 77 + 256


@dataclass(frozen=True)
class Dit:
    """A diffusion transformer as its cost counts it: its width, its blocks (each applies
    12 h^2 weights to every token), its text tokens, and whether a step takes two passes
    under classifier-free guidance."""

    width: int
    blocks: int
    text_tokens: int = TEXT_TOKENS
    cfg: bool = True


# diffusion transformers by hub id (the longest name found in the model's wins). FLUX.1's
# 19 double-stream blocks (each token through its stream's attention 4 h^2 and MLP 8 h^2)
# and 38 single-stream blocks (a fused 7 h^2 in, 5 h^2 out) each apply 12 h^2 a token;
# 512 T5 tokens (FLUX.1-dev's max_sequence_length); its guidance is an input of a
# guidance-distilled model, so one pass a step. 74.36 TFLOP a step at 1024 px, where
# FlopCounterMode counts 74.38 on the released architecture (tests/test_flops.py)
DITS = {"stable-diffusion-3.5-large": Dit(2432, 38), "stable-diffusion-3.5-medium": Dit(1536, 24),
        "stable-diffusion-3-medium": Dit(1536, 24),
        "FLUX.1": Dit(3072, 19 + 38, text_tokens=512, cfg=False)}


def dit_of(model: str) -> Dit:
    """The transformer of a diffusers model id or folder (SD3.5-large when unknown)."""
    hits = [k for k in DITS if k.lower() in str(model).lower()]
    return DITS[max(hits, key=len)] if hits else DITS["stable-diffusion-3.5-large"]
# FLOPs (2 a multiply-add), counted by torch.utils.flop_counter.FlopCounterMode on the
# architectures built from their released configurations (tests/test_flops.py; before issue
# 66 the first two were multiply-adds and the third left out attention, each about half):
# GroundingDINO-tiny (Swin-T + BERT + its encoder and decoder) at the size validation runs
# it for a square image (the processor's shortest edge 800: 800 x 800; 800 x 1333 counts
# 0.816e12), SAM2.1 Hiera-L's image encoder at 1024 px, Gemma-3's SigLIP-400M at 896 px
# (4,096 patch tokens: attention alone 2.1e12)
DINO_TINY = 0.504e12
DINO_TINY_1333 = 0.816e12
SAM2_LARGE = 1.825e12
VISION_TOWER = 5.48e12
IMAGE_TOKENS = 256  # Gemma-3's image tokens per image
# The fixed cost of one forward pass (a prefill or one decoding step) of a 12B chat model
# under transformers' generate (dynamic KV cache, eager), whatever the GPU: kernel launches
# and Python around 48 layers. Measured on an H200 with Gemma-3-12B's architecture at 32
# prompts x 450 tokens: a decoding step takes 54-58 ms where reading the weights takes 7 ms
# and the caption sampler 5 ms (scripts/gpu_check.py; 39-46 ms in issue 40's bench without
# a sampler). Without it, decoding was estimated 5x too fast.
FORWARD_OVERHEAD = 0.045
# the captions writer's sampler per decoding step at 32 x 262,208 (top-k 1,024, then the
# nucleus, on the device): 4.7 ms on an H200 (scripts/bench_sampler.py --device cuda)
SAMPLER_STEP = 0.005
# generate.options.compile: SD3.5-large's denoiser compiled (torch.compile, in place) runs a
# step at 16 images with guidance in 1.92 s where eager takes 2.82 s on an H200 (on an H100:
# 1.94 s against 2.89 s, 1.49x); the compile itself takes 78 s (H100: 102 s) once per process
# (scripts/gpu_check.py). The H200's speedup and compile time are the plan's.
COMPILE_SPEEDUP, COMPILE_SECONDS = 2.815 / 1.922, 78.0
# vLLM (the `vllm` writer and answerer): CUDA graphs and continuous batching take the fixed
# cost of a step to a few ms, and the engine runs every request handed to it at once, so a
# step reads the weights once and each running sequence's KV cache (not negligible at 256
# sequences: ~50 GB a step for Gemma-3-12B). An estimate until gpu_check measures vLLM.
VLLM_STEP_OVERHEAD = 0.004
KV_BYTES_12B = 48 * 2 * 8 * 256 * 2  # per token: layers x (K, V) x KV heads x width x bf16


def dit_flops(width: int, blocks: int, size: int, steps: int, guidance: float,
              text_tokens: int = TEXT_TOKENS, cfg: bool = True) -> float:
    return sum(dit_parts(width, blocks, size, steps, guidance, text_tokens, cfg))


def dit_parts(width: int, blocks: int, size: int, steps: int, guidance: float,
              text_tokens: int = TEXT_TOKENS, cfg: bool = True) -> tuple[float, float]:
    """(linear-layer FLOPs, attention FLOPs) of one image: fp8 speeds up only the first."""
    tokens = (size // 16) ** 2 + text_tokens
    passes = steps * (2 if cfg and guidance > 1 else 1)
    return (2 * 12 * width ** 2 * blocks * tokens * passes,
            4 * tokens ** 2 * width * blocks * passes)


def llm_params(model: str) -> float:
    """Parameters of a chat model from its name (gemma-3-12b-it -> 12e9); 12e9 if unknown."""
    import re

    m = re.search(r"(\d+(?:\.\d+)?)b\b", str(model).lower())
    return float(m.group(1)) * 1e9 if m else 12e9


def seconds(unit: str, options: dict, gpu: str, mean_n: float = 2.0,
            masks: bool = False) -> tuple[float, float]:
    """(best, worst) GPU seconds of one unit ("image", "caption", "detect", "vqa",
    "vqascore", "soft")."""
    peak, bandwidth = GPUS[gpu]

    def compute(flops, shares=UTILISATION):
        return tuple(flops / (peak * u) for u in shares)

    def memory(bytes_read):
        return bytes_read / (bandwidth * BANDWIDTH_SHARE)

    if unit == "image":
        dit = dit_of(str(options.get("model", "stable-diffusion-3.5-large")))
        linear, attention = dit_parts(dit.width, dit.blocks, int(options.get("size", 1024)),
                                      int(options.get("steps", 28)),
                                      float(options.get("guidance", 4.5)), dit.text_tokens,
                                      dit.cfg)
        speedup = COMPILE_SPEEDUP if options.get("compile") else 1.0
        if options.get("fp8"):
            if gpu not in FP8:
                raise ValueError(f"{gpu} has no fp8 tensor cores")
            if not options.get("compile"):  # quantising activations unfused costs more
                best, worst = compute(linear + attention)
                return best, worst * FP8_EAGER_SLOWDOWN
            fast = [linear / (FP8[gpu] * u) for u in UTILISATION]
            best = (fast[0] + compute(attention)[0]) / speedup
            # the worst case: compiled bf16's worst at the measured fp8/bf16 ratio
            return best, compute(linear + attention)[1] / speedup * FP8_COMPILED_RATIO
        return tuple(s / speedup for s in compute(linear + attention))
    if unit == "detect":
        best, worst = compute(DINO_TINY + (SAM2_LARGE if masks else 0.0), DETECT_UTILISATION)
        return best + DECODE_PNG, worst + DECODE_PNG
    params = llm_params(options.get("model", ""))
    batch = int(options.get("batch_size", 16))
    served = options.get("engine") == "vllm"
    overhead = VLLM_STEP_OVERHEAD if served else FORWARD_OVERHEAD

    def step(tokens: float = 0.0):
        """One decoding step of a batch: the weights read once, plus the overhead; under
        vLLM also the KV cache of `tokens` per sequence."""
        kv = batch * tokens * options.get("kv_bytes", KV_BYTES_12B) if served else 0.0
        return memory(2 * params + kv) + overhead

    if unit == "caption":  # ~450 prompt tokens, up to 150 new ones, each token sampled
        new = int(options.get("max_new_tokens", 150))
        prefill = compute(2 * params * 450)
        decode = (overhead + (step(450 + new / 2) + (0.0 if served else SAMPLER_STEP))
                  * new) / batch
        return prefill[0] + decode, prefill[1] + decode
    if unit == "vqa":  # ~mean_n questions per image: the vision tower once per image, each
        #                   question's prompt (256 image tokens + ~40) prefilled; 12 new
        #                   tokens decoded for `batch_size` questions at a time
        prefill = compute(VISION_TOWER + mean_n * 2 * params * (IMAGE_TOKENS + 40))
        decode = ((overhead + step(IMAGE_TOKENS + 46) * int(options.get("max_new_tokens", 12)))
                  * mean_n / batch)
        return prefill[0] + decode, prefill[1] + decode
    if unit == "vqascore":  # one prompt per image (the vision tower, ~60 prompt tokens and
        #                        the answer's), read off the logits: no decoding
        return tuple(c + overhead for c in compute(
            VISION_TOWER + 2 * params * (IMAGE_TOKENS + 60)))
    if unit == "soft":  # Soft-TIFA: each of ~mean_n questions prefilled with its two
        #                    spellings of the expected answer (256 image tokens + ~42), the
        #                    vision tower once per image, read off the logits: no decoding
        return tuple(c + overhead for c in compute(
            VISION_TOWER + mean_n * 2 * 2 * params * (IMAGE_TOKENS + 42)))
    raise ValueError(f"unknown unit {unit!r}")

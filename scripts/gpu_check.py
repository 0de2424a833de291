"""The paper's architectures on this machine's GPU, with random weights: seconds and memory.

    python scripts/gpu_check.py [--out gpu_check.json] [--only NAME ...] [--tiny]

No network: every model is built from its configuration (the shapes of the released
checkpoints, written here) with random weights, in bf16 on the GPU, and timed at the
batch sizes of configs/autocomp-cp.yaml:

  sd35_transformer  SD3.5-large's MMDiT (38 blocks): one denoising step, 1024 px, the
                    batch twice over (classifier-free guidance); seconds per image at 28 steps
  sd35_fp8          the same step with its linear layers in float8 (row-wise scales), eager
                    and compiled, beside bf16 with torch's, flash and cuDNN attention
  t5_xxl, clip_l, clip_g   SD3.5's three text encoders on a batch of prompts
  vae_decode        SD3.5's VAE decoding 1024 px images, 1, 4 and 8 at once
  gemma3_12b        the captions writer: prefill of 32 prompts, then decoding steps with the
                    sampler before issue 51 (host, full sort) and after (device, top 1,024)
  vit_l14           a ViT-L/14 CLIP scoring a batch: images and captions
  grounding_dino, sam2     the validators' detector (GroundingDINO-tiny's shapes, 800 x 800:
                    a square image at the processor's size) and segmenter (SAM2.1 Hiera-L,
                    1024 px, one box)
  host_memory       host memory of a pipeline with a full-size fp16 T5-XXL asked in bf16,
                    loaded the way before issue 66 (host, then device) and now (device map)

For each it records the parameter count, every parameter dtype, the seconds to build, the
timings, torch.cuda.max_memory_allocated and max_memory_reserved, and the process's peak
host RSS; one component that fails is recorded with its error and the rest go on. It
writes one JSON (--out; checked writable first, rewritten after each component, so a call
cut short keeps what it measured), prints a line per component, then each number autocomp's cost
plan (autocomp/planning/costs.py) predicts beside the plan's range, and exits 2 when one is over
the plan's worst case (1 when a component failed). `--tiny` builds every component
from tiny configurations on the CPU in seconds, in bf16 as on a GPU: the script's own
test (tests/test_gpu_check.py).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
import traceback
from pathlib import Path

from autocomp.planning.calibrate import compare  # the measured numbers beside the plan

GIB = 2 ** 30
CONFIG = Path(__file__).resolve().parent.parent / "configs" / "autocomp-cp.yaml"


def _batches() -> tuple[int, int, int]:
    """(images, prompts, validation images) per batch, as configs/autocomp-cp.yaml runs."""
    import yaml

    cfg = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    return (int(cfg["generate"]["batch_size"]), int(cfg["captions"]["options"]["batch_size"]),
            int(cfg["validate"]["batch_size"]))


IMAGES_BATCH, PROMPTS_BATCH, DETECT_BATCH = _batches()
SCORE_BATCH = 256  # autocomp eval's default batch for an encoder


def _rss_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / GIB


class Probe:
    """Timing and memory for one component on `device`."""

    def __init__(self, device: str, dtype):
        self.device, self.dtype = device, dtype
        self.cuda = device.startswith("cuda")

    def sync(self):
        import torch

        if self.cuda:
            torch.cuda.synchronize()

    def time(self, fn, repeat: int = 2) -> float:
        """Seconds per call, after one call not timed."""
        fn()
        self.sync()
        start = time.perf_counter()
        for _ in range(repeat):
            fn()
        self.sync()
        return (time.perf_counter() - start) / repeat

    def build(self, make):
        """`make()` built straight on the device in the probe's dtype (no host copy)."""
        import torch

        previous = torch.get_default_dtype()
        torch.set_default_dtype(self.dtype)
        try:
            with torch.device(self.device):
                model = make()
        finally:
            torch.set_default_dtype(previous)
        # a legacy constructor (torch.Tensor(n, d): GroundingDINO's level_embed) ignores the
        # device context: moved as from_pretrained's model is, no copy for the rest
        return model.to(self.device).eval()


def _tiny_models():
    """tests/tiny_models.py: the suite's tiny configurations, shared with --tiny."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    import tiny_models

    return tiny_models


def _describe(model) -> dict:
    params = list(model.parameters())
    return {"parameters": sum(p.numel() for p in params),
            "dtypes": sorted({str(p.dtype).replace("torch.", "") for p in params})}


# -- components ---------------------------------------------------------------------------
def _sd35(probe: Probe, tiny: bool):
    """(the MMDiT built on the device, one denoising step of the batch under guidance, rows,
    seconds to build)."""
    import torch
    from diffusers import SD3Transformer2DModel

    cfg = (dict(sample_size=8, patch_size=2, in_channels=4, num_layers=2, attention_head_dim=8,
                num_attention_heads=2, joint_attention_dim=32, caption_projection_dim=16,
                pooled_projection_dim=32, out_channels=4, pos_embed_max_size=16,
                qk_norm="rms_norm") if tiny else
           dict(sample_size=128, patch_size=2, in_channels=16, num_layers=38,
                attention_head_dim=64, num_attention_heads=38, joint_attention_dim=4096,
                caption_projection_dim=2432, pooled_projection_dim=2048, out_channels=16,
                pos_embed_max_size=192, qk_norm="rms_norm"))
    start = time.perf_counter()
    model = probe.build(lambda: SD3Transformer2DModel(**cfg))
    built = time.perf_counter() - start
    rows, side = 2 * (2 if tiny else IMAGES_BATCH), cfg["sample_size"]
    latents = torch.randn(rows, cfg["in_channels"], side, side)
    text = torch.randn(rows, 333, cfg["joint_attention_dim"])  # 77 CLIP + 256 T5 tokens
    pooled = torch.randn(rows, cfg["pooled_projection_dim"])
    steps = torch.full((rows,), 500.0)
    args = [t.to(probe.device, probe.dtype) for t in (latents, text, pooled)]

    def step():
        with torch.inference_mode():
            model(hidden_states=args[0], encoder_hidden_states=args[1],
                  pooled_projections=args[2], timestep=steps.to(probe.device),
                  return_dict=False)
    return model, step, rows, built


def sd35_transformer(probe: Probe, tiny: bool) -> dict:
    import torch

    model, step, rows, built = _sd35(probe, tiny)
    seconds = probe.time(step)
    out = {**_describe(model), "build_s": built, "step_s": seconds,
           "batch_images": rows // 2, "s_per_image_28_steps": seconds * 28 / (rows // 2)}
    if probe.cuda:  # generate.options.compile: the denoiser compiled in place, as there
        out["max_allocated_gib_eager"] = torch.cuda.max_memory_allocated() / GIB
        print(f"  sd35_transformer eager: step {seconds:.4g} s for {rows // 2} images, "
              f"allocated {out['max_allocated_gib_eager']:.1f} GiB; compiling", flush=True)
        out.update(_compiled(probe, model, step, rows // 2, ""))
    return out


def _compiled(probe: Probe, model, step, images: int, suffix: str) -> dict:
    """The denoiser compiled in place (as generate.options.compile does): the compile's
    seconds, then the compiled step's."""
    start = time.perf_counter()
    model.compile(fullgraph=False)
    step()  # the first call compiles
    probe.sync()
    compiling = time.perf_counter() - start
    seconds = probe.time(step)
    return {f"compile_s{suffix}": compiling, f"step_s{suffix}_compiled": seconds,
            f"s_per_image_28_steps{suffix}_compiled": seconds * 28 / images}


def sd35_fp8(probe: Probe, tiny: bool) -> dict:
    """The denoiser's step with its linear layers in float8 (row-wise scales: e4m3 weights
    scaled per output row, activations per token), eager and compiled, beside the bf16
    step on the same card with the attention backend left to torch, forced to flash
    attention and forced to cuDNN's. What `generate.options.fp8: true` would buy; the dry-run
    uses these figures only once measured (autocomp/planning/calibrate.py)."""
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel

    model, step, rows, built = _sd35(probe, tiny)
    images = rows // 2
    out = {"build_s": built, "batch_images": images, "step_s_bf16": probe.time(step)}
    for name, backend in (("flash", SDPBackend.FLASH_ATTENTION),
                          ("cudnn", SDPBackend.CUDNN_ATTENTION)):
        try:
            with sdpa_kernel(backend):
                out[f"step_s_bf16_{name}"] = probe.time(step)
        except RuntimeError as exc:  # no such kernel for this device, dtype or shape
            out[f"bf16_{name}_error"] = " ".join(str(exc).split())[:200]
    out["fp8_impl"], out["fp8_linears"] = fp8_linears(model)
    out["step_s_fp8"] = probe.time(step)
    out["s_per_image_28_steps_fp8"] = out["step_s_fp8"] * 28 / images
    if probe.cuda:
        out["max_allocated_gib_fp8_eager"] = torch.cuda.max_memory_allocated() / GIB
        print(f"  sd35_fp8 eager: step {out['step_s_fp8']:.4g} s (bf16 "
              f"{out['step_s_bf16']:.4g} s); compiling", flush=True)
        out.update(_compiled(probe, model, step, images, "_fp8"))
    return out


def fp8_linears(model) -> tuple[str, int]:
    """Every linear layer whose sizes fp8 matmuls take (multiples of 16) in float8 with
    row-wise scales, in place: torchao's Float8DynamicActivationFloat8WeightConfig(PerRow)
    where torchao is installed (what generate.options.fp8 runs), else torch._scaled_mm
    directly (the same arithmetic). (which, how many layers)."""
    import torch

    try:
        import torchao.quantization as q
    except ImportError:
        q = None
    if q is not None and str(next(model.parameters()).device).startswith("cuda"):
        before = sum(isinstance(m, torch.nn.Linear) for m in model.modules())
        q.quantize_(model, q.Float8DynamicActivationFloat8WeightConfig(granularity=q.PerRow()))
        return "torchao", before
    swapped = 0
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, torch.nn.Linear) and not child.in_features % 16 \
                    and not child.out_features % 16:
                setattr(parent, name, _RowwiseFp8(child))
                swapped += 1
    return "scaled_mm", swapped


def _RowwiseFp8(linear):  # noqa: N802 (a class made once torch is imported)
    import torch

    class RowwiseFp8(torch.nn.Module):
        """y = x W^T + b with x and W in e4m3, each row scaled to the format's range."""

        MAX = 448.0

        def __init__(self, lin):
            super().__init__()
            w = lin.weight.detach().float()
            scale = w.abs().amax(dim=1, keepdim=True).clamp(min=1e-12) / self.MAX
            self.register_buffer("weight", (w / scale).to(torch.float8_e4m3fn))
            self.register_buffer("scale", scale.t().contiguous())  # [1, out]
            self.bias, self.out_features = lin.bias, lin.out_features

        def forward(self, x):
            flat = x.reshape(-1, x.shape[-1]).float()
            scale = flat.abs().amax(dim=1, keepdim=True).clamp(min=1e-12) / self.MAX
            y = torch._scaled_mm((flat / scale).to(torch.float8_e4m3fn), self.weight.t(),
                                 scale_a=scale, scale_b=self.scale, out_dtype=x.dtype)
            if self.bias is not None:
                y = y + self.bias
            return y.reshape(*x.shape[:-1], self.out_features)

    return RowwiseFp8(linear)


def _text_encoder(probe: Probe, make, length: int, vocab: int) -> dict:
    import torch

    start = time.perf_counter()
    model = probe.build(make)
    built = time.perf_counter() - start
    ids = torch.randint(0, vocab, (IMAGES_BATCH, length), device=probe.device)

    def run():
        with torch.inference_mode():
            model(input_ids=ids)
    return {**_describe(model), "build_s": built, "batch": IMAGES_BATCH,
            "forward_s": probe.time(run)}


def t5_xxl(probe: Probe, tiny: bool) -> dict:
    import transformers as T

    cfg = T.T5Config(**(dict(d_model=16, d_ff=32, num_layers=2, num_heads=2, d_kv=8,
                             vocab_size=100) if tiny else
                        dict(d_model=4096, d_ff=10240, num_layers=24, num_heads=64, d_kv=64,
                             vocab_size=32128)), feed_forward_proj="gated-gelu")
    return _text_encoder(probe, lambda: T.T5EncoderModel(cfg), 256, cfg.vocab_size)


def _clip_text(probe: Probe, tiny: bool, hidden: int, layers: int, heads: int, act: str):
    import transformers as T

    cfg = T.CLIPTextConfig(**(dict(hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                                   num_attention_heads=2, projection_dim=16) if tiny else
                              dict(hidden_size=hidden, intermediate_size=4 * hidden,
                                   num_hidden_layers=layers, num_attention_heads=heads,
                                   projection_dim=hidden)),
                           vocab_size=49408, max_position_embeddings=77, hidden_act=act)
    return _text_encoder(probe, lambda: T.CLIPTextModelWithProjection(cfg), 77, 49408)


def clip_l(probe: Probe, tiny: bool) -> dict:
    return _clip_text(probe, tiny, 768, 12, 12, "quick_gelu")


def clip_g(probe: Probe, tiny: bool) -> dict:
    return _clip_text(probe, tiny, 1280, 32, 20, "gelu")


def vae_decode(probe: Probe, tiny: bool) -> dict:
    import torch
    from diffusers import AutoencoderKL

    blocks = (8, 16) if tiny else (128, 256, 512, 512)
    start = time.perf_counter()
    vae = probe.build(lambda: AutoencoderKL(
        in_channels=3, out_channels=3, latent_channels=16, block_out_channels=blocks,
        down_block_types=["DownEncoderBlock2D"] * len(blocks),
        up_block_types=["UpDecoderBlock2D"] * len(blocks), layers_per_block=1 if tiny else 2,
        norm_num_groups=8 if tiny else 32, use_quant_conv=False, use_post_quant_conv=False))
    built = time.perf_counter() - start
    side = 8 if tiny else 128
    out = {**_describe(vae), "build_s": built}
    for batch in (1, 4, 8):  # vae_slicing off decodes a whole batch at once
        latent = torch.randn(batch, 16, side, side).to(probe.device, probe.dtype)

        def decode(latent=latent):
            with torch.inference_mode():
                vae.decode(latent)
        if probe.cuda:
            torch.cuda.reset_peak_memory_stats()
        out[f"decode_s_per_image_b{batch}"] = probe.time(decode) / batch
        if probe.cuda:
            out[f"max_allocated_gib_b{batch}"] = torch.cuda.max_memory_allocated() / GIB
    out["decode_s_per_image"] = out["decode_s_per_image_b1"]
    return out


def _gemma_config(tiny: bool):
    """Gemma-3-12B's text model (the captions writer), or a tiny one of its shape."""
    import transformers as T

    shape = (dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                  num_attention_heads=2, num_key_value_heads=1, head_dim=16, vocab_size=512)
             if tiny else
             dict(hidden_size=3840, intermediate_size=15360, num_hidden_layers=48,
                  num_attention_heads=16, num_key_value_heads=8, head_dim=256,
                  vocab_size=262208))
    cfg = T.Gemma3TextConfig(**shape, sliding_window=1024, max_position_embeddings=4096)
    cfg.architectures = ["Gemma3ForCausalLM"]
    return cfg


def gemma3_12b_vllm(probe: Probe, tiny: bool) -> dict:
    """The same decoding through vLLM's offline engine (the `vllm` writer): random weights
    from the configuration (load_format="dummy"), token ids in, the same 32 prompts and a
    full captions batch of 256; skipped where vLLM or a GPU is missing."""
    import tempfile
    from importlib.util import find_spec

    if not probe.cuda or find_spec("vllm") is None:
        return {"skipped": "needs a GPU" if not probe.cuda else "vllm is not installed"}
    import torch
    from vllm import LLM, SamplingParams

    from autocomp.models.vllm_engine import shutdown

    cfg = _gemma_config(tiny)
    prompt, new = 450, 16
    out = {"batch": PROMPTS_BATCH, "prompt_tokens": prompt}
    with tempfile.TemporaryDirectory() as folder:
        cfg.save_pretrained(folder)
        start = time.perf_counter()
        engine = LLM(model=folder, load_format="dummy", skip_tokenizer_init=True,
                     dtype="bfloat16", gpu_memory_utilization=0.6, max_model_len=1024, seed=0)
        out["build_s"] = time.perf_counter() - start
        try:
            for batch in (PROMPTS_BATCH, 256):
                ids = torch.randint(3, cfg.vocab_size, (batch, prompt)).tolist()
                prompts = [{"prompt_token_ids": row} for row in ids]

                def run(tokens, prompts=prompts):
                    params = SamplingParams(temperature=0.7, top_p=0.9, max_tokens=tokens,
                                            min_tokens=tokens, ignore_eos=True, seed=1,
                                            detokenize=False)
                    engine.generate(prompts, params, use_tqdm=False)
                one = probe.time(lambda run=run: run(1), repeat=1)
                many = probe.time(lambda run=run: run(new + 1), repeat=1)
                suffix = "" if batch == PROMPTS_BATCH else f"_batch{batch}"
                out[f"prefill_s{suffix}"] = one
                out[f"step_s{suffix}"] = max(many - one, 0.0) / new
                out[f"tokens_per_s{suffix}"] = (batch * new / (many - one)
                                                if many > one else None)
        finally:
            shutdown(engine)
    return out


def gemma3_12b(probe: Probe, tiny: bool) -> dict:
    import torch
    import transformers as T

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_sampler import before_step

    from autocomp.captions.llm import RowSampler

    cfg = _gemma_config(tiny)
    shape = {"vocab_size": cfg.vocab_size}
    start = time.perf_counter()
    model = probe.build(lambda: T.Gemma3ForCausalLM(cfg))
    built = time.perf_counter() - start
    prompt, new = (16, 4) if tiny else (450, 16)
    ids = torch.randint(3, shape["vocab_size"], (PROMPTS_BATCH, prompt), device=probe.device)
    seeds = list(range(PROMPTS_BATCH))

    class Before:
        def __init__(self):
            self.gens = [torch.Generator().manual_seed(s) for s in seeds]

        def __call__(self, input_ids, scores):
            return before_step(scores, self.gens).to(scores.device)

    def generate(sampler, tokens):
        from transformers import LogitsProcessorList

        with torch.inference_mode():
            model.generate(input_ids=ids, attention_mask=torch.ones_like(ids),
                           do_sample=False, max_new_tokens=tokens, min_new_tokens=tokens,
                           logits_processor=LogitsProcessorList([sampler()]),
                           pad_token_id=0, eos_token_id=None)
    out = {**_describe(model), "build_s": built, "batch": PROMPTS_BATCH,
           "prompt_tokens": prompt}
    for name, sampler in (("before", Before), ("after", lambda: RowSampler(seeds, 0.7, 0.9))):
        one = probe.time(lambda s=sampler: generate(s, 1), repeat=1)  # prefill + one token
        many = probe.time(lambda s=sampler: generate(s, new + 1), repeat=1)
        out[f"prefill_s_{name}"] = one
        # a difference of two wall times: on a loaded CPU (the tiny check) the longer run
        # can come out quicker; then the step is below what this timer resolves
        out[f"step_s_{name}"] = max(many - one, 0.0) / new
        if many <= one:
            out.setdefault("notes", []).append(f"{name}: step time below the timer's noise")
    step = out["step_s_after"]
    out["tokens_per_s_after"] = PROMPTS_BATCH / step if step > 0 else None
    out.update(_cache_modes(probe, model, ids, new, seeds))
    return out


class StepClock:
    """A logits processor that reads the clock at every decoding step (after the device
    has finished it): the median gap is the step time of a single generate call."""

    def __init__(self, probe: Probe):
        self.probe, self.marks = probe, []

    def __call__(self, input_ids, scores):
        self.probe.sync()
        self.marks.append(time.perf_counter())
        return scores

    def step_s(self) -> float:
        import statistics

        gaps = [b - a for a, b in zip(self.marks, self.marks[1:], strict=False)]
        return statistics.median(gaps) if gaps else float("nan")


def _cache_modes(probe: Probe, model, ids, new: int, seeds) -> dict:
    """Step time of the same generate call with transformers' static KV cache, eager and
    compiled (CUDA graphs): how far the HF path sits from reading the weights once per
    step. The compiled call's first run (the compile) is timed apart."""
    import torch
    from transformers import LogitsProcessorList

    from autocomp.captions.llm import RowSampler

    out = {}
    modes = (("static", False), ("static_compiled", True))[:2 if probe.cuda else 1]
    for name, compiled in modes:
        model.generation_config.disable_compile = not compiled
        for attempt in ("first", "timed"):
            clock = StepClock(probe)
            start = time.perf_counter()
            try:
                with torch.inference_mode():
                    model.generate(input_ids=ids, attention_mask=torch.ones_like(ids),
                                   do_sample=False, max_new_tokens=new + 1,
                                   min_new_tokens=new + 1, cache_implementation="static",
                                   logits_processor=LogitsProcessorList(
                                       [RowSampler(seeds, 0.7, 0.9), clock]),
                                   pad_token_id=0, eos_token_id=None)
            except Exception as exc:  # noqa: BLE001 (recorded; the dynamic cache stands)
                out[f"error_{name}"] = f"{type(exc).__name__}: {exc}"[:300]
                break
            probe.sync()
            out[f"{attempt}_call_s_{name}"] = time.perf_counter() - start
            print(f"  gemma3_12b {name} cache, {attempt} call: "
                  f"{out[f'{attempt}_call_s_{name}']:.3g} s, step {clock.step_s():.4g} s",
                  flush=True)
        else:
            out[f"step_s_{name}"] = clock.step_s()
    model.generation_config.disable_compile = True
    return out


def vit_l14(probe: Probe, tiny: bool) -> dict:
    import open_clip
    import torch

    if tiny:
        cfg = {"embed_dim": 16, "vision_cfg": {"image_size": 32, "layers": 2, "width": 32,
                                               "patch_size": 8, "head_width": 16},
               "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 16,
                            "heads": 1, "layers": 2}}
        make = lambda: open_clip.CLIP(**cfg)  # noqa: E731
        side = 32
    else:
        make = lambda: open_clip.create_model("ViT-L-14", pretrained=None,  # noqa: E731
                                              device=probe.device)
        side = 224
    start = time.perf_counter()
    model = probe.build(make)
    built = time.perf_counter() - start
    images = torch.randn(SCORE_BATCH, 3, side, side).to(probe.device, probe.dtype)
    texts = torch.randint(1, 49407, (SCORE_BATCH, 77), device=probe.device)

    def encode_images():
        with torch.inference_mode():
            model.encode_image(images)

    def encode_texts():
        with torch.inference_mode():
            model.encode_text(texts)
    return {**_describe(model), "build_s": built, "batch": SCORE_BATCH,
            "images_s": probe.time(encode_images), "texts_s": probe.time(encode_texts)}


def grounding_dino(probe: Probe, tiny: bool) -> dict:
    import torch
    import transformers as T

    if tiny:
        cfg = _tiny_models().grounding_dino_config(100)
        size, vocab = (64, 64), 100
    else:
        # the size validation runs it at for a square 1024 px image: the processor's
        # shortest edge, 800 (before issue 66 this measured 800 x 1333)
        cfg, size, vocab = T.GroundingDinoConfig(), (800, 800), 30522
    start = time.perf_counter()
    model = probe.build(lambda: T.GroundingDinoForObjectDetection(cfg))
    built = time.perf_counter() - start
    pixels = torch.randn(DETECT_BATCH, 3, *size).to(probe.device, probe.dtype)
    ids = torch.randint(1, vocab, (DETECT_BATCH, 16), device=probe.device)

    def detect():
        with torch.inference_mode():
            model(pixel_values=pixels, input_ids=ids)
    return {**_describe(model), "build_s": built, "batch": DETECT_BATCH, "size": list(size),
            "s_per_image": probe.time(detect) / DETECT_BATCH}


def sam2_config(tiny: bool):
    """SAM2.1 Hiera-L's configuration (sam2.1_hiera_l.yaml), or the suite's tiny one."""
    import transformers as T

    if tiny:
        return _tiny_models().sam2_config()
    backbone = T.Sam2HieraDetConfig(
        hidden_size=144, num_attention_heads=2, blocks_per_stage=[2, 6, 36, 4],
        embed_dim_per_stage=[144, 288, 576, 1152],
        num_attention_heads_per_stage=[2, 4, 8, 16], window_size_per_stage=[8, 4, 16, 8],
        global_attention_blocks=[23, 33, 43],
        window_positional_embedding_background_size=[7, 7])
    return T.Sam2Config(vision_config=T.Sam2VisionConfig(
        backbone_config=backbone, backbone_channel_list=[1152, 576, 288, 144]))


def sam2(probe: Probe, tiny: bool) -> dict:
    import torch
    import transformers as T

    cfg, side = sam2_config(tiny), 64 if tiny else 1024
    start = time.perf_counter()
    model = probe.build(lambda: T.Sam2Model(cfg))
    built = time.perf_counter() - start
    pixels = torch.randn(1, 3, side, side).to(probe.device, probe.dtype)
    boxes = torch.tensor([[[side * 0.25, side * 0.25, side * 0.75, side * 0.75]]],
                         device=probe.device, dtype=probe.dtype)

    def segment(pixels=pixels, boxes=boxes):
        with torch.inference_mode():
            model(pixel_values=pixels, input_boxes=boxes)
    many = (pixels.expand(DETECT_BATCH, -1, -1, -1).contiguous(),
            boxes.expand(DETECT_BATCH, -1, -1).contiguous())
    return {**_describe(model), "build_s": built, "s_per_image": probe.time(segment),
            "s_per_image_batched": probe.time(lambda: segment(*many)) / DETECT_BATCH,
            "batch": DETECT_BATCH}


def measure_load(folder: str, way: str, device: str) -> dict:
    """One pipeline load, `way` "old" (before issue 66: to the host in the asked dtype, then
    moved) or "new" (autocomp's device map), and the anonymous memory it added: peak
    (sampled every 2 ms) and after, in bytes."""
    import threading

    import torch
    from diffusers import DiffusionPipeline

    from autocomp.synth.diffusers_gen import load_pipeline

    def anon():
        with open("/proc/self/status", encoding="ascii") as fh:
            return next(int(ln.split()[1]) * 1024 for ln in fh if ln.startswith("RssAnon:"))

    peak, stop = [0], threading.Event()

    def watch():
        while not stop.is_set():
            peak[0] = max(peak[0], anon())
            time.sleep(0.002)
    base = anon()
    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    start = time.perf_counter()
    if way == "old":
        pipe = DiffusionPipeline.from_pretrained(folder, dtype=torch.bfloat16, tokenizer_3=None)
        pipe.to(device)
    else:
        pipe = load_pipeline(DiffusionPipeline, folder, None, torch.bfloat16, device,
                             {"tokenizer_3": None})
    took = time.perf_counter() - start
    stop.set()
    thread.join()
    return {"peak": max(peak[0], anon()) - base, "after": anon() - base, "s": took,
            "t5": str(pipe.text_encoder_3.dtype)}


LOAD = ("import json, sys; sys.path.insert(0, sys.argv[4]); import gpu_check; "
        "print(json.dumps(gpu_check.measure_load(*sys.argv[1:4])))")


def host_memory(probe: Probe, tiny: bool) -> dict:
    """Host memory of a rank loading SD3.5's pipeline with a full-size T5-XXL stored in fp16
    (9.5 GB) and asked in bf16, the way before issue 66 (to the host, then .to(device)) and
    the way now (a device map: each tensor from the file to the device): the anonymous
    memory each way adds, peak and after, measured in a fresh process each (the files in
    the page cache for both: the first load reads them)."""
    import shutil
    import subprocess
    import tempfile

    import torch
    import transformers as T

    scratch = Path(tempfile.mkdtemp(prefix="gpu_check-host-"))
    try:
        folder = _tiny_models().tiny_sd3(scratch / "pipe")
        shape = (dict(d_model=64, d_ff=128, num_layers=2, num_heads=2, d_kv=32) if tiny else
                 dict(d_model=4096, d_ff=10240, num_layers=24, num_heads=64, d_kv=64))
        cfg = T.T5Config(vocab_size=32128, feed_forward_proj="gated-gelu", **shape)
        fp16 = Probe(probe.device, torch.float16)
        start = time.perf_counter()
        t5 = fp16.build(lambda: T.T5EncoderModel(cfg))
        t5.save_pretrained(folder / "text_encoder_3")
        weights = sum(p.numel() for p in t5.parameters()) * 2
        del t5
        if probe.cuda:
            torch.cuda.empty_cache()
        index = json.loads((folder / "model_index.json").read_text())
        index["text_encoder_3"] = ["transformers", "T5EncoderModel"]
        (folder / "model_index.json").write_text(json.dumps(index))
        out = {"t5_fp16_gib": weights / GIB, "written_s": time.perf_counter() - start}
        # on a GPU the first load reads the files from disk: a warm-up, then each way, each
        # in a fresh process (tiny, on the CPU: in this one, the code path only)
        for way in ("old", "new") if tiny else ("new", "old", "new"):
            got = measure_load(str(folder), way, probe.device) if tiny else json.loads(
                subprocess.run([sys.executable, "-c", LOAD, str(folder), way, probe.device,
                                str(Path(__file__).resolve().parent)], check=True,
                               capture_output=True, text=True).stdout.strip().splitlines()[-1])
            out.update({f"{way}_anon_peak_gib": got["peak"] / GIB,
                        f"{way}_anon_after_gib": got["after"] / GIB, f"{way}_load_s": got["s"],
                        f"{way}_t5_dtype": got["t5"]})
        return out
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


COMPONENTS = {f.__name__: f for f in (sd35_transformer, sd35_fp8, t5_xxl, clip_l, clip_g,
                                      vae_decode, gemma3_12b, gemma3_12b_vllm, vit_l14,
                                      grounding_dino, sam2, host_memory)}


def check(names, tiny: bool, device: str, out: Path | None = None) -> dict:
    """Each component in turn; `out`: the report written after each (a timeout keeps what
    was measured)."""
    import torch

    cuda = device.startswith("cuda")
    # bf16 as on the GPU (the tiny run checks that path too); fp32 only on the meta device
    probe = Probe(device, torch.float32 if device == "meta" else torch.bfloat16)
    report = {"device": torch.cuda.get_device_name(0) if cuda else "cpu", "tiny": tiny,
              "torch": torch.__version__, "software": _versions(), "components": {}}
    for name in names:
        if cuda:
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
        start = time.perf_counter()
        try:
            got = COMPONENTS[name](probe, tiny)
        except Exception as exc:  # noqa: BLE001 (recorded; the other components go on)
            got = {"error": f"{type(exc).__name__}: {exc}"[:500],
                   "trace": traceback.format_exc()[-2000:]}
        got["wall_s"] = time.perf_counter() - start
        got["host_rss_peak_gib"] = _rss_gib()
        if cuda:
            got["max_allocated_gib"] = torch.cuda.max_memory_allocated() / GIB
            got["max_reserved_gib"] = torch.cuda.max_memory_reserved() / GIB
        report["components"][name] = got
        print(_line(name, got), flush=True)
        if out is not None:
            write(out, report)
        import gc

        gc.collect()
    return report


def write(out: Path, report: dict) -> None:
    """The report, whole or not at all (a temp file renamed over `out`)."""
    from autocomp.core.records import write_text

    write_text(out, json.dumps(report, indent=1))


def _versions() -> dict:
    """The libraries the components were built with (None where one is not installed)."""
    from importlib import metadata

    out = {}
    for name in ("torch", "transformers", "diffusers", "open_clip_torch", "vllm"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def _line(name: str, got: dict) -> str:
    if "error" in got:
        return f"{name:17s} FAILED {got['error'][:200]}"
    if "skipped" in got:
        return f"{name:17s} skipped: {got['skipped']}"
    timings = ", ".join(f"{k} {v:.4g}" for k, v in got.items()
                        if isinstance(v, float) and k not in (
                            "wall_s", "host_rss_peak_gib", "max_allocated_gib",
                            "max_reserved_gib"))
    memory = (f", allocated {got['max_allocated_gib']:.1f} GiB, reserved "
              f"{got['max_reserved_gib']:.1f} GiB" if "max_allocated_gib" in got else "")
    params = (f"{got['parameters'] / 1e9:6.2f}B params {'/'.join(got['dtypes'])}: "
              if "parameters" in got else "")
    return (f"{name:17s} {params}{timings}{memory}, host RSS peak "
            f"{got['host_rss_peak_gib']:.1f} GiB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("gpu_check.json"))
    parser.add_argument("--only", nargs="*", choices=list(COMPONENTS), default=None)
    parser.add_argument("--tiny", action="store_true", help="tiny configs on the CPU")
    parser.add_argument("--device", default=None)
    args = parser.parse_args()
    import torch

    device = args.device or ("cpu" if args.tiny or not torch.cuda.is_available() else "cuda")
    try:  # before minutes of measuring, not after (a read-only folder lost them all)
        write(args.out, {"device": device, "tiny": args.tiny, "components": {}})
    except OSError as exc:
        print(f"gpu_check: cannot write {args.out}: {exc.strerror}; give --out a writable "
              "path", file=sys.stderr)
        return 1
    report = check(args.only or list(COMPONENTS), args.tiny, device, args.out)
    for line in compare(report):
        print(line)
    write(args.out, report)
    failed = [n for n, got in report["components"].items() if "error" in got]
    skipped = [n for n, got in report["components"].items() if "skipped" in got]
    over = report.get("plan", {}).get("over", [])
    print(f"wrote {args.out}; {len(report['components']) - len(failed) - len(skipped)} of "
          f"{len(report['components'])} components measured"
          + (f"; skipped: {', '.join(skipped)}" if skipped else "")
          + (f"; failed: {', '.join(failed)}" if failed else "")
          + (f"; OVER THE PLAN: {', '.join(over)}" if over else ""))
    return 1 if failed else (2 if over else 0)


if __name__ == "__main__":
    sys.exit(main())

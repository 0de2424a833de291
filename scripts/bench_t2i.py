"""`autocomp t2i`: what its metrics are worth against exact truth, and what it costs.

    python scripts/bench_t2i.py [--count 12] [--k 2]      # CPU, the embedded generator
    python scripts/bench_t2i.py --gpu [--tiny]            # real architectures, random weights

CPU: a run of four aspects (color, spatial, number, material) at N = 2-3 is compared under
a faithful and a faulty embedded generator (wrong value, swap, dropped object, wrong
count); it prints seconds per image, each metric's precision and recall of "unfaithful"
against the truth, per-aspect agreement of the answers with the truth, and each metric's
correlation with the true share of correct bindings.

--gpu: the GPU seconds of one t2i image with the paper's models at their real sizes and
random weights (nothing is downloaded): SD3.5-large's MMDiT at 1024 px, 28 steps, with
guidance (two passes a step) and the VAE decode; Gemma-3-12B asked the ~2N + 1 questions
of an image in one batch (one pass of the vision tower for all, models/encode_once.py;
12 new tokens each) and one VQAScore prompt (a forward pass). Printed beside autocomp's
estimate (autocomp/planning/costs.py) for the GPU, with their ratio. Text encoders (run once per
prompt) and the detector are left out of the measurement and named. `--tiny` shrinks the
models to check the script on a CPU (its seconds mean nothing).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from bench_likelihood import build, building  # scripts/ is on the path when run

RUN = """name: bench-t2i
seed: 1
concepts:
  - {{task: shape_color, n: [2, 3], count: {count}}}
  - {{task: shape_position, n: [2, 3], count: {count}}}
  - {{task: shape_count, n: [2], count: {count}}}
  - {{task: shape_material, n: [2], count: {count}}}
build: {{benchmarks: [swap]}}
"""
GENERATORS = """images_per_prompt: {k}
generators:
  - {{name: faithful, generator: procedural, options: {{size: 256}}}}
  - name: faulty
    generator: procedural
    options: {{size: 256, faults: {{swap: 0.2, wrong_value: 0.2, drop_object: 0.2}}}}
"""


def cpu(count: int, k: int) -> None:
    from autocomp.api import run as make_run
    from autocomp.t2i.compare import compare, read_models

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "run.yaml").write_text(RUN.format(count=count))
        (tmp / "gens.yaml").write_text(GENERATORS.format(k=k))
        run = make_run(tmp / "run.yaml", tmp / "run")
        models, settings = read_models(tmp / "gens.yaml")
        start = time.perf_counter()
        summary = compare(run.dir, models, tmp / "out", settings["k"])["summary"]
        seconds = time.perf_counter() - start
    images = sum(s["images"] for s in summary.values())
    print(f"t2i on the embedded generator: {images:,} images in {seconds:.1f} s "
          f"({1000 * seconds / images:.0f} ms per image drawn and scored, cpu)")
    for model, s in summary.items():
        t = s["truth"]
        print(f"\n{model}: {s['images']} images, {t['unfaithful']} unfaithful by the truth, "
              f"{t['unknown']} left out (truth unknown)")
        for key, v in t["verdicts"].items():
            p, r = v["precision"], v["recall"]
            print(f"  {key:<12} unfaithful verdict: precision "
                  f"{_share(p)}, recall {_share(r)} (tp {v['tp']}, fp {v['fp']}, "
                  f"fn {v['fn']}, tn {v['tn']})")
        for key, c in t["correlation"].items():
            if c["spearman"] is not None:
                print(f"  {key:<12} vs true share: Spearman {c['spearman']:.3f}, Kendall "
                      f"{c['kendall']:.3f} (n {c['n']})")
        for cell, a in sorted(t["agreement"].items()):
            aspect, n = cell.split("|")
            print(f"  agreement with truth  {aspect:<9} N={n}: {a['mean']:.1f}% "
                  f"[{a['interval'][0]:.1f}, {a['interval'][1]:.1f}] of {a['n']} questions")


def _share(s) -> str:
    return "-" if s is None else f"{s['value']:.1f}% [{s['interval'][0]:.1f}, " \
                                 f"{s['interval'][1]:.1f}]"


def _timed(fn, repeat: int) -> float:
    import torch

    fn()  # warm-up
    torch.cuda.synchronize() if torch.cuda.is_available() else None
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    torch.cuda.synchronize() if torch.cuda.is_available() else None
    return (time.perf_counter() - start) / repeat


def sd35(device, dtype, tiny: bool, repeat: int) -> dict:
    """Seconds of one image: 28 guided steps of SD3.5-large's MMDiT, then the VAE decode."""
    import torch
    from diffusers import AutoencoderKL, SD3Transformer2DModel

    size, steps = (64, 2) if tiny else (1024, 28)
    heads, layers = (2, 2) if tiny else (38, 38)
    with building(device, dtype):  # weights made on the device, in its dtype
        net = SD3Transformer2DModel(
            sample_size=size // 8, patch_size=2, in_channels=16, num_layers=layers,
            attention_head_dim=64, num_attention_heads=heads, joint_attention_dim=4096,
            caption_projection_dim=64 * heads, pooled_projection_dim=2048, out_channels=16,
            pos_embed_max_size=192, qk_norm="rms_norm").eval()
        vae = AutoencoderKL(in_channels=3, out_channels=3, latent_channels=16,
                            down_block_types=("DownEncoderBlock2D",) * 4,
                            up_block_types=("UpDecoderBlock2D",) * 4,
                            block_out_channels=(128, 256, 512, 512), layers_per_block=2,
                            use_quant_conv=False, use_post_quant_conv=False).eval()
    latents = torch.randn(1, 16, size // 8, size // 8, device=device, dtype=dtype)
    text = torch.randn(2, 333, 4096, device=device, dtype=dtype)
    pooled = torch.randn(2, 2048, device=device, dtype=dtype)

    def image():
        x = latents
        with torch.inference_mode():
            for t in torch.linspace(1000, 0, steps, device=device):
                both = torch.cat([x, x])
                v = net(hidden_states=both, encoder_hidden_states=text,
                        pooled_projections=pooled, timestep=t.expand(2)).sample
                cond, uncond = v.chunk(2)
                x = x - (uncond + 4.5 * (cond - uncond)) / steps
            return vae.decode(x).sample

    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    got = _timed(image, repeat)
    peak = torch.cuda.max_memory_allocated() / 2**30 if device == "cuda" else None
    return {"seconds": got, "peak_gib": peak, "size": size, "steps": steps}


def gemma(device, tiny: bool, questions: int, repeat: int) -> dict:
    """Seconds of one image's questions (one batch, 12 new tokens each) and of its
    VQAScore forward pass, on Gemma-3-12B's architecture."""
    import torch

    from autocomp.models.encode_once import encode_once, groups

    _, model = build(tiny, device)  # bench_likelihood's: the same model, random weights
    cfg = model.config
    image_tokens, side = cfg.mm_tokens_per_image, cfg.vision_config.image_size
    ids = {"image": cfg.image_token_index, "boi": cfg.boi_token_index,
           "eoi": cfg.eoi_token_index}

    def prompt(rows: int, words: int) -> dict:
        gen = torch.Generator().manual_seed(rows)
        top = min(900, cfg.text_config.vocab_size)  # ordinary tokens, past the special ones
        body = torch.randint(10, top, (rows, words), generator=gen)
        image = torch.full((rows, image_tokens), ids["image"])
        seq = torch.cat([torch.full((rows, 1), 2), torch.full((rows, 1), ids["boi"]), image,
                         torch.full((rows, 1), ids["eoi"]), body], dim=1)
        types = torch.zeros_like(seq)
        types[:, 2:2 + image_tokens] = 1
        pixels = torch.randn(1, 3, side, side).expand(rows, -1, -1, -1)
        return {"input_ids": seq.to(device), "attention_mask": torch.ones_like(seq).to(device),
                "token_type_ids": types.to(device), "pixel_values": pixels.to(device, model.dtype)}

    asked = prompt(questions, 40)
    scored = prompt(1, 60)

    def ask():
        with torch.inference_mode(), encode_once(model, groups([0] * questions)):
            model.generate(**asked, do_sample=False, max_new_tokens=12, min_new_tokens=12)

    def vqascore():
        with torch.inference_mode():
            model(**scored)

    def decode_step(rows: int) -> float:
        """Seconds of one decoding step at `rows` prompts: (12 tokens - 1 token) / 11."""
        batch = prompt(rows, 40)

        def run(tokens):
            with torch.inference_mode(), encode_once(model, groups([0] * rows)):
                model.generate(**batch, do_sample=False, max_new_tokens=tokens,
                               min_new_tokens=tokens)
        return (_timed(lambda: run(12), repeat) - _timed(lambda: run(1), repeat)) / 11

    out = {"questions": questions, "ask": _timed(ask, repeat),
           "vqascore": _timed(vqascore, repeat),
           "step": {rows: decode_step(rows) for rows in (questions, 32)},
           "attention": getattr(model.config, "_attn_implementation", None)}
    if device == "cuda":
        out["peak_gib"] = torch.cuda.max_memory_allocated() / 2**30
    return out


def gpu(tiny: bool, mean_n: float, repeat: int) -> None:
    import torch

    from autocomp.planning import costs

    device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cpu" and not tiny:
        sys.exit("--gpu needs a CUDA device (or --tiny to check the script on a CPU)")
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    name = torch.cuda.get_device_name() if device == "cuda" else "cpu"
    gpu_key = next((k for k in costs.GPUS if k in name), None)
    questions = round(2 * mean_n + 1)
    image = sd35(device, dtype, tiny, repeat)
    if device == "cuda":  # SD3.5's weights went with its function's frame
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    vlm = gemma(device, tiny, questions, repeat)
    measured = {"image": image["seconds"], "questions": vlm["ask"],
                "vqascore": vlm["vqascore"]}
    print(f"t2i per image on {name}{' (tiny: seconds mean nothing)' if tiny else ''}, "
          "random weights, real architectures:")
    estimates = {}
    if gpu_key and not tiny:
        estimates = {"image": costs.seconds("image", {}, gpu_key),
                     "questions": costs.seconds("vqa", {"batch_size": questions}, gpu_key,
                                                mean_n=questions),
                     "vqascore": costs.seconds("vqascore", {}, gpu_key)}
    for part, seconds in measured.items():
        est = estimates.get(part)
        line = f"  {part:<10} {seconds:8.3f} s"
        if est:
            line += (f"   estimate {est[0]:.3f}-{est[1]:.3f} s ({gpu_key}); measured / "
                     f"best estimate {seconds / est[0]:.2f}")
        print(line)
    total = sum(measured.values())
    print(f"  total      {total:8.3f} s per image ({questions} questions), SD3.5 "
          f"{image['size']} px {image['steps']} steps with guidance; peak GPU memory: SD3.5 "
          f"{_gib(image['peak_gib'])}, Gemma-3 {_gib(vlm.get('peak_gib'))}")
    if estimates:
        low = sum(e[0] for e in estimates.values())
        high = sum(e[1] for e in estimates.values())
        print(f"  estimate   {low:.3f}-{high:.3f} s for the same parts "
              "(autocomp/planning/costs.py)")
    print("  left out: the text encoders (once per prompt) and the detector "
          f"(estimate {_detect(gpu_key)})")
    steps = ", ".join(f"{1000 * sec:.1f} ms at {rows} prompts" for rows, sec in vlm["step"].items())
    print(f"  Gemma-3 decoding step ({vlm['attention']} attention): {steps}")
    print(json.dumps({"device": name, "measured": measured, "decode_step": vlm["step"],
                      "estimates": {k: list(v) for k, v in estimates.items()}}))


def _gib(x) -> str:
    return "-" if x is None else f"{x:.1f} GiB"


def _detect(gpu_key) -> str:
    from autocomp.planning import costs

    if gpu_key is None:
        return "-"
    low, high = costs.seconds("detect", {}, gpu_key, masks=True)
    return f"{low:.2f}-{high:.2f} s with masks"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=12, help="concepts per task and N")
    parser.add_argument("--k", type=int, default=2, help="images per prompt")
    parser.add_argument("--gpu", action="store_true", help="time the GPU models instead")
    parser.add_argument("--tiny", action="store_true", help="with --gpu: tiny models")
    parser.add_argument("--mean-n", type=float, default=2.5, help="with --gpu: mean N")
    parser.add_argument("--repeat", type=int, default=2, help="with --gpu: timed images")
    args = parser.parse_args()
    if args.gpu:
        gpu(args.tiny, args.mean_n, args.repeat)
    else:
        cpu(args.count, args.k)


if __name__ == "__main__":
    main()

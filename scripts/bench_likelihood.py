"""Likelihood scoring (vqascore, visualgpt) throughput: pairs per second through the
scorers' own code (autocomp/models/likelihood.py), with an image's captions sharing one
pass of the vision tower (encode_once) against every row encoding its image.

    python scripts/bench_likelihood.py            # Gemma-3-12B's architecture, random
                                                  # weights, on the GPU
    python scripts/bench_likelihood.py --tiny     # a tiny Gemma-3 on a CPU (wiring only)

The processor is Gemma-3's image processor (896 px) with the test suite's small BPE
tokenizer, its image tokens wired to the model's: prompts are a few more tokens than
Gemma's own tokenizer gives; the 256 image tokens dominate. It prints seconds per pair for
one image with 32 captions (a Confusion item's share) and for 32 images with one caption
each, and how many image rows the vision tower encoded.
"""

from __future__ import annotations

import argparse
import sys
import time
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))


@contextmanager
def building(device, dtype):
    """Modules built inside are made on `device` in `dtype` (no copy in host memory)."""
    import torch

    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device(device):
            yield
    finally:
        torch.set_default_dtype(previous)


def build(tiny: bool, device: str):
    """(processor, model): Gemma-3-12B's architecture (or a tiny one) with random weights,
    made on `device` (bf16 on a GPU)."""
    import torch
    import transformers as T
    from tiny_models import CHAT_TEMPLATE, _gemma_text_config, _gemma_tokenizer

    tok, ids = _gemma_tokenizer()
    if tiny:
        text, side, per_image = _gemma_text_config(ids, len(ids)), 32, 4
        vision = dict(image_size=32, patch_size=8, hidden_size=32, intermediate_size=37,
                      num_hidden_layers=2, num_attention_heads=2)
    else:
        text = dict(vocab_size=262208, hidden_size=3840, intermediate_size=15360,
                    num_hidden_layers=48, num_attention_heads=16, num_key_value_heads=8,
                    head_dim=256, sliding_window=1024, pad_token_id=ids["<pad>"],
                    bos_token_id=ids["<bos>"], eos_token_id=ids["<eos>"])
        side, per_image = 896, 256
        vision = dict(image_size=896, patch_size=14, hidden_size=1152, intermediate_size=4304,
                      num_hidden_layers=27, num_attention_heads=16)
    cfg = T.Gemma3Config(text_config=text, vision_config=vision, mm_tokens_per_image=per_image,
                         boi_token_index=ids["<start_of_image>"],
                         eoi_token_index=ids["<end_of_image>"],
                         image_token_index=ids["<image_soft_token>"])
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    torch.manual_seed(0)
    with building(device, dtype):
        model = T.Gemma3ForConditionalGeneration(cfg).eval()
    proc = T.Gemma3Processor(image_processor=T.Gemma3ImageProcessor(
        size={"height": side, "width": side}), tokenizer=tok, image_seq_length=per_image,
        chat_template=CHAT_TEMPLATE)
    tok.padding_side = "left"
    return proc, model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tiny", action="store_true")
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()
    import numpy as np
    import torch
    from PIL import Image

    from autocomp.eval.scorers.likelihood import VQA_ANSWER, VQA_QUESTION
    from autocomp.models import encode_once
    from autocomp.models.likelihood import continuation_logprobs

    device = "cuda" if torch.cuda.is_available() and not args.tiny else "cpu"
    proc, model = build(args.tiny, device)
    rng = np.random.default_rng(0)
    images = [Image.fromarray(rng.integers(0, 255, (512, 512, 3), dtype=np.uint8))
              for _ in range(32)]
    captions = [f"a {c} cube to the left of a {d} sphere on a white background"
                for c in ("red", "blue", "green", "pink") for d in
                ("gold", "teal", "black", "white", "navy", "lime", "cyan", "olive")]
    rows_one = [(images[0], VQA_QUESTION.format(caption=c), VQA_ANSWER) for c in captions]
    rows_many = [(im, VQA_QUESTION.format(caption=captions[0]), VQA_ANSWER) for im in images]
    bs = args.batch_size
    counted: list = []
    original = encode_once._count

    def count(counter, pixels):
        original(counted, pixels)

    encode_once._count = count

    def score(rows, shared: bool):
        for i in range(0, len(rows), bs):
            part = rows[i:i + bs]
            firsts = None if shared else list(range(len(part)))
            continuation_logprobs(proc, model, part, firsts)

    def timed(rows, shared):
        """Seconds per pair (the best of 3 passes over `rows`) and the image rows the
        vision tower encoded in one pass."""
        best = float("inf")
        for _ in range(3):
            counted.clear()
            if device == "cuda":
                torch.cuda.synchronize()
            start = time.perf_counter()
            score(rows, shared)
            if device == "cuda":
                torch.cuda.synchronize()
            best = min(best, time.perf_counter() - start)
        return best / len(rows), sum(counted)

    name = torch.cuda.get_device_name() if device == "cuda" else "cpu"
    print(f"likelihood scoring on {name}{' (tiny: seconds mean nothing)' if args.tiny else ''}"
          f", batch {bs} rows:")
    cases = (("1 image x 32 captions, encode once", rows_one, True),
             ("1 image x 32 captions, every row", rows_one, False),
             ("32 images x 1 caption", rows_many, True))
    for _, rows, shared in cases:  # warm-up: every shape once
        score(rows, shared)
    for label, rows, shared in cases:
        per, encoded = timed(rows, shared)
        print(f"  {label:<36} {1000 * per:8.1f} ms per pair, {1 / per:7.1f} pairs/s, "
              f"vision tower rows {encoded}")


if __name__ == "__main__":
    main()

"""Seconds per decoding step of the captions writer's sampler, before and after issue 51.

    python scripts/bench_sampler.py [--rows 32] [--vocab 262208] [--steps 5] [--device cpu]

Logits of Gemma-3's size (32 prompts x 262,208 words, bf16 as the model gives them): a
language model's next-token distribution is peaked, so each row has a few dozen likely
tokens over a noisy tail; a second set makes one row in 16 flat (its nucleus is wider than
the top k: the fallback's cost).

  before  the logits copied to the host, softmax, a full sort of every row, the nucleus,
          one multinomial per row over the whole vocabulary (captions/llm.py before)
  after   RowSampler: on the logits' device, the nucleus among the top 1,024 (torch.topk),
          a row whose nucleus is wider sorted whole (counted), one multinomial per row
          over the top k with a generator seeded per row and step

Prints seconds per step for each, the ratio, the wide rows, and checks that the draws of
`after` equal those of the full sort (RowSampler(top_k=None)) on every row.
"""

from __future__ import annotations

import argparse
import time


def before_step(scores, generators, temperature: float = 0.7, top_p: float = 0.9):
    """The sampler as it was: everything on the host, every row sorted whole."""
    import torch

    logits = scores.float().cpu() / max(temperature, 1e-6)
    probs = torch.softmax(logits, dim=-1)
    ordered, order = torch.sort(probs, descending=True, dim=-1)
    keep = ordered.cumsum(-1) - ordered < top_p
    ordered = torch.where(keep, ordered, torch.zeros_like(ordered))
    out = torch.full_like(scores, float("-inf"))
    for row, gen in enumerate(generators):
        pick = order[row, torch.multinomial(ordered[row], 1, generator=gen)]
        out[row, pick] = 0.0
    return out


def make_logits(rows: int, vocab: int, step: int, device: str, flat_every: int = 0):
    import torch

    gen = torch.Generator().manual_seed(step)
    x = torch.randn(rows, vocab, generator=gen) * 2.0
    likely = torch.randint(0, vocab, (rows, 24), generator=gen)
    x.scatter_add_(1, likely, 9.0 + 3.0 * torch.rand(rows, 24, generator=gen))
    if flat_every:
        x[::flat_every] = torch.randn(vocab, generator=gen) * 0.1  # a wide nucleus
    return x.to(torch.bfloat16).to(device)


def main() -> None:
    import torch

    from autocomp.captions.llm import RowSampler

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=32)
    parser.add_argument("--vocab", type=int, default=262_208)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    seeds = list(range(1000, 1000 + args.rows))
    print(f"{args.rows} x {args.vocab:,} logits (bf16) on {args.device}, {args.steps} steps, "
          f"torch threads {torch.get_num_threads()}:")
    same = True
    for flat, label in ((0, "peaked rows"), (16, "one row in 16 flat")):
        logits = [make_logits(args.rows, args.vocab, s, args.device, flat)
                  for s in range(args.steps)]

        def timed(fn, logits=logits) -> tuple[float, list]:
            out = [fn(logits[0])]  # one step not timed (allocations, kernels)
            if args.device.startswith("cuda"):
                torch.cuda.synchronize()
            start = time.perf_counter()
            out += [fn(x) for x in logits[1:]]
            if args.device.startswith("cuda"):
                torch.cuda.synchronize()
            return (time.perf_counter() - start) / max(1, len(logits) - 1), out

        gens = [torch.Generator().manual_seed(s) for s in seeds]
        t_before, _ = timed(lambda x, gens=gens: before_step(x, gens))
        after = RowSampler(seeds, 0.7, 0.9)
        t_after, got = timed(lambda x, after=after: after(None, x))
        reference = RowSampler(seeds, 0.7, 0.9, top_k=None)
        want = [reference(None, x) for x in logits]
        equal = all(torch.equal(a.argmax(-1), b.argmax(-1))
                    for a, b in zip(got, want, strict=True))
        same &= equal
        print(f"  {label}:")
        print(f"    before (host, full sort)    {t_before * 1000:8.1f} ms per step")
        print(f"    after  (device, top {after.top_k:,})   {t_after * 1000:8.1f} ms per step  "
              f"{t_before / t_after:5.1f}x faster")
        print(f"    wide rows (sorted whole): {after.wide} of {after.draws} draws; draws "
              f"equal to the full sort on every row: {equal}")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()

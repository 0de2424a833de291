"""The paired test under tie-aware credit (issue 67): how often the sign-flip test and the
McNemar test on rounded expected discordant counts (before) reject at 5%, with no
difference and with one.

    python scripts/bench_signflip.py [--sims 2000] [--items 80] [--seed 11]

Each simulated pair of results scores `--items` items with tie credits drawn from {0, 1,
1/2, 1/3, 1/4}. No difference: each item's two credits are exchangeable (swapped at
random). A difference: one side's credit raised by 0, 1/4 or 1/2 (probabilities 0.6, 0.25,
0.15). Prints each test's rejection rate (size, then power) with its n.
"""

from __future__ import annotations

import argparse

import numpy as np

from autocomp.eval.exact import mcnemar, sign_flip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=2000)
    parser.add_argument("--items", type=int, default=80)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    credits = np.array([0.0, 1.0, 1 / 2, 1 / 3, 1 / 4])
    n = args.items
    got = {k: [] for k in ("null flip", "null old", "diff flip", "diff old")}

    def old(a, b):
        return mcnemar(round(float((a * (1 - b)).sum())), round(float(((1 - a) * b).sum())))

    for _ in range(args.sims):
        x, y = rng.choice(credits, n), rng.choice(credits, n)
        swap = rng.random(n) < 0.5
        a, b = np.where(swap, y, x), np.where(swap, x, y)
        got["null flip"].append(sign_flip(a - b)[0] <= 0.05)
        got["null old"].append(old(a, b) <= 0.05)
        better = np.clip(x + rng.choice([0.0, 0.25, 0.5], n, p=[0.6, 0.25, 0.15]), 0, 1)
        got["diff flip"].append(sign_flip(better - y)[0] <= 0.05)
        got["diff old"].append(old(better, y) <= 0.05)
    rate = {k: float(np.mean(v)) for k, v in got.items()}
    print(f"{args.sims:,} simulated pairs of results, {n} items each, rejections at 5%:")
    print(f"  no difference (size):  sign-flip {rate['null flip']:.3f}, rounded McNemar "
          f"{rate['null old']:.3f}")
    print(f"  a difference (power):  sign-flip {rate['diff flip']:.3f}, rounded McNemar "
          f"{rate['diff old']:.3f} ({rate['diff flip'] / max(rate['diff old'], 1e-9):.1f}x)")


if __name__ == "__main__":
    main()

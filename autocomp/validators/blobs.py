"""`color-blobs`: the embedded detector, for procedural and white-background images.

Foreground = ink (near-black outline) pixels, plus, when the image border is white, every
pixel that is not near white. Holes are filled and the connected components of what is
left are the blobs. Each blob is named by its silhouette: every known shape is drawn at
the blob's area with its own aspect ratio, centred on the blob, and the best
intersection-over-union names it (below `min_iou` the blob stays unnamed). Masks come with
the detections, so the background check can use them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from autocomp.core.backend import Backend
from autocomp.core.errors import AutocompError
from autocomp.core.families import contract_example
from autocomp.core.masks import fill_holes
from autocomp.core.pixel_minmax import channel_max, channel_min
from autocomp.synth.shapes import INK_MAX, SHAPES, fill_fraction, silhouette
from autocomp.validators.base import Detection

WHITE_MIN = 231  # a pixel whose channels are all >= this is white


@contract_example()
class ColorBlobDetector(Backend):
    gpu_cost = "none"  # runs on the CPU (core/backend.Backend.gpu_cost)

    def __init__(self, min_area: float = 0.002, min_iou: float = 0.8):
        self.min_area = min_area  # share of the image a blob must cover
        self.min_iou = min_iou

    @classmethod
    def validate_options(cls, out: dict, *, file=None, field="options") -> None:
        for key in out:
            if not 0 < out[key] < 1:
                raise AutocompError(f"expected a number in (0, 1), got {out[key]!r}",
                                    file=file, field=f"{field}.{key}")

    @classmethod
    def cannot_handle(cls, task, options: dict | None = None) -> str | None:
        """It names blobs by the built-in shapes' silhouettes, so it can check only tasks
        whose objects are those shapes."""
        missing = [n for n in task.objects.names if n not in SHAPES]
        if missing:
            return (f"it recognises only the shapes {', '.join(SHAPES)}; vocabulary "
                    f"'{task.objects.name}' has {', '.join(repr(m) for m in missing[:5])}"
                    f"{' ...' if len(missing) > 5 else ''} (use grounding-dino+sam2)")
        return None

    def detect(self, image: np.ndarray, labels: Sequence[str] = ()) -> list[Detection]:
        """Blobs of an RGB uint8 array, named by silhouette (all known shapes compete)."""
        from scipy import ndimage

        fg = foreground(image)
        comps, count = ndimage.label(fg)
        out = []
        min_px = self.min_area * fg.size
        for k, sl in enumerate(ndimage.find_objects(comps), start=1):
            mask = comps[sl] == k
            area = int(mask.sum())
            if area < min_px:
                continue
            box = (sl[1].start, sl[0].start, sl[1].stop, sl[0].stop)
            label, score = classify(mask)
            full = np.zeros(fg.shape, bool)
            full[sl] = mask
            out.append(Detection(label if score >= self.min_iou else None, box, score, full))
        return sorted(out, key=lambda d: (d.box[1], d.box[0]))


def foreground(image: np.ndarray) -> np.ndarray:
    ink = channel_max(image) <= INK_MAX
    border = np.concatenate([image[0], image[-1], image[:, 0], image[:, -1]])
    fg = ink
    if np.median(border.min(axis=1)) >= WHITE_MIN:  # white background: all non-white
        fg = ink | (channel_min(image) < WHITE_MIN)
    return fill_holes(fg)


def classify(mask: np.ndarray) -> tuple[str, float]:
    """The known shape whose silhouette best overlaps `mask` (cropped to its box), and the
    intersection-over-union."""
    area = mask.sum()
    h, w = mask.shape
    best, best_iou = "", 0.0
    for name, shape in SHAPES.items():
        th = np.sqrt(area / (fill_fraction(name) * shape.aspect))
        tw = shape.aspect * th
        tw_i, th_i = max(2, round(tw)), max(2, round(th))
        tmpl = silhouette(name, tw_i, th_i)
        iou = _iou_centred(mask, tmpl)
        if iou > best_iou:
            best, best_iou = name, iou
    return best, float(best_iou)


def _iou_centred(a: np.ndarray, b: np.ndarray) -> float:
    """IoU of two masks placed with their box centres together."""
    H, W = max(a.shape[0], b.shape[0]), max(a.shape[1], b.shape[1])
    ca = np.zeros((H, W), bool)
    cb = np.zeros((H, W), bool)
    ay, ax = (H - a.shape[0]) // 2, (W - a.shape[1]) // 2
    by, bx = (H - b.shape[0]) // 2, (W - b.shape[1]) // 2
    ca[ay:ay + a.shape[0], ax:ax + a.shape[1]] = a
    cb[by:by + b.shape[0], bx:bx + b.shape[1]] = b
    union = np.logical_or(ca, cb).sum()
    return float(np.logical_and(ca, cb).sum() / union) if union else 0.0

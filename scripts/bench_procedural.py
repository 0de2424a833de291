"""Throughput of the embedded pipeline's backends on this machine (one process).

    python scripts/bench_procedural.py [--images 400] [--size 256]

Prints images per second of the procedural generator (draw + PNG encode) and of the
validation cascade (color-blobs detector + background check + pixels answerer), for the
minimal and contextual tracks, and the ratio to the paper's SD-3.5 rate per GPU (about
0.2 images/s: 100k images in 8.5 h on 16 A100).
"""

from __future__ import annotations

import argparse
import io
import time

import numpy as np

from autocomp.concepts.load import load_task
from autocomp.concepts.sampling import sample_concepts
from autocomp.synth.base import ImageRequest
from autocomp.synth.procedural import ProceduralGenerator
from autocomp.validators.blobs import ColorBlobDetector
from autocomp.validators.checks import validate_image
from autocomp.validators.pixels import PixelAnswerer

PAPER_PER_GPU = 100_000 / (8.5 * 3600 * 16)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--images", type=int, default=400)
    parser.add_argument("--size", type=int, default=256)
    args = parser.parse_args()
    gen, det, ans = ProceduralGenerator(args.size), ColorBlobDetector(), PixelAnswerer()
    jobs = []
    for name in ("shape_color", "shape_position"):
        task = load_task(name)
        for c in sample_concepts(task, 3, args.images // 4, seed=0):
            jobs.append((task, c))
    for track in ("minimal", "contextual"):
        start = time.perf_counter()
        images = []
        for task, c in jobs:
            out = gen.generate_one(ImageRequest(c.id, c.graph, task, track, c.seed, ""))
            out.image.save(io.BytesIO(), format="PNG")
            images.append(np.asarray(out.image))
        t_gen = time.perf_counter() - start
        start = time.perf_counter()
        passed = 0
        for (task, c), arr in zip(jobs, images, strict=True):
            results = validate_image(arr, c.graph, task, track, det, ans, 0.7, 190)
            passed += all(r.passed for r in results)
        t_val = time.perf_counter() - start
        n = len(jobs)
        print(f"{track:<10} {n} images {args.size}px: generate {n / t_gen:7.1f} img/s "
              f"({n / t_gen / PAPER_PER_GPU:6.0f}x the paper's SD-3.5 rate per GPU), "
              f"validate {n / t_val:6.1f} img/s, {passed}/{n} passed")


if __name__ == "__main__":
    main()

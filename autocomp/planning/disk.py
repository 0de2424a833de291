"""Disk under a run folder, planned by the dry-run: bytes and files (inodes) for the PNGs
at the generator's stated bytes a pixel, the records and the benchmarks. Each stage checks
the free space its rest needs before it starts (runtime/space.py, exit 83 when short)."""

from __future__ import annotations

from autocomp.core.registry import resolve


def plan(cfg, concepts: int, images: int) -> dict:
    """Bytes and files the run writes: a PNG an image at the generator's stated bytes per
    pixel (the run measures its own once written: runtime/space.py checks each stage's
    rest before it starts), a record line per concept, image and validated image in a
    part file and again in merged.jsonl, and the benchmarks (~1 kB an item, several items
    an image)."""
    from autocomp.runtime.stage import RECORD_BYTES
    from autocomp.synth.stage import png_bytes

    spec = cfg.generate.generator
    generator = resolve("generator", spec.name)
    every = cfg.generate.generators()  # `images` counts each generator's (generate.compare)
    png = sum(png_bytes(resolve("generator", g.name), g.options) for _, g in every) / len(every)
    stated = getattr(generator, "png_bytes_per_pixel", None)
    records = (concepts * 2 + images * 2) * RECORD_BYTES
    bench = images * 4 * 1000.0
    return {"png": png, "images": images, "bytes": images * png + records + bench,
            "files": images + 64, "per_pixel": stated,
            "size": int({**generator.defaults(), **spec.options}.get("size", 1024))}


def format_plan(d: dict) -> str:
    from autocomp.runtime.space import size

    return (f"Disk under the run folder: {size(d['bytes'])} and {d['files']:,} files "
            f"(inodes): {d['images']:,} PNGs at {d['size']} px x {size(d['png'])} "
            + (f"({d['per_pixel']:g} bytes a pixel, the generator's stated figure)"
               if d["per_pixel"] else "(1 byte a pixel assumed: the generator states none)")
            + ", the records "
            "and the benchmarks; each stage checks the free space and inodes its rest needs "
            "before it starts (exit 83 when short).")

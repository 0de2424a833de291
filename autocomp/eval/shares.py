"""`eval --distributed`: every image and caption encoded once per model, not once per rank
that happens to score a benchmark holding it.

Before any cell is scored, each rank encodes its share of the distinct images and captions
of all the chosen benchmarks (split by a hash of each), model after model, into the shared
cache (per-process shards: eval/cache.py), and the ranks meet through files
(runtime/sync.py). Then the cells are dealt out, and every vector they need is in the cache.
Scorers that see whole items (reference, multiple choice, VLMs) have nothing to share.
"""

from __future__ import annotations

import hashlib
import uuid
from pathlib import Path

from autocomp.core.errors import AutocompError
from autocomp.core.log import package_logger

log = package_logger(__name__)

CHUNK = 4096  # refs encoded per call (bounds the vectors held at once)


def _mine(value: str, rank: int, world: int) -> bool:
    digest = hashlib.blake2b(value.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % world == rank


def distinct_inputs(benches) -> tuple[dict[str, str], list[str]]:
    """(image ref -> an item naming it, distinct captions) over `benches`, in order."""
    from autocomp.eval.items import captions_of, image_refs

    images: dict[str, str] = {}
    captions: dict[str, None] = {}
    for bench in benches:
        for item in bench.items():
            for ref in image_refs(item):
                images.setdefault(ref, item["id"])
            captions.update(dict.fromkeys(captions_of(item)))
    return images, list(captions)


def encode_shares(models, benches, suite, cache_dir: Path, rank: int, world: int, share,
                  load, wait_timeout: float | None = None) -> None:
    """This rank's share of every model's images and captions into the cache, then wait
    for the other ranks. `load(spec)` gives a scorer; `share` is the launch's broadcast."""
    from autocomp.eval.harness import Harness
    from autocomp.runtime.sync import WAIT_TIMEOUT, Peers

    token = share(uuid.uuid4().hex if rank == 0 else None)
    peers = Peers(cache_dir, token, rank, world, wait_timeout or WAIT_TIMEOUT)
    try:
        images, captions = distinct_inputs(benches)
        my_images = [r for r in images if _mine(r, rank, world)]
        my_captions = [c for c in captions if _mine(c, rank, world)]
        for spec in dict.fromkeys(models):
            scorer = load(spec)
            if scorer.scores_items or scorer.scores_pairs:  # whole items, or (image,
                continue  # caption) pairs: scored per cell, nothing to share ahead
            try:
                harness = Harness(scorer, suite.root, suite.tasks, cache_dir, also=suite.also)
                for i in range(0, max(len(my_captions), len(my_images)), CHUNK):
                    part = my_images[i:i + CHUNK]
                    harness.fill(my_captions[i:i + CHUNK], {r: images[r] for r in part})
                log.info(f"shared {spec}: rank {rank}/{world} encoded {harness.encoded['images']:,}"
                     f" images and {harness.encoded['captions']:,} captions")
                harness.close()
            except AutocompError as exc:  # the cells say it again, and go on without it
                log.info(f"fail   {spec}: {exc}")
        peers.finished("encode")
        peers.wait_all("encode")
    finally:
        peers.close()

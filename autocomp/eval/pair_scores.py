"""Image x caption score matrices from a scorer that scores each (image, caption) pair (a
generative VLM's likelihood: eval/scorers/likelihood.py). Each pair's score is cached by
the image's content and the caption's text, like a 1-d embedding, so a pair scored for one
benchmark is read back for another; an image's missing captions go to the scorer together,
a few images per call, the next images decoded while the scorer works."""

from __future__ import annotations

import numpy as np

from autocomp.eval.cache import keep, text_key
from autocomp.eval.items import captions_of, image_refs, split_ref
from autocomp.eval.matrix import is_matrix


def pair_scores(harness, chunk: list[dict]) -> list[np.ndarray]:
    """Image x caption matrices from a scorer that scores each (image, caption) pair,
    cached per (image content, caption); an image's missing captions go to the scorer
    together, a few images per call."""
    refs = {ref: item["id"] for item in chunk for ref in image_refs(item)}
    ikeys, files = harness.image_keys(list(refs), refs)
    wanted: dict[str, dict] = {}  # image content key -> {caption: pair key}
    for item in chunk:
        for ref in image_refs(item):
            pairs = wanted.setdefault(ikeys[ref], {})
            for c in captions_of(item):
                pairs.setdefault(c, f"{ikeys[ref]}|{text_key(c)}")
    missing = set(harness.cache.missing(k for p in wanted.values() for k in p.values()))
    ref_of = {k: r for r, k in ikeys.items()}
    todo = [(key, [c for c, k in pairs.items() if k in missing])
            for key, pairs in wanted.items()]
    todo = [(key, caps) for key, caps in todo if caps]
    scores: dict = {}
    groups = _groups(todo, harness.scorer.batch_size)

    def decode(group):
        return [harness.workers.submit(harness.decode_image, files[ref_of[key]],
                                       split_ref(ref_of[key])[1], refs[ref_of[key]])
                for key, _ in group]

    ahead = decode(groups[0]) if groups else []
    for i, group in enumerate(groups):
        images = [f.result() for f in ahead]
        ahead = decode(groups[i + 1]) if i + 1 < len(groups) else []  # while scoring
        got = harness.scorer.score_pairs([(image, caps) for image, (_, caps)
                                       in zip(images, group, strict=True)])
        keys = [wanted[key][c] for key, caps in group for c in caps]
        values = np.concatenate([np.asarray(g, dtype=np.float32) for g in got])
        harness.cache.put_many(keys, values[:, None])
        keep(scores, keys, values[:, None])
        harness.encoded["images"] += len(group)
        harness.encoded["pairs"] = harness.encoded.get("pairs", 0) + len(keys)
        if harness.tick is not None:
            harness.tick()
    scores.update(harness.cache.get_many([k for p in wanted.values() for k in p.values()
                                       if k not in scores]))
    out = []
    for item in chunk:
        caps = captions_of(item)
        matrix = np.array([[float(scores[wanted[ikeys[ref]][c]][0]) for c in caps]
                           for ref in image_refs(item)], dtype=np.float64)
        out.append(matrix if is_matrix(item) else matrix[0])
    return out



def _groups(todo: list[tuple], rows: int) -> list[list[tuple]]:
    """(image, captions) jobs in groups of about `rows` pairs (an image's captions never
    split: the scorer batches them itself), so a long chunk reports progress as it goes."""
    out: list[list[tuple]] = [[]]
    held = 0
    for job in todo:
        if out[-1] and held + len(job[1]) > rows:
            out.append([])
            held = 0
        out[-1].append(job)
        held += len(job[1])
    return [g for g in out if g]

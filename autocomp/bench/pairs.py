"""Synthetic Winoground items (build.benchmarks: [winoground]): a concept and its swap
partner (concepts/partners.py), both generated and validated, as one item of 2 images x
2 captions whose truth is exact: caption k states image k's scene graph.

  bench/<task>-n<N>/<track>-winoground.jsonl
    {id, concept, partner, task, n, track, kind: "winoground", images: [a, b],
     captions: [a's, b's], truth: [[1, 0], [0, 1]], graphs: [a's, b's], paired}

Minimal captions are the template's; contextual ones are the original's caption and the
same caption with the swapped words (the partner's prompt), so the two differ only there.
Two drawn concepts that are each other's swap make a minimal item too (not a contextual
one: their captions were written apart).
Chance: text 25%, image 25%, group 16.7% (eval/matrix.py).
"""

from __future__ import annotations

from autocomp.core.records import TRACKS
from autocomp.core.run_paths import BenchFile

KIND = "winoground"


def _pairs(concepts: dict, tasks: dict):
    """(original id, partner id, tracks) of every pair: a drawn concept and the partner
    drawn for it (both tracks), or two drawn concepts that are each other's swap (the
    minimal track only: their contextual captions were written apart, so they differ in
    more than the swapped words)."""
    from autocomp.concepts.partners import partner_graph
    from autocomp.concepts.sampling import Concept

    order = {cid: i for i, cid in enumerate(concepts)}  # which of two drawn ones leads
    for cid, c in concepts.items():
        if c.partner_of:
            if c.partner_of in concepts:
                yield c.partner_of, cid, TRACKS
            continue
        graph = partner_graph(tasks[c.task], c.scene)
        other = Concept(c.task, c.n, graph).id if graph is not None else None
        if other in concepts and not concepts[other].partner_of and order[cid] < order[other]:
            yield cid, other, ("minimal",)


INDEPENDENT = "the swap was drawn as a concept of its own: contextual captions written apart"


def winoground_items(concepts: dict, captions: dict, passed: dict, tasks: dict, drop=None):
    """(bench file, item) for every pair whose two images passed in a track; `drop(file,
    reason)` hears of each contextual item not built, though both contextual images passed,
    because the pair's two concepts were drawn independently (their captions differ in more
    than the swapped words)."""
    for original, cid, tracks in _pairs(concepts, tasks):
        partner = concepts[cid]
        a, b = passed.get(original, {}), passed.get(cid, {})
        if drop is not None and "contextual" not in tracks and "contextual" in a \
                and "contextual" in b:
            first = concepts[original]
            drop(BenchFile(first.task, first.n, "contextual", KIND), INDEPENDENT)
        both = [t for t in tracks if t in a and t in b]
        for track in both:
            first = concepts[original]
            item = {"id": f"{original}-{track}-{KIND}", "concept": original, "partner": cid,
                    "task": first.task, "n": first.n, "track": track, "kind": KIND,
                    "images": [a[track].image, b[track].image],
                    "captions": [captions[original].caption(track),
                                 captions[cid].caption(track)],
                    "truth": [[1, 0], [0, 1]], "graphs": [first.graph, partner.graph],
                    "paired": all(t in a and t in b for t in TRACKS)}
            yield BenchFile(first.task, first.n, track, KIND), item

"""How benchmark items are stored: compact (the default) or full.

A negative is a pure function of the concept's graph, the benchmark kind and the positive
caption (the minimal template, or the writer's caption with the spans its check matched),
so a compact item stores only those, and its negatives are enumerated again when the item
is read. At the paper's sizes (about 7 million negatives) the full JSON of every negative
with its edit is gigabytes; compact items are a few hundred bytes each.

  compact  {..., "positive", "regenerate": {"check": <the check's matches> | null}}
  full     {..., "positive", "duplicates", "negatives": [{caption, kind, edit, category,
           same_meaning}, ...]}

`expand` turns a compact row into exactly the item the full store holds (same captions,
edits, categories, same_meaning flags and order); readers take either. `autocomp build RUN
--store full|compact` rewrites a run's benchmarks in the other store.
"""

from __future__ import annotations

from autocomp.core.scene import SceneGraph
from autocomp.language.check import CheckResult
from autocomp.negatives.contextual import substitute
from autocomp.negatives.generate import make_negatives

NO_LIMIT = 10**12  # the build already applied build.max_negatives


def compact_item(v, concept, cap, task, track: str, kind: str, paired: bool) -> dict:
    """The stored form of one benchmark item (its validation, concept and caption
    records): what its negatives are made from."""
    positive = (task.minimal_caption(concept.scene) if track == "minimal"
                else cap.contextual)
    return {"id": f"{v.id}-{kind}", "concept": concept.id, "task": task.name,
            "n": concept.n, "track": track, "kind": kind, "image": v.image,
            "graph": concept.graph, "paired": paired, "positive": positive,
            "regenerate": {"check": cap.check if track == "contextual" else None}}


def renderer(graph: SceneGraph, task, positive: str, check: CheckResult | None):
    """How the negatives of a positive are written: the minimal template (no check), or
    the writer's caption with the edited words substituted inside the check's spans."""
    if check is None:
        return task.minimal_caption

    def render(g):
        return positive if g == graph else substitute(positive, check, g, task.noun)
    return render


def is_compact(row: dict) -> bool:
    return "regenerate" in row


def expand(row: dict, task) -> dict:
    """The full item of a compact row (a full row is returned as it is)."""
    if not is_compact(row):
        return row
    graph = SceneGraph.from_dict(row["graph"])
    check = row["regenerate"]["check"]
    render = renderer(graph, task, row["positive"],
                      None if check is None else CheckResult.from_dict(check))
    negs = make_negatives(graph, task, row["kind"], render, NO_LIMIT)
    out = {k: v for k, v in row.items() if k != "regenerate"}
    out.update(positive=negs.positive, duplicates=negs.duplicates,
               negatives=[n.to_dict() for n in negs.negatives])
    return out

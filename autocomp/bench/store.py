"""How benchmark items are stored: compact (the default) or full.

A negative is a pure function of the concept's graph, the benchmark kind and the positive
caption (the minimal template, or the writer's caption with the spans its check matched),
so a compact item stores only those, and its negatives are enumerated again when the item
is read. At the paper's sizes (about 7 million negatives) the full JSON of every negative
with its edit is gigabytes; compact items are a few hundred bytes each.

  compact  {..., "positive", "regenerate": {"version": 1, "check": <the check's matches>
           | null}}
  full     {..., "positive", "duplicates", "negatives": [{caption, kind, edit, category,
           same_meaning}, ...]}

`expand` turns a compact row into exactly the item the full store holds (same captions,
edits, categories, same_meaning flags and order); readers take either. `autocomp build RUN
--store full|compact` rewrites a run's benchmarks in the other store.

A compact row is checked before its negatives are enumerated: a known format version, the
fields it needs, a graph of the file's N objects, and no more candidates than the run's
build.max_negatives (a damaged or hand-edited row cannot make a reader enumerate billions).
Rows written before the version field are version 1.
"""

from __future__ import annotations

from autocomp.core.errors import AutocompError
from autocomp.core.scene import SceneGraph
from autocomp.language.check import CheckResult
from autocomp.negatives.contextual import Substitution
from autocomp.negatives.generate import NEGATIVE_KINDS, graph_count_problem, make_negatives

VERSION = 1  # of the compact row; a reader refuses a version it does not know
NEEDS = {"task": str, "n": int, "kind": str, "positive": str, "graph": dict}


def compact_item(v, concept, cap, task, track: str, kind: str, paired: bool,
                 minimal: str | None = None) -> dict:
    """The stored form of one benchmark item (its validation, concept and caption
    records): what its negatives are made from. `minimal`: the concept's minimal caption
    as the task renders it now (rendered here when not given), so positive and negatives
    come from one renderer."""
    if track == "minimal":
        positive = minimal if minimal is not None else task.minimal_caption(concept.scene)
    else:
        positive = cap.contextual
    # the item's id is its concept's, track's and kind's, whichever generator drew the
    # image (a compared generator's image id ends "@<label>"): items pair across generators
    return {"id": f"{v.id.partition('@')[0]}-{kind}", "concept": concept.id, "task": task.name,
            "n": concept.n, "track": track, "kind": kind, "image": v.image,
            "graph": concept.graph, "paired": paired, "positive": positive,
            "regenerate": {"version": VERSION,
                           "check": cap.check if track == "contextual" else None}}


def renderer(graph: SceneGraph, task, positive: str, check: CheckResult | None):
    """How the negatives of a positive are written: the minimal template (no check), or
    the writer's caption with the edited words substituted inside the check's spans."""
    if check is None:
        return task.minimal_caption

    fill = None

    def render(g):
        nonlocal fill
        if g == graph:
            return positive
        if fill is None:  # read the spans once for all the negatives of this positive
            fill = Substitution(positive, check, task.noun)
        return fill(g)
    return render


def is_compact(row: dict) -> bool:
    return "regenerate" in row


def _graph(row: dict, task, n: int | None, limit: int | None) -> SceneGraph:
    """The row's scene graph, after checking the row can be enumerated (ValueError why)."""
    regen = row["regenerate"]
    version = regen.get("version", 1) if isinstance(regen, dict) else None
    if version != VERSION:
        raise ValueError(f"compact format version {version!r} is not one this autocomp "
                         f"reads ({VERSION}); upgrade autocomp or rebuild the run")
    for key, kind in NEEDS.items():
        if not isinstance(row.get(key), kind) or isinstance(row.get(key), bool):
            raise ValueError(f"field '{key}' must be a {kind.__name__}, got "
                             f"{str(row.get(key))[:60]!r}")
    if row["kind"] not in NEGATIVE_KINDS:
        raise ValueError(f"unknown negative kind {row['kind'][:40]!r}")
    try:
        graph = SceneGraph.from_dict(row["graph"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"field 'graph' is not a scene graph ({str(exc)[:80]})") from None
    if n is not None and not graph.n_objects == row["n"] == n:
        raise ValueError(f"the graph has {graph.n_objects} objects and the row says n="
                         f"{row['n']}, in a file of N={n}")
    problem = graph_count_problem(graph, task, row["kind"], limit)
    if problem:
        raise ValueError(problem)
    return graph


def expand(row: dict, task, *, n: int | None = None, limit: int | None = None,
           where: object = None) -> dict:
    """The full item of a compact row (a full row is returned as it is). `n` is the N of
    the file it came from and `limit` the run's build.max_negatives; a row that fails the
    checks is an AutocompError naming `where` (file:line)."""
    if not is_compact(row):
        return row
    try:
        graph = _graph(row, task, n, limit)
        check = row["regenerate"]["check"]
        check = None if check is None else CheckResult.from_dict(check)
    except (KeyError, TypeError, ValueError) as exc:
        raise AutocompError(f"compact item: {exc}", file=where) from None
    render = renderer(graph, task, row["positive"], check)
    negs = make_negatives(graph, task, row["kind"], render, limit)
    out = {k: v for k, v in row.items() if k != "regenerate"}
    out.update(positive=negs.positive, duplicates=negs.duplicates,
               negatives=[n.to_dict() for n in negs.negatives])
    return out

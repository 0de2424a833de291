"""Swap partners: the concept a concept's swap negative states, drawn as a concept of its
own so a benchmark can hold both images (synthetic Winoground: 2 images x 2 captions with
exact ground truth, build.benchmarks: [winoground]).

The partner moves what the task's swap moves one place on: an attribute task's values over
the fixed objects ("a red chair and a blue lamp" -> "a blue chair and a red lamp"), a
relation task's objects over the fixed relations ("a cup on a box" -> "a box on a cup").
At N = 2 that is the swap negative itself; at N >= 3 the swap negative in which every
value (object) moves to the next slot. A concept has no partner when the move states the
same facts (two equal values; a relation that reads the same backwards) or when the task
is a scene design. The partner keeps its original's image seed, so the two images of a
pair differ as little as their prompts do; it is recorded with `partner_of`.
"""

from __future__ import annotations

from autocomp.core.scene import SceneGraph


def partner_graph(task, graph: SceneGraph) -> SceneGraph | None:
    if getattr(task, "kind", None) == "scene" or graph.n_objects < 2:
        return None
    names, values = list(graph.names), task.values_of(graph)
    if task.swap_moves == "objects":
        names = names[-1:] + names[:-1]
    else:
        values = values[-1:] + values[:-1]
    partner = task.rebuild(graph, names, values)
    if partner.meaning_key(task.inverses) == graph.meaning_key(task.inverses):
        return None
    return partner


def partner_records(task, record: dict, concept_cls) -> dict | None:
    """The partner's concept record (its original's seed, `partner_of` its id), or None."""
    original = concept_cls.from_record(record)
    graph = partner_graph(task, original.graph)
    if graph is None:
        return None
    partner = concept_cls(original.task, original.n, graph).to_record()
    partner["seed"] = record["seed"]
    partner["partner_of"] = record["id"]
    return partner

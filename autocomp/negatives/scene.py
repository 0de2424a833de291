"""Swap and confusion negatives of scene graphs (scene tasks): Auto-Comp's two definitions
carried over to graphs with several attributes per object and relations forming a forest.

The slots of a scene concept are its n_O object names, the attribute slots of each
attribute vocabulary (k_v of them for vocabulary v, objects in order, each object's
attributes in the task's order) and its n_R relation predicates.

  swap       the object names permuted over the fixed structure (each object slot keeps
             its attributes and relation ends): n_O! - 1. On an attribute concept these are
             the paper's value permutations (the same bindings, objects listed in another
             order); on a chain it is the
             paper's relation swap.
  confusion  object names into the object slots with replacement (n_O^n_O), times, for each
             attribute vocabulary, the concept's own values of it into its slots with
             replacement (k_v^k_v), times the concept's own predicates into the relation
             slots with replacement (n_R^n_R), less the positive itself. On an attribute
             concept that is N^2N - 1 and on a chain N^N (N-1)^(N-1) - 1: the paper's counts.
Values stay inside their vocabulary, so a negative never reads "a red striped large cube"
or gives an object two colors.

Category: which kinds of primitive the negative changed ("objects", "attributes",
"relations", joined by " + "), so results can be split the way COMPASS splits skills.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator

from autocomp.core.scene import Object, Relation, SceneGraph

KINDS = ("swap", "confusion")


def attribute_slots(graph: SceneGraph) -> list[tuple[int, int]]:
    """(object index, attribute index) of every attribute, in slot order."""
    return [(i, k) for i, o in enumerate(graph.objects) for k in range(len(o.attributes))]


def values_of(graph: SceneGraph) -> list[str]:
    """The value slots: every attribute in slot order, then every predicate."""
    return ([graph.objects[i].attributes[k] for i, k in attribute_slots(graph)]
            + [r.predicate for r in graph.relations])


def rebuild(graph: SceneGraph, names, values) -> SceneGraph:
    values = list(values)
    attrs: list[list[str]] = [[] for _ in graph.objects]
    slots = attribute_slots(graph)
    for (i, _), v in zip(slots, values[:len(slots)], strict=True):
        attrs[i].append(v)
    preds = values[len(slots):]
    objects = tuple(Object(n, tuple(a)) for n, a in zip(names, attrs, strict=True))
    relations = tuple(Relation(r.subject, p, r.object)
                      for r, p in zip(graph.relations, preds, strict=True))
    return SceneGraph(objects, relations)


def _groups(graph: SceneGraph, task) -> list[list[int]]:
    """The value slots grouped by what may fill them: one group per attribute vocabulary
    present, then the relation slots."""
    values = values_of(graph)
    n_attr = len(attribute_slots(graph))
    by_vocab: dict[str, list[int]] = {}
    for s in range(n_attr):
        by_vocab.setdefault(task.vocab_of_value[values[s]].name, []).append(s)
    groups = list(by_vocab.values())
    if graph.relations:
        groups.append(list(range(n_attr, len(values))))
    return groups


def candidate_count(graph: SceneGraph, task, kind: str) -> int:
    """How many arrangements `kind` enumerates for this concept (before duplicates)."""
    n = graph.n_objects
    if kind == "swap":
        return math.factorial(n) - 1
    count = n ** n
    for group in _groups(graph, task):
        count *= len(group) ** len(group)
    return count - 1


def arrangements(graph: SceneGraph, task, kind: str) -> Iterator[tuple[list, list, dict]]:
    names, values = list(graph.names), values_of(graph)
    n = len(names)
    if kind == "swap":
        for perm in itertools.permutations(range(n)):
            if list(perm) != list(range(n)):
                yield ([names[i] for i in perm], values,
                       {"objects": list(perm), "values": list(range(len(values)))})
        return
    groups = _groups(graph, task)
    identity = list(range(len(values)))
    for objs in itertools.product(range(n), repeat=n):
        for fills in itertools.product(*(itertools.product(g, repeat=len(g)) for g in groups)):
            picks = list(identity)
            for group, fill in zip(groups, fills, strict=True):
                for slot, source in zip(group, fill, strict=True):
                    picks[slot] = source
            if list(objs) == list(range(n)) and picks == identity:
                continue
            yield ([names[i] for i in objs], [values[j] for j in picks],
                   {"objects": list(objs), "values": picks})


def category(graph: SceneGraph, names, values) -> str:
    n_attr = len(attribute_slots(graph))
    pos = values_of(graph)
    changed = []
    if list(names) != list(graph.names):
        changed.append("objects")
    if list(values[:n_attr]) != pos[:n_attr]:
        changed.append("attributes")
    if list(values[n_attr:]) != pos[n_attr:]:
        changed.append("relations")
    return " + ".join(changed) or "same words"

"""Subgraphs and caption graphs (COMPASS section 3.1).

A random walk of up to 10 steps from a random object along relation edges (either
direction) picks the subgraph S; an object brings its attributes. For a structural level
and a complexity N, a caption graph is grown inside S from a random object, one primitive
at a time (an attribute of an included object, a relation from an included object, which
brings its other object, or another object of S), until it holds exactly N primitives
with at least one of each type of the level:
  L1 objects (N 1-10), OA objects + attributes (2-12), OR objects + relations (3-12),
  OAR all three (4-12).
"""

from __future__ import annotations

import random

from autocomp.core.scene import Object, Relation, SceneGraph

LEVELS = {"L1": "O", "OA": "OA", "OR": "OR", "OAR": "OAR"}
RANGES = {"L1": (1, 10), "OA": (2, 12), "OR": (3, 12), "OAR": (4, 12)}
WALK_STEPS = 10


def random_walk(graph: SceneGraph, rng: random.Random, steps: int = WALK_STEPS) -> SceneGraph:
    """The subgraph a walk of up to `steps` relation edges visits (objects keep their
    attributes; object indices are renumbered in visiting order)."""
    if not graph.objects:
        return graph
    current = rng.randrange(len(graph.objects))
    visited, edges = [current], []
    for _ in range(steps):
        incident = [k for k, r in enumerate(graph.relations)
                    if current in (r.subject, r.object)]
        if not incident:
            break
        k = rng.choice(incident)
        rel = graph.relations[k]
        if k not in edges:
            edges.append(k)
        current = rel.object if rel.subject == current else rel.subject
        if current not in visited:
            visited.append(current)
    return _sub(graph, visited, edges)


def _sub(graph: SceneGraph, objects: list[int], edges: list[int],
         attrs: dict[int, list[str]] | None = None) -> SceneGraph:
    new = {old: i for i, old in enumerate(objects)}
    objs = [Object(graph.objects[o].name, tuple(graph.objects[o].attributes if attrs is None
                                                 else attrs.get(o, ()))) for o in objects]
    rels = [Relation(new[graph.relations[k].subject], graph.relations[k].predicate,
                     new[graph.relations[k].object]) for k in edges]
    return SceneGraph(tuple(objs), tuple(rels))


def caption_graph(sub: SceneGraph, level: str, n: int, rng: random.Random,
                  tries: int = 30) -> SceneGraph | None:
    """A graph of exactly n primitives of the level's types grown inside `sub`, or None."""
    types = LEVELS[level]
    low, high = RANGES[level]
    if not low <= n <= high or not sub.objects:
        return None
    for _ in range(tries):
        start = rng.randrange(len(sub.objects))
        objs, attrs, edges = [start], {}, []
        total = 1
        while total < n:
            options = []
            if "A" in types:
                options += [("A", o, a) for o in objs for a in sub.objects[o].attributes
                            if a not in attrs.get(o, [])]
            if "R" in types:
                for k, r in enumerate(sub.relations):
                    if k in edges or (r.subject not in objs and r.object not in objs):
                        continue
                    cost = 1 + (r.subject not in objs or r.object not in objs)
                    if total + cost <= n:
                        options.append(("R", k, cost))
            options += [("O", o) for o in range(len(sub.objects)) if o not in objs]
            if not options:
                break
            pick = rng.choice(options)
            if pick[0] == "A":
                attrs.setdefault(pick[1], []).append(pick[2])
                total += 1
            elif pick[0] == "R":
                r = sub.relations[pick[1]]
                edges.append(pick[1])
                for o in (r.subject, r.object):
                    if o not in objs:
                        objs.append(o)
                total += pick[2]
            else:
                objs.append(pick[1])
                total += 1
        g = _sub(sub, objs, edges, attrs)
        if total == n and all(_count(g, t) > 0 for t in types):
            return g
    return None


def _count(g: SceneGraph, t: str) -> int:
    return {"O": g.n_objects, "A": g.n_attributes, "R": g.n_relations}[t]


def level_of(graph: SceneGraph) -> str:
    """The structural level a graph's primitive types make."""
    a, r = graph.n_attributes > 0, graph.n_relations > 0
    return "OAR" if a and r else "OA" if a else "OR" if r else "L1"

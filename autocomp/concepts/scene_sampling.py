"""Sampling scene concepts: `count` distinct concepts spread evenly over a scene task's
design cells, each a graph with exactly the cell's (n_O, n_A, n_R) primitives."""

from __future__ import annotations

import random

from autocomp.concepts.sampling import Concept
from autocomp.concepts.scenes import COUNTS, SceneTask
from autocomp.core.errors import AutocompError
from autocomp.core.scene import Object, Relation, SceneGraph


def scene_graph(task: SceneTask, cell, rng: random.Random) -> SceneGraph:
    """A graph with exactly cell = (n_O, n_A, n_R) primitives of each type."""
    n_o, n_a, n_r = cell
    names = rng.sample(list(task.objects.names), n_o)
    slots = rng.sample([(i, v) for i in range(n_o) for v in range(len(task.attributes))], n_a)
    attrs: dict[int, list[str]] = {i: [] for i in range(n_o)}
    for i, v in sorted(slots):  # in the task's order of vocabularies: the written order
        attrs[i].append(rng.choice(task.attributes[v].names))
    tree = [(rng.randrange(i), i) for i in range(1, n_o)]  # a random tree over the objects
    edges = rng.sample(tree, n_r)
    relations = []
    for a, b in edges:
        s, o = (a, b) if rng.random() < 0.5 else (b, a)
        relations.append(Relation(s, rng.choice(task.relations.names), o))
    objects = tuple(Object(names[i], tuple(attrs[i])) for i in range(n_o))
    return SceneGraph(objects, tuple(relations))


class SceneConcept(Concept):
    """A Concept (same id, seed and record) whose N is its object count; `cell` is its
    (n_O, n_A, n_R) design cell."""

    @property
    def cell(self) -> tuple[int, int, int]:
        return tuple(self.graph.counts[c] for c in COUNTS)


def sample_scenes(task: SceneTask, count: int, seed: int = 0) -> list[SceneConcept]:
    """`count` distinct concepts spread evenly over the design's cells (round-robin in a
    seeded order), the same for the same (task, count, seed). A cell that has run out of
    distinct concepts ((1, 0, 0) has one per shape) leaves the rotation."""
    rng = random.Random(f"autocomp:scenes:{task.name}:{seed}")
    cells = task.cells(seed)
    rng.shuffle(cells)
    out, seen = [], set()
    misses: dict[tuple, int] = {}
    turn = 0
    while len(out) < count:
        if not cells:
            raise AutocompError(f"scene task '{task.name}': only {len(out)} distinct "
                                f"concepts in its design; {count} asked")
        cell = cells[turn % len(cells)]
        graph = scene_graph(task, cell, rng)
        key = graph.meaning_key(task.inverses)
        if key in seen:
            misses[cell] = misses.get(cell, 0) + 1
            if misses[cell] >= 200:  # exhausted (or nearly): leave it out from now on
                cells.remove(cell)
            continue
        misses[cell] = 0
        seen.add(key)
        out.append(SceneConcept(task.name, cell[0], graph))
        turn += 1
    return out

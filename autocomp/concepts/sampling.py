"""Concept sampling: deterministic from a seed, distinct objects and values, no duplicates."""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from dataclasses import dataclass
from functools import cached_property

from autocomp.concepts.task import Task
from autocomp.core.errors import AutocompError
from autocomp.core.run_records import ConceptRecord
from autocomp.core.scene import SceneGraph


@dataclass(frozen=True)
class Concept:
    task: str
    n: int
    graph: SceneGraph

    @cached_property  # hashed once: the sampler, the record and the seed all ask
    def id(self) -> str:
        """Stable id: a hash of the task name and the scene graph."""
        return hashlib.sha256(f"{self.task}\n{self.graph.to_json()}".encode()).hexdigest()[:16]

    @property
    def seed(self) -> int:
        """The concept's image seed, shared by its minimal and contextual images."""
        return int(self.id[:8], 16)

    def to_record(self, index: int | None = None) -> dict:
        return ConceptRecord(self.id, self.task, self.n, self.seed, self.graph.to_dict(),
                             self.graph.counts, index).to_dict()

    @classmethod
    def from_record(cls, record: dict) -> Concept:
        return cls(record["task"], int(record["n"]), SceneGraph.from_dict(record["graph"]))


def max_distinct_concepts(task: Task, n: int) -> int:
    """An upper bound on the number of concepts with different meanings."""
    n_obj, n_val, k = len(task.objects), len(task.values), task.value_slots(n)
    values = math.perm(n_val, k) if task.distinct_values else n_val**k
    if task.is_relation:
        return math.perm(n_obj, n) * values
    return math.comb(n_obj, n) * values  # object order does not change an attribute concept


def sample_concepts(task: Task, n: int, count: int, seed: int = 0) -> list[Concept]:
    """`count` concepts of complexity n, the same for the same (task, n, seed).

    Two concepts that state the same facts (same bindings in another order, or a relation
    chain read backwards with inverse relations) count as duplicates.
    """
    problem = task.capacity_problem(n)
    if problem:
        raise AutocompError(f"task '{task.name}': {problem}", file=task.path or None)
    limit = max_distinct_concepts(task, n)
    if count > limit:
        raise AutocompError(f"task '{task.name}': asked for {count} concepts of N={n} but its "
                            f"vocabularies allow at most {limit} distinct ones",
                            file=task.path or None)
    rng = random.Random(f"autocomp:{task.name}:{n}:{seed}")
    objects, values, k = task.objects.names, task.values.names, task.value_slots(n)
    seen: set = set()
    out: list[Concept] = []
    misses = 0
    while len(out) < count:
        names = rng.sample(objects, n)
        vals = rng.sample(values, k) if task.distinct_values else rng.choices(values, k=k)
        graph = task.graph(names, vals)
        key = graph.meaning_key(task.inverses)
        if key in seen:
            misses += 1
            if misses > 1000 + 20 * count:
                raise AutocompError(f"task '{task.name}': found only {len(out)} distinct "
                                    f"concepts of N={n} after {misses} repeats; ask for fewer")
            continue
        seen.add(key)
        out.append(Concept(task.name, n, graph))
    return out


def weighted_value_tuples(task: Task, n: int, max_tuples: int = 512):
    """(value tuple, weight) pairs covering the sampler's distribution of a concept's value
    slots. The number of negatives does not depend on which object names are drawn, only
    on which value slots hold equal values (and, for relations, which are inverses): for
    attribute tasks every equality pattern of the values, weighted by how many tuples show
    it; for relation tasks every value tuple (a seeded sample of `max_tuples` when there
    are more)."""
    values, k = task.values.names, task.value_slots(n)
    if not task.is_relation:
        for pattern in value_patterns(k):
            distinct = max(pattern) + 1
            if distinct > len(values) or (task.distinct_values and distinct < k):
                continue
            yield [values[i] for i in pattern], math.perm(len(values), distinct)
        return
    tuples = (itertools.permutations(values, k) if task.distinct_values
              else itertools.product(values, repeat=k))
    total = math.perm(len(values), k) if task.distinct_values else len(values) ** k
    if total > max_tuples:
        rng = random.Random(f"autocomp:chance:{task.name}:{n}")
        pick = (lambda: rng.sample(values, k)) if task.distinct_values else (
            lambda: rng.choices(values, k=k))
        tuples = (pick() for _ in range(max_tuples))
    for t in tuples:
        yield list(t), 1


def value_patterns(k: int):
    """Restricted growth strings: every way k slots can share values (0, 0, 1 = a a b)."""
    def grow(prefix):
        if len(prefix) == k:
            yield prefix
            return
        for v in range(max(prefix, default=-1) + 2):
            yield from grow([*prefix, v])
    yield from grow([])

"""Chance levels computed from the negatives themselves (Auto-Comp Table 4, Random Chance row).

Chance of an item is 1 / (1 + its number of negatives); the chance of a (task, N,
benchmark) cell is its mean over the concepts the task's sampler can draw. The number of
negatives does not depend on which object names are drawn (they are distinct), only on
which value slots hold equal values (and, for relations, which are inverses), so the
mean is taken exactly: over every equality pattern of the values for attribute tasks,
over every value tuple for relation tasks (a seeded sample when there are more than
`MAX_TUPLES`).
"""

from __future__ import annotations

import itertools
import math
import random
from decimal import ROUND_HALF_UP, Decimal

from autocomp.concepts.sampling import concept_graph
from autocomp.concepts.task import Task
from autocomp.negatives import scene
from autocomp.negatives.generate import make_negatives

MAX_TUPLES = 512


def percent(x: float) -> float:
    """A probability as a percentage rounded half up to one decimal, as the paper prints."""
    return float(Decimal(repr(100 * x)).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))


def benchmarks_for(task: Task, n: int) -> tuple[str, ...]:
    """The benchmark kinds defined at N: swap and confusion from N = 2, the N = 1
    variations for attribute tasks; scene tasks have nothing to swap with one object."""
    if task.kind == "scene":
        return scene.KINDS if n >= 2 else ()
    if n >= 2:
        return ("swap", "confusion")
    return () if task.is_relation else ("vary_value", "vary_object")


def _weighted_value_tuples(task: Task, n: int):
    """(value tuple, weight) pairs covering the sampler's distribution of value slots."""
    values, k = task.values.names, task.value_slots(n)
    if not task.is_relation:
        # Attribute tasks: only the equality pattern of the values matters.
        for pattern in _patterns(k):
            distinct = max(pattern) + 1
            if distinct > len(values) or (task.distinct_values and distinct < k):
                continue
            yield [values[i] for i in pattern], math.perm(len(values), distinct)
        return
    tuples = (itertools.permutations(values, k) if task.distinct_values
              else itertools.product(values, repeat=k))
    total = math.perm(len(values), k) if task.distinct_values else len(values) ** k
    if total > MAX_TUPLES:
        rng = random.Random(f"autocomp:chance:{task.name}:{n}")
        pick = (lambda: rng.sample(values, k)) if task.distinct_values else (
            lambda: rng.choices(values, k=k))
        tuples = (pick() for _ in range(MAX_TUPLES))
    for t in tuples:
        yield list(t), 1


def _patterns(k: int):
    """Restricted growth strings: every way k slots can share values (0, 0, 1 = a a b)."""
    def grow(prefix):
        if len(prefix) == k:
            yield prefix
            return
        for v in range(max(prefix, default=-1) + 2):
            yield from grow([*prefix, v])
    yield from grow([])


def chance_cell(task: Task, n: int, kind: str) -> dict:
    names = list(task.objects.names[:n])
    total_w = chance = chance_dm = negatives = 0.0
    for values, weight in _weighted_value_tuples(task, n):
        graph = concept_graph(task, names, values)
        ns = make_negatives(graph, task, kind, task.minimal_caption)
        total_w += weight
        chance += weight * ns.chance
        chance_dm += weight * ns.chance_distinct_meaning
        negatives += weight * len(ns.negatives)
    return {
        "chance": percent(chance / total_w),
        "exact": 100 * chance / total_w,
        "negatives": round(negatives / total_w, 3),
        "chance_distinct_meaning": percent(chance_dm / total_w),
    }


def chance_table(tasks: list[Task]) -> dict:
    """{task: {N: {benchmark: cell}}} for every allowed N of every task."""
    return {task.name: {str(n): {kind: chance_cell(task, n, kind)
                                 for kind in benchmarks_for(task, n)} for n in task.n}
            for task in tasks}


def format_chance_table(table: dict) -> str:
    """Text in the layout of Table 4 (N >= 2) and Table 8 (N = 1)."""
    lines = []
    for task, by_n in table.items():
        multi = [n for n in by_n if int(n) >= 2]
        if multi:
            head = "".join(f" | N={n}: Min Swap  Conf.  Ctx Swap  Conf." for n in multi)
            lines.append(f"{task:<24}{head}")
            for label, key in (("Random Chance", "chance"),
                               ("  distinct meaning", "chance_distinct_meaning")):
                row = "".join(
                    f" |      {by_n[n]['swap'][key]:>8.1f} {by_n[n]['confusion'][key]:>6.1f}"
                    f" {by_n[n]['swap'][key]:>8.1f} {by_n[n]['confusion'][key]:>6.1f}"
                    for n in multi)
                lines.append(f"{label:<24}{row}")
        if "1" in by_n and by_n["1"]:
            cell = by_n["1"]
            lines.append(f"{task:<24} | N=1: vary value {cell['vary_value']['chance']:.1f}"
                         f"  vary object {cell['vary_object']['chance']:.1f}")
        lines.append("")
    lines.append("Chance = mean of 1/(1 + negatives) per item, in %. 'distinct meaning' leaves "
                 "out negatives that state the positive's facts in another order.")
    return "\n".join(lines)

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

from decimal import ROUND_HALF_UP, Decimal

from autocomp.concepts.sampling import weighted_value_tuples
from autocomp.concepts.task import Task
from autocomp.negatives.generate import make_negatives

MAX_TUPLES = 512


def percent(x: float) -> float:
    """A probability as a percentage rounded half up to one decimal, as the paper prints."""
    return float(Decimal(repr(100 * x)).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))


def chance_cell(task: Task, n: int, kind: str) -> dict:
    names = list(task.objects.names[:n])
    total_w = chance = chance_dm = negatives = 0.0
    for values, weight in weighted_value_tuples(task, n, MAX_TUPLES):
        graph = task.graph(names, values)
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
                                 for kind in task.negative_kinds(n)} for n in task.n}
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

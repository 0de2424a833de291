"""Hard negatives as scene-graph edits (Auto-Comp section 3, Phase 3; docs/methods.md section 4).

Every negative is an edited copy of the concept's graph, rendered by the same renderer as
the positive, so the two differ only in the edited words (articles re-rendered). Words
are placed by slot from the positive's own lists, never replaced one after the other, so
substitutions cannot chain.

  swap       attribute tasks: permute the N values over the fixed objects;
             relation tasks: permute the N objects over the fixed relations. N! - 1.
  confusion  attribute tasks: objects into the N object slots with replacement (N^N) times
             values into the N value slots with replacement (N^N): N^2N - 1.
             relation tasks: N^N object arrangements times (N-1)^(N-1) arrangements of the
             concept's own relations: N^N (N-1)^(N-1) - 1.
  scene tasks: the same two kinds over every slot of a scene graph (concepts/scenes.py).
  vary_value / vary_object   (N = 1 sanity check) every other value / object of the
             whole vocabulary in the single slot.

A negative whose caption repeats the positive's or another negative's is removed and
counted. A negative that states the same facts as the positive (same bindings in another
order: "a blue lamp and a red chair"; a chain read backwards with inverse relations: "a cup
under a lamp, which is above a chair") is kept, as the paper's counts and chance levels
include it, and flagged `same_meaning` so evaluation can leave it out.

Categories (attribute tasks, Auto-Comp Table 6), from whether the negative repeats an
object name and whether it repeats a value, compared with the positive:
  "swapped values"                  no repeats: the concept's own bindings re-paired
  "same value / different objects"  a value repeats, objects do not
  "same value / same object"        both repeat
  "same object / different values"  an object repeats, values do not
For N = 3 "repeats" means "any two slots share it" (so "a red chair, a red lamp and a blue
cup" is "same value / different objects"); the edit also records how many distinct
objects and values the negative has, for finer analysis.
Relation tasks: "<objects> / <relations>" with objects one of "same objects", "swapped
objects", "repeated object" and relations one of "same relations", "swapped relations",
"repeated relation".
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from autocomp.concepts.task import Task
from autocomp.core.errors import AutocompError
from autocomp.core.scene import SceneGraph

NEGATIVE_KINDS = ("swap", "confusion", "vary_value", "vary_object")
# Most candidate negatives one concept may enumerate (color N=4 confusion: 65,535; N=5:
# 9,765,624). Raise it with build.max_negatives, --max-negatives or AUTOCOMP_MAX_NEGATIVES.
MAX_NEGATIVES = 100_000
FEASIBLE = 10_000_000  # above this, raising the limit is no advice (a concept's negatives
#                        are enumerated, captioned and stored one by one)


@dataclass(frozen=True)
class Negative:
    kind: str
    graph: SceneGraph
    caption: str
    edit: dict
    category: str | None
    same_meaning: bool

    def to_dict(self) -> dict:
        return {"caption": self.caption, "kind": self.kind, "edit": self.edit,
                "category": self.category, "same_meaning": self.same_meaning}


@dataclass(frozen=True)
class NegativeSet:
    kind: str
    positive: str
    negatives: tuple[Negative, ...]
    duplicates: int  # candidates removed because their caption was already there

    @property
    def chance(self) -> float:
        """Probability that a random pick among positive + negatives is the positive."""
        return 1.0 / (1 + len(self.negatives))

    @property
    def chance_distinct_meaning(self) -> float:
        """The same, leaving out negatives that mean the same as the positive."""
        return 1.0 / (1 + sum(not n.same_meaning for n in self.negatives))


def _swap(graph: SceneGraph, task) -> Iterator[tuple[list[str], list[str], dict]]:
    """Permute what the task's swap moves (values over fixed objects, or objects over the
    fixed structure): N! - 1."""
    names, values = list(graph.names), task.values_of(graph)
    n, k = len(names), len(values)
    moves_objects = task.swap_moves == "objects"
    permuted = names if moves_objects else values
    for perm in itertools.permutations(range(len(permuted))):
        if list(perm) == list(range(len(permuted))):
            continue
        moved = [permuted[i] for i in perm]
        if moves_objects:
            yield moved, values, {"objects": list(perm), task.value_key: list(range(k))}
        else:
            yield names, moved, {"objects": list(range(n)), task.value_key: list(perm)}


def _confusion(graph: SceneGraph, task) -> Iterator[tuple[list[str], list[str], dict]]:
    """Objects into the object slots with replacement, times each slot group's own values
    into its slots with replacement, less the positive itself."""
    names, values = list(graph.names), task.values_of(graph)
    n = len(names)
    groups = task.slot_groups(graph)
    identity = list(range(len(values)))
    whole = groups == [identity]  # binding tasks: one group of every slot, in order
    for objs in itertools.product(range(n), repeat=n):
        for fills in itertools.product(*(itertools.product(g, repeat=len(g)) for g in groups)):
            if whole:
                picks = list(fills[0])
            else:
                picks = list(identity)
                for group, fill in zip(groups, fills, strict=True):
                    for slot, source in zip(group, fill, strict=True):
                        picks[slot] = source
            if list(objs) == list(range(n)) and picks == identity:
                continue
            yield ([names[i] for i in objs], [values[j] for j in picks],
                   {"objects": list(objs), task.value_key: picks})


def _vary(field: str):
    """The N = 1 check: every other entry of the whole vocabulary in the single slot."""
    def arrange(graph: SceneGraph, task) -> Iterator[tuple[list[str], list[str], dict]]:
        names, values = list(graph.names), task.values_of(graph)
        vocab = task.values if field == "value" else task.objects
        current = values[0] if field == "value" else names[0]
        for other in vocab.names:
            if other == current:
                continue
            edit = {"slot": 0, "field": field, "from": current, "to": other}
            yield ((names, [other], edit) if field == "value" else ([other], values, edit))
    return arrange


VARY_FIELD = {"vary_value": "value", "vary_object": "object"}
ARRANGE = {"swap": _swap, "confusion": _confusion,
           **{kind: _vary(field) for kind, field in VARY_FIELD.items()}}
assert tuple(ARRANGE) == NEGATIVE_KINDS


def _arrangements(graph, task, kind) -> Iterator[tuple[list[str], list[str], dict]]:
    if kind not in ARRANGE:
        raise ValueError(f"unknown negative kind '{kind}' (known: {', '.join(NEGATIVE_KINDS)})")
    defined = task.negative_kinds(graph.n_objects)
    if kind in VARY_FIELD and kind not in defined:
        raise ValueError(f"{kind} is one of the N = 1 checks of attribute tasks; task "
                         f"'{task.name}' at N={graph.n_objects} has "
                         f"{', '.join(defined) or 'none'}")
    return ARRANGE[kind](graph, task)


def negative_limit(limit: int | None = None) -> int:
    """The limit given, else $AUTOCOMP_MAX_NEGATIVES, else MAX_NEGATIVES."""
    if limit is not None:
        return limit
    env = os.environ.get("AUTOCOMP_MAX_NEGATIVES", "").strip()
    if not env:
        return MAX_NEGATIVES
    if not env.isdigit() or int(env) < 1:
        raise AutocompError(f"AUTOCOMP_MAX_NEGATIVES: expected an integer >= 1, got '{env}'")
    return int(env)


def count_problem(task: Task, n: int, kind: str, limit: int | None = None) -> str | None:
    """Why `kind` negatives of task N cannot be enumerated under the limit, or None."""
    limit = negative_limit(limit)
    count = expected_count(task, n, kind)
    if count <= limit:
        return None
    head = f"task '{task.name}' N={n}: {kind} would enumerate {count:,} negatives per concept"
    if count > FEASIBLE:  # no limit worth raising: days of enumeration per concept
        return (f"{head}, far more than can be enumerated (the most is {FEASIBLE:,}): use a "
                f"smaller N, or leave {kind} out of build.benchmarks for this task")
    return (f"{head}, above the limit of {limit:,} (raise it with build.max_negatives, "
            f"--max-negatives or AUTOCOMP_MAX_NEGATIVES, or use a smaller N)")


def check_count(task: Task, n: int, kind: str, limit: int | None = None) -> None:
    problem = count_problem(task, n, kind, limit)
    if problem:
        raise AutocompError(problem)


def graph_count_problem(graph: SceneGraph, task, kind: str,
                        limit: int | None = None) -> str | None:
    """count_problem for one concept (where a task's counts follow N alone, its N's)."""
    if task.counts_follow_n:
        return count_problem(task, graph.n_objects, kind, limit)
    limit = negative_limit(limit)
    count = graph_count(graph, task, kind)
    if count <= limit:
        return None
    return (f"task '{task.name}' concept {graph.counts}: {kind} would enumerate {count:,} "
            f"negatives, above the limit of {limit:,}")


def graph_count(graph: SceneGraph, task, kind: str) -> int:
    """How many arrangements `kind` enumerates for this concept (before duplicates)."""
    return _count(task, graph.n_objects, [len(g) for g in task.slot_groups(graph)], kind)


def _count(task, n: int, group_sizes, kind: str) -> int:
    """N! - 1 (swap); N^N x prod k^k - 1 over the slot groups (confusion); the vocabulary
    size - 1 (N = 1 checks)."""
    if kind in VARY_FIELD:
        return len(task.values if VARY_FIELD[kind] == "value" else task.objects) - 1
    counts = {"swap": lambda: math.factorial(n) - 1,
              "confusion": lambda: n ** n * math.prod(k ** k for k in group_sizes) - 1}
    return counts[kind]()


def make_negatives(graph: SceneGraph, task: Task, kind: str,
                   render: Callable[[SceneGraph], str],
                   limit: int | None = None) -> NegativeSet:
    """All negatives of one kind for a concept, rendered by `render`, duplicates removed.
    Refuses (AutocompError) before enumerating more than `limit` candidates."""
    problem = graph_count_problem(graph, task, kind, limit)
    if problem:
        raise AutocompError(problem)
    positive = render(graph)
    key = graph.meaning_key(task.inverses)
    pos_names, pos_values = list(graph.names), task.values_of(graph)
    seen, out, duplicates = {positive}, [], 0
    for names, values, edit in _arrangements(graph, task, kind):
        neg = task.rebuild(graph, names, values)
        caption = render(neg)
        if caption in seen:
            duplicates += 1
            continue
        seen.add(caption)
        edit = {**edit, "changed_objects": _changed(pos_names, names),
                "changed_values": _changed(pos_values, values),
                "distinct_objects": len(set(names)), "distinct_values": len(set(values))}
        out.append(Negative(kind, neg, caption, edit,
                            None if "slot" in edit else
                            task.category(graph, pos_values, names, values),
                            neg.meaning_key(task.inverses) == key))
    return NegativeSet(kind, positive, tuple(out), duplicates)


def _changed(before, after) -> list[int]:
    """The slots whose word differs."""
    return [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]


def expected_count(task: Task, n: int, kind: str) -> int:
    """The paper's formula for the number of negatives of a concept with distinct values:
    N! - 1 (swap), N^N x k^k - 1 with k value slots (confusion: N^2N - 1 for attributes,
    N^N (N-1)^(N-1) - 1 for relation chains), the vocabulary size - 1 (N = 1 checks)."""
    k = task.value_slots(n)
    return _count(task, n, [k] if k else [], kind)

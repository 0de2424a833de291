"""Hard negatives as scene-graph edits (Auto-Comp section 3, Phase 3; METHODS.md section 4).

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
  scene tasks: negatives/scene.py (the same two kinds over every slot of a scene graph).
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
from autocomp.core.scene import Object, SceneGraph
from autocomp.negatives import scene

KINDS = ("swap", "confusion", "vary_value", "vary_object")
# Most candidate negatives one concept may enumerate (color N=4 confusion: 65,535; N=5:
# 9,765,624). Raise it with build.max_negatives, --max-negatives or AUTOCOMP_MAX_NEGATIVES.
MAX_NEGATIVES = 100_000


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


def _scene(task) -> bool:
    return task.kind == "scene"


def values_of(graph: SceneGraph, task: Task) -> list[str]:
    """The concept's value slots: one attribute per object, or the chain's predicates."""
    if _scene(task):
        return scene.values_of(graph)
    if task.is_relation:
        if not graph.is_chain():
            raise ValueError(f"task '{task.name}' needs a relation chain, got {graph.to_dict()}")
        return [r.predicate for r in graph.relations]
    if any(len(o.attributes) != 1 for o in graph.objects) or graph.relations:
        raise ValueError(f"task '{task.name}' needs one attribute per object and no relations, "
                         f"got {graph.to_dict()}")
    return [o.attributes[0] for o in graph.objects]


def rebuild(graph: SceneGraph, task: Task, names, values) -> SceneGraph:
    if _scene(task):
        return scene.rebuild(graph, names, values)
    if task.is_relation:
        return graph.with_objects(Object(n) for n in names).with_predicates(values)
    return graph.with_objects(Object(n, (v,)) for n, v in zip(names, values, strict=True))


def _arrangements(graph, task, kind) -> Iterator[tuple[list[str], list[str], dict]]:
    if _scene(task):
        if kind not in scene.KINDS:
            raise ValueError(f"{kind} is not defined on scene tasks (they have "
                             f"{', '.join(scene.KINDS)})")
        yield from scene.arrangements(graph, task, kind)
        return
    names, values = list(graph.names), values_of(graph, task)
    n, k = len(names), len(values)
    vkey = "relations" if task.is_relation else "values"
    if kind == "swap":
        permuted, fixed = (names, values) if task.is_relation else (values, names)
        for perm in itertools.permutations(range(len(permuted))):
            if list(perm) == list(range(len(permuted))):
                continue
            moved = [permuted[i] for i in perm]
            if task.is_relation:
                yield moved, fixed, {"objects": list(perm), vkey: list(range(k))}
            else:
                yield fixed, moved, {"objects": list(range(n)), vkey: list(perm)}
    elif kind == "confusion":
        for objs in itertools.product(range(n), repeat=n):
            for vals in itertools.product(range(k), repeat=k):
                if objs == tuple(range(n)) and vals == tuple(range(k)):
                    continue
                yield ([names[i] for i in objs], [values[j] for j in vals],
                       {"objects": list(objs), vkey: list(vals)})
    elif kind in ("vary_value", "vary_object"):
        if task.is_relation or n != 1:
            raise ValueError(f"{kind} is the N = 1 check of attribute tasks; task "
                             f"'{task.name}' concept has N={n}")
        vocab = task.values if kind == "vary_value" else task.objects
        current = values[0] if kind == "vary_value" else names[0]
        for other in vocab.names:
            if other == current:
                continue
            edit = {"slot": 0, "field": kind[5:], "from": current, "to": other}
            yield ((names, [other], edit) if kind == "vary_value" else ([other], values, edit))
    else:
        raise ValueError(f"unknown negative kind '{kind}' (known: {', '.join(KINDS)})")


def category(task: Task, pos_names, pos_values, names, values, edit) -> str | None:
    if "slot" in edit:
        return None
    if task.is_relation:
        objs = ("same objects" if names == pos_names else "swapped objects"
                if len(set(names)) == len(set(pos_names)) else "repeated object")
        rels = ("same relations" if values == pos_values else "swapped relations"
                if sorted(values) == sorted(pos_values) else "repeated relation")
        return f"{objs} / {rels}"
    same_obj = len(set(names)) < len(set(pos_names))
    same_val = len(set(values)) < len(set(pos_values))
    if same_val:
        return "same value / same object" if same_obj else "same value / different objects"
    return "same object / different values" if same_obj else "swapped values"


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


def candidate_count(task: Task, n: int, kind: str) -> int:
    """How many arrangements one concept's `kind` negatives enumerate (before duplicates
    are removed): N! - 1, N^2N - 1, N^N (N-1)^(N-1) - 1 or the vocabulary size - 1."""
    return expected_count(task, n, kind)


def count_problem(task: Task, n: int, kind: str, limit: int | None = None) -> str | None:
    """Why `kind` negatives of task N cannot be enumerated under the limit, or None."""
    limit = negative_limit(limit)
    count = candidate_count(task, n, kind)
    if count <= limit:
        return None
    return (f"task '{task.name}' N={n}: {kind} would enumerate {count:,} negatives per "
            f"concept, above the limit of {limit:,} (raise it with build.max_negatives, "
            f"--max-negatives or AUTOCOMP_MAX_NEGATIVES, or use a smaller N)")


def check_count(task: Task, n: int, kind: str, limit: int | None = None) -> None:
    problem = count_problem(task, n, kind, limit)
    if problem:
        raise AutocompError(problem)


def graph_count_problem(graph: SceneGraph, task, kind: str,
                        limit: int | None = None) -> str | None:
    """count_problem for one concept; a scene concept's count depends on its whole graph."""
    if not _scene(task):
        return count_problem(task, graph.n_objects, kind, limit)
    limit = negative_limit(limit)
    count = scene.candidate_count(graph, task, kind)
    if count <= limit:
        return None
    return (f"task '{task.name}' concept {graph.counts}: {kind} would enumerate {count:,} "
            f"negatives, above the limit of {limit:,}")


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
    pos_names, pos_values = list(graph.names), values_of(graph, task)
    seen, out, duplicates = {positive}, [], 0
    for names, values, edit in _arrangements(graph, task, kind):
        neg = rebuild(graph, task, names, values)
        caption = render(neg)
        if caption in seen:
            duplicates += 1
            continue
        seen.add(caption)
        edit = {**edit, "changed_objects": _changed(pos_names, names),
                "changed_values": _changed(pos_values, values),
                "distinct_objects": len(set(names)), "distinct_values": len(set(values))}
        out.append(Negative(kind, neg, caption, edit,
                            scene.category(graph, names, values) if _scene(task) else
                            category(task, pos_names, pos_values, names, values, edit),
                            neg.meaning_key(task.inverses) == key))
    return NegativeSet(kind, positive, tuple(out), duplicates)


def _changed(before, after) -> list[int]:
    """The slots whose word differs."""
    return [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]


def expected_count(task: Task, n: int, kind: str) -> int:
    """The paper's formula for the number of negatives of a concept with distinct values."""
    if kind == "swap":
        return math.factorial(n) - 1
    if kind == "confusion":
        return n**n * (n - 1) ** (n - 1) - 1 if task.is_relation else n ** (2 * n) - 1
    return len(task.values if kind == "vary_value" else task.objects) - 1

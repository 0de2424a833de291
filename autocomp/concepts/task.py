"""Task definitions: one YAML file each, no Python needed for a new task.

    name: color
    kind: attribute            # attribute (binding) | relation (binding)
    objects: objects           # object vocabulary: built-in name or path (relative to this file)
    values: colors             # attribute vocabulary, or relation vocabulary for kind relation
    n: [1, 2, 3]               # the task's complexities (a list, one integer, or "1-3"); a
                               # run uses these, and any other N the vocabularies can supply
                               # may still be asked for explicitly
    distinct_values: true      # values distinct within a concept (default true)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from autocomp.concepts.vocab import Vocabulary, load_vocabulary
from autocomp.core.errors import AutocompError
from autocomp.language.grammar import Noun

TASK_KINDS = {"attribute": "attributes", "relation": "relations"}
TASK_FIELDS = {"name", "kind", "description", "objects", "values", "n", "distinct_values"}


@dataclass(frozen=True)
class Task:
    name: str
    kind: str
    objects: Vocabulary
    values: Vocabulary
    n: tuple[int, ...]
    distinct_values: bool = True
    description: str = ""
    path: str = ""

    @property
    def is_relation(self) -> bool:
        return self.kind == "relation"

    def value_slots(self, n: int) -> int:
        """How many values a concept of complexity n carries (n, or n-1 relations)."""
        return n - 1 if self.is_relation else n

    def capacity_problem(self, n: int) -> str | None:
        """Why complexity n cannot be sampled from the vocabularies, or None."""
        if self.is_relation and n < 2:
            return f"a relation task needs N >= 2, got N={n}"
        if n < 1:
            return f"N must be at least 1, got N={n}"
        if n > len(self.objects):
            return (f"N={n} needs {n} distinct objects but vocabulary '{self.objects.name}' "
                    f"has {len(self.objects)}")
        k = self.value_slots(n)
        if self.distinct_values and k > len(self.values):
            return (f"N={n} needs {k} distinct values but vocabulary '{self.values.name}' "
                    f"has {len(self.values)}")
        return None

    @cached_property
    def nouns(self) -> dict[str, Noun]:
        return {e.name: e.noun() for e in self.objects.entries}

    @cached_property
    def object_forms(self) -> tuple[str, ...]:
        """Every written form of the task's objects (for the semantic-preservation check)."""
        return tuple(sorted({f for noun in self.nouns.values() for f in noun.forms}))

    def noun(self, name: str) -> Noun:
        return self.nouns.get(name) or Noun.guess(name)

    @cached_property
    def inverses(self) -> dict[str, str]:
        return self.values.inverses if self.is_relation else {}

    def minimal_caption(self, graph) -> str:
        """The minimal-track caption of one of this task's graphs."""
        from autocomp.language.minimal import render_minimal

        return render_minimal(graph, self.noun)


def parse_task(data, path: Path) -> Task:
    if not isinstance(data, dict):
        raise AutocompError("a task file must be a mapping with name, kind, objects, values, n",
                            file=path)
    unknown = sorted(set(data) - TASK_FIELDS)
    if unknown:
        raise AutocompError(f"unknown field '{unknown[0]}' (allowed: {sorted(TASK_FIELDS)})",
                            file=path)
    kind = data.get("kind")
    if kind not in TASK_KINDS:
        raise AutocompError(f"field 'kind' must be attribute, relation or scene, got {kind!r}",
                            file=path)
    vocabs = {}
    for field, want in (("objects", "objects"), ("values", TASK_KINDS[kind])):
        ref = data.get(field)
        if not isinstance(ref, str):
            raise AutocompError(f"field '{field}' must name a vocabulary, got {ref!r}", file=path)
        try:
            vocab = load_vocabulary(ref, base=Path(path).parent)
        except AutocompError as exc:
            if exc.file:  # the problem is inside the vocabulary file: report it there
                raise
            raise AutocompError(f"field '{field}': {exc.problem}", file=path) from None
        if vocab.kind != want:
            raise AutocompError(f"field '{field}' names vocabulary '{vocab.name}' of kind "
                                f"{vocab.kind}; a {kind} task needs kind {want}", file=path)
        vocabs[field] = vocab
    distinct = data.get("distinct_values", True)
    if not isinstance(distinct, bool):
        raise AutocompError(f"field 'distinct_values' must be true or false, got {distinct!r}",
                            file=path)
    task = Task(
        name=str(data.get("name") or Path(path).stem),
        kind=kind,
        objects=vocabs["objects"],
        values=vocabs["values"],
        n=_parse_n(data.get("n"), path),
        distinct_values=distinct,
        description=str(data.get("description", "")),
        path=str(path),
    )
    for n in task.n:
        problem = task.capacity_problem(n)
        if problem:
            raise AutocompError(f"field 'n': {problem}", file=path)
    return task


def _parse_n(raw, path) -> tuple[int, ...]:
    values = raw
    if isinstance(raw, str) and "-" in raw:
        lo, _, hi = raw.partition("-")
        if lo.strip().isdigit() and hi.strip().isdigit():
            values = list(range(int(lo), int(hi) + 1))
    if isinstance(values, int) and not isinstance(values, bool):
        values = [values]
    if (not isinstance(values, list) or not values
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in values)):
        raise AutocompError(f"field 'n' must be integers (a list, one, or a range '1-3'), "
                            f"got {raw!r}", file=path)
    return tuple(sorted(set(values)))

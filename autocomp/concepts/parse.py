"""Reading a binding task file into the class its `kind` names (attribute, relation,
count); scene tasks have their own reader (concepts/scenes.py)."""

from __future__ import annotations

from pathlib import Path

from autocomp.concepts.count import CountTask
from autocomp.concepts.task import TASK_FIELDS, AttributeTask, RelationTask, Task
from autocomp.concepts.vocab import declare, load_vocabulary
from autocomp.core.errors import AutocompError
from autocomp.core.fields import check_name
from autocomp.core.yamlio import checked_mapping

TASK_TYPES = {cls.kind: cls for cls in (AttributeTask, RelationTask, CountTask)}


def parse_task(data, path: Path) -> Task:
    """A binding task from its YAML mapping, as the class its `kind` names."""
    checked_mapping(data, path, TASK_FIELDS,
                    "a task file must be a mapping with name, kind, objects, values, n")
    kind = data.get("kind")
    if kind not in TASK_TYPES:
        raise AutocompError(f"field 'kind' must be attribute, relation, count or scene, got "
                            f"{kind!r}", file=path)
    vocabs = {}
    cls = TASK_TYPES[kind]
    for field, want in (("objects", "objects"), ("values", cls.values_kind)):
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
    other = ({"attribute", "relation"} - {cls.aspect_field}) & set(data)
    if other:
        raise AutocompError(f"field '{other.pop()}' does not apply to a {kind} task (use "
                            f"'{cls.aspect_field}')", file=path)
    if data.get(cls.aspect_field) is not None:
        vocabs["values"] = declare(vocabs["values"], data[cls.aspect_field], file=path,
                                   field=cls.aspect_field)
    problem = cls.vocabulary_problem(vocabs["objects"], vocabs["values"])
    if problem:
        raise AutocompError(problem, file=path)
    distinct = data.get("distinct_values", True)
    if not isinstance(distinct, bool):
        raise AutocompError(f"field 'distinct_values' must be true or false, got {distinct!r}",
                            file=path)
    task = cls(
        name=check_name(data.get("name") or Path(path).stem, "task", file=path),
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

"""A user's own task carried with an export: `tasks/NAME.yaml` beside the data, next to a
copy of every vocabulary file it names, so `autocomp eval EXPORT` rebuilds the negatives
without the files the run was made from.

Reading is confined to that folder: a bundled task may name built-in vocabularies or plain
file names inside tasks/, nothing else (an export is data someone else may have made).
"""

from __future__ import annotations

from pathlib import Path

from autocomp.core.errors import AutocompError
from autocomp.core.fields import SAFE_NAME

FOLDER = "tasks"


def _refs(data: dict) -> list[tuple[str, int | None]]:
    """(field, index in a list or None) of every vocabulary reference of a task file."""
    fields = ["objects", "values"]
    if data.get("kind") == "scene":
        fields = ["objects", "relations"]
        attrs = data.get("attributes")
        return ([(f, None) for f in fields]
                + [("attributes", i) for i in range(len(attrs) if isinstance(attrs, list)
                                                     else 0)])
    return [(f, None) for f in fields]


def _get(data: dict, field: str, i: int | None):
    value = data.get(field)
    return value[i] if i is not None else value


def write_bundle(task_file: Path, name: str, folder: Path) -> Path:
    """Copy the task file `task_file` (whose task is `name`) into `folder`/tasks/ with its
    own vocabularies beside it (built-in ones stay names); the bundled file's path."""
    import copy

    import yaml

    from autocomp.concepts.vocab import builtin_vocabularies, resolve
    from autocomp.core.records import atomic_open, write_text
    from autocomp.core.yamlio import read_yaml

    data = read_yaml(task_file)
    out = copy.deepcopy(data)
    target = Path(folder) / FOLDER
    target.mkdir(parents=True, exist_ok=True)
    for field, i in _refs(data):
        ref = _get(data, field, i)
        if not isinstance(ref, str) or ref in builtin_vocabularies():
            continue
        copied = f"{name}.{field}{'' if i is None else i}.vocab.yaml"
        with atomic_open(target / copied, "wb") as fh:
            fh.write(resolve(ref, Path(task_file).parent).read_bytes())
        if i is None:
            out[field] = copied
        else:
            out[field][i] = copied
    path = target / f"{name}.yaml"
    write_text(path, yaml.safe_dump(out, sort_keys=False, allow_unicode=True))
    return path


def bundled_task(folder: Path, name: str):
    """The task `name` bundled in `folder`/tasks/, or the reason it cannot be used (a
    string): not there, or naming a vocabulary outside that folder, or another name."""
    from autocomp.concepts.load import load_task
    from autocomp.concepts.vocab import builtin_vocabularies
    from autocomp.core.yamlio import read_yaml

    if not isinstance(name, str) or not SAFE_NAME.fullmatch(name):
        return "task: not a built-in task name"
    inside = (Path(folder) / FOLDER).resolve()
    path = Path(folder) / FOLDER / f"{name}.yaml"
    if not path.is_file() or not path.resolve().is_relative_to(inside):
        return "task: not a built-in task name, and not bundled in tasks/"
    try:
        data = read_yaml(path)
        if not isinstance(data, dict):
            return f"task: {FOLDER}/{name}.yaml is not a task file"
        for field, i in _refs(data):
            ref = _get(data, field, i)
            if isinstance(ref, str) and ref not in builtin_vocabularies() and not (
                    SAFE_NAME.fullmatch(ref) and (path.parent / ref).is_file()
                    and (path.parent / ref).resolve().is_relative_to(inside)):
                return (f"task: {FOLDER}/{name}.yaml names vocabulary {str(ref)[:60]!r} "
                        "outside tasks/")
        task = load_task(path)
    except AutocompError as exc:
        return f"task: {FOLDER}/{name}.yaml: {exc.problem}"
    if task.name != name:
        return f"task: {FOLDER}/{name}.yaml defines task '{task.name}'"
    return task

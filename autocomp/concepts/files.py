"""Where the built-in task files are, and how a task reference (a built-in name or a path)
finds its file."""

from __future__ import annotations

from pathlib import Path

from autocomp.core.errors import AutocompError
from autocomp.core.resources import data_dir


def builtin_tasks(folder: str = "tasks") -> dict[str, Path]:
    return {p.stem: p for p in sorted((data_dir("catalog") / folder).glob("*.yaml"))}


def task_path(ref: str | Path, folders=("tasks", "scenes"), what: str = "task") -> Path:
    """The file of a built-in task name (in concepts/<folder>/ for each of `folders`) or of
    a path."""
    builtin: dict[str, Path] = {}
    for folder in folders:  # the first folder wins a name both have
        for name, path in builtin_tasks(folder).items():
            builtin.setdefault(name, path)
    if isinstance(ref, str) and ref in builtin:
        return builtin[ref]
    path = Path(ref).expanduser()
    if not path.is_file():
        raise AutocompError(f"no {what} '{ref}' (not a file; built-in {what}s: "
                            f"{', '.join(builtin)})")
    return path

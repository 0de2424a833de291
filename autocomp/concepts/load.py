"""Loading a task: by built-in name or by the path of its YAML file, as the class its
`kind` names."""

from __future__ import annotations

from pathlib import Path

from autocomp.concepts.files import task_path
from autocomp.concepts.parse import parse_task
from autocomp.concepts.scenes import parse_scene_task
from autocomp.core.yamlio import read_yaml


def load_task(ref: str | Path):
    """A task by built-in name ("color", "scenes") or by the path of its YAML file: a Task,
    or a SceneTask when the file says kind: scene."""
    path = task_path(ref)
    data = read_yaml(path)
    if isinstance(data, dict) and data.get("kind") == "scene":
        return parse_scene_task(data, path)
    return parse_task(data, path)

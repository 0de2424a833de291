"""The contextual-caption prompt of a concept (Auto-Comp appendix A.1), and its retry form."""

from __future__ import annotations

from autocomp.concepts.task import Task
from autocomp.core.resources import prompt_text
from autocomp.core.scene import SceneGraph


def contextual_prompt(graph: SceneGraph, task: Task, attempt: int = 0) -> tuple[str, str]:
    """(system, user) messages; attempts after the first get the more insistent form."""
    phrases = task.binding_phrases(graph)
    n = graph.n_objects
    fields = {"num_obj": n, "obj_plural": "object" if n == 1 else "objects",
              "obj_colors_text": " and ".join(f"'{p}'" for p in phrases),
              **task.prompt_fields()}
    suffix = task.prompt_suffix
    user = prompt_text(f"contextual_user{suffix}.txt").format(**fields)
    if attempt > 0:
        user = prompt_text("contextual_retry.txt").format(**fields) + user
    system = prompt_text(f"contextual_system{suffix}.txt").format(**fields)
    return system.strip(), user.strip()

"""The contextual-caption prompt of a concept (Auto-Comp appendix A.1), and its retry form."""

from __future__ import annotations

from autocomp.captions.grammar import noun_phrase
from autocomp.concepts.task import Task
from autocomp.resources import prompt_text
from autocomp.scene import SceneGraph


def binding_phrases(graph: SceneGraph, task: Task) -> list[str]:
    """'a red cube', or for relations 'a cube under a sphere': one per binding."""
    if task.is_relation:
        return [f"{noun_phrase(task.noun(graph.objects[r.subject].name))} {r.predicate} "
                f"{noun_phrase(task.noun(graph.objects[r.object].name))}"
                for r in graph.relations]
    return [noun_phrase(task.noun(o.name), o.attributes) for o in graph.objects]


def contextual_prompt(graph: SceneGraph, task: Task, attempt: int = 0) -> tuple[str, str]:
    """(system, user) messages; attempts after the first get the more insistent form."""
    phrases = binding_phrases(graph, task)
    n = graph.n_objects
    fields = {"num_obj": n, "obj_plural": "object" if n == 1 else "objects",
              "obj_colors_text": " and ".join(f"'{p}'" for p in phrases)}
    user = prompt_text("contextual_user_relation.txt" if task.is_relation
                       else "contextual_user.txt").format(**fields)
    if attempt > 0:
        user = prompt_text("contextual_retry.txt").format(**fields) + user
    system = prompt_text("contextual_system_relation.txt" if task.is_relation
                         else "contextual_system.txt")
    return system.strip(), user.strip()

"""The contextual-caption prompt of a concept (Auto-Comp appendix A.1), and its retry form."""

from __future__ import annotations

from autocomp.concepts.task import Task
from autocomp.core.resources import prompt_text
from autocomp.core.scene import SceneGraph
from autocomp.language.grammar import noun_phrase


def binding_phrases(graph: SceneGraph, task: Task) -> list[str]:
    """'a red cube', or for relations 'a cube under a sphere': one per binding. Scene
    tasks: one per relation with both objects' attributes, one per object in none."""
    if task.kind == "scene":
        def np(i):
            return noun_phrase(task.noun(graph.objects[i].name), graph.objects[i].attributes)

        related = {i for r in graph.relations for i in (r.subject, r.object)}
        return ([f"{np(r.subject)} {r.predicate} {np(r.object)}" for r in graph.relations]
                + [np(i) for i in range(graph.n_objects) if i not in related])
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
    suffix = "_scene" if task.kind == "scene" else "_relation" if task.is_relation else ""
    user = prompt_text(f"contextual_user{suffix}.txt").format(**fields)
    if attempt > 0:
        user = prompt_text("contextual_retry.txt").format(**fields) + user
    system = prompt_text(f"contextual_system{suffix}.txt")
    return system.strip(), user.strip()

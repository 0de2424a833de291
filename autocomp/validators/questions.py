"""The direct questions asked about each binding of a concept (Auto-Comp attribute check)."""

from __future__ import annotations

from autocomp.concepts.task import Task
from autocomp.scene import SceneGraph
from autocomp.validators.base import Question


def questions(graph: SceneGraph, task: Task) -> list[Question]:
    """One question per binding, its answer constrained to the task's value vocabulary."""
    vocab = task.values
    choices = tuple(vocab.names)
    if task.is_relation:
        hints = {e.name: dict(e.geometry or {}) for e in vocab.entries}
        out = []
        for rel in graph.relations:
            s, o = graph.objects[rel.subject].name, graph.objects[rel.object].name
            geo = hints.get(rel.predicate, {})
            if "size" in geo:
                text = f"Is the {s} larger or smaller than the {o}?"
            else:
                text = f"Where is the {s} relative to the {o}?"
            out.append(Question("relation", f"{text} Answer with one of: {', '.join(choices)}.",
                                choices, rel.predicate, s, o, hints))
        return out
    hints = {e.name: e.rgb for e in vocab.entries if e.rgb is not None}
    word = "color" if hints else vocab.name
    out = []
    for obj in graph.objects:
        for value in obj.attributes:
            out.append(Question("attribute", f"What {word} is the {obj.name}? Answer with one "
                                f"of: {', '.join(choices)}.", choices, value, obj.name,
                                hints=hints))
    return out

"""The direct questions asked about each binding of a concept (Auto-Comp attribute check)."""

from __future__ import annotations

from autocomp.concepts.task import Task
from autocomp.core.scene import SceneGraph
from autocomp.validators.base import Question


def questions(graph: SceneGraph, task: Task) -> list[Question]:
    """One question per binding, its answer constrained to the task's value vocabulary
    (scene tasks: the attribute's own vocabulary; then one per relation)."""
    if task.kind == "scene":
        out = [attribute_question(obj.name, value, task.vocab_of_value[value])
               for obj in graph.objects for value in obj.attributes]
        return out + relation_questions(graph, task.relations)
    vocab = task.values
    if task.is_relation:
        return relation_questions(graph, vocab)
    return [attribute_question(obj.name, value, vocab)
            for obj in graph.objects for value in obj.attributes]


def relation_questions(graph: SceneGraph, vocab) -> list[Question]:
    choices = tuple(vocab.names)
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


def attribute_question(name: str, value: str, vocab) -> Question:
    """What a pixel reader measures follows the entries: rgb (color), scale (a size word)
    or pattern (a texture); other vocabularies are asked by name, for VQA answerers."""
    choices = tuple(vocab.names)
    if any(e.scale is not None for e in vocab.entries):
        reads, text = "scale", f"What size is the {name} compared with the other objects?"
        hints = {e.name: e.scale for e in vocab.entries if e.scale is not None}
    elif any(e.pattern is not None for e in vocab.entries):
        reads, text = "pattern", f"What pattern is on the surface of the {name}?"
        hints = {e.name: e.pattern for e in vocab.entries if e.pattern is not None}
    else:
        hints = {e.name: e.rgb for e in vocab.entries if e.rgb is not None}
        reads = "color"
        text = f"What {'color' if hints else vocab.name} is the {name}?"
    return Question("attribute", f"{text} Answer with one of: {', '.join(choices)}.", choices,
                    value, name, hints=hints, reads=reads)

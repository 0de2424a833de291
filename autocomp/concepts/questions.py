"""The direct questions asked about each binding of a concept (Auto-Comp attribute check):
one per attribute, its answer constrained to that attribute's vocabulary, and one per
relation. Tasks build them (`task.questions(graph)`); validators ask them."""

from __future__ import annotations

from dataclasses import dataclass, field

from autocomp.core.scene import SceneGraph


@dataclass(frozen=True)
class Question:
    text: str  # what a VLM is asked
    choices: tuple[str, ...]  # the vocabulary the answer is constrained to
    expected: str
    subject: str  # object name the question is about
    object: str | None = None  # the second object of a relation
    hints: dict = field(default_factory=dict)  # choice -> rgb or geometry, for pixel readers
    reads: str = "color"  # what a pixel reader measures: color, scale or pattern of one
    #                       object (from the vocabulary's entries), or relation between two

    @property
    def about_relation(self) -> bool:
        return self.reads == "relation"


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
        out.append(Question(f"{text} Answer with one of: {', '.join(choices)}.",
                            choices, rel.predicate, s, o, hints, reads="relation"))
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
    return Question(f"{text} Answer with one of: {', '.join(choices)}.", choices,
                    value, name, hints=hints, reads=reads)

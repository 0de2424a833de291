"""The direct questions asked about each binding of a concept (Auto-Comp attribute check):
one per attribute, its answer constrained to that attribute's vocabulary, and one per
relation. Tasks build them (`task.questions(graph)`); validators ask them."""

from __future__ import annotations

from dataclasses import dataclass, field

from autocomp.concepts import drawable
from autocomp.core.scene import SceneGraph


@dataclass(frozen=True)
class Question:
    text: str  # what a VLM is asked
    choices: tuple[str, ...]  # the vocabulary the answer is constrained to
    expected: str
    subject: str  # object name the question is about
    object: str | None = None  # the second object of a relation
    hints: dict = field(default_factory=dict)  # choice -> rgb or geometry, for pixel readers
    reads: str = "rgb"  # what a pixel reader measures: the value kind of one object's
    #                     value (rgb, scale, pattern, ...: the kind drawing the vocabulary's
    #                     entries, autocomp/kinds/), relation between two, presence of an
    #                     object (yes / no), or none (only a VQA answerer can answer it)

    @property
    def about_relation(self) -> bool:
        return self.reads == "relation"


def relation_questions(graph: SceneGraph, vocab) -> list[Question]:
    """One per relation, asked as the vocabulary's aspect asks ("Where is the {subject}
    relative to the {object}?")."""
    choices = tuple(vocab.names)
    hints = vocab.geometries
    out = []
    for rel in graph.relations:
        s, o = graph.objects[rel.subject].name, graph.objects[rel.object].name
        text = vocab.aspect.ask(subject=s, object=o)
        out.append(Question(f"{text} Answer with one of: {', '.join(choices)}.",
                            choices, rel.predicate, s, o, hints, reads="relation"))
    return out


def attribute_question(name: str, value: str, vocab, asked: str | None = None) -> Question:
    """Asked as the vocabulary's aspect asks ("What is the {object} made of?"; `asked`:
    how the question writes the object, if not by its name: "How many cubes ..."). What a
    pixel reader measures follows the entries: the first value kind (in the registry's
    order) drawing some of them, its hints each such entry's value; entries drawn by no
    kind only a VQA answerer can answer."""
    choices = tuple(vocab.names)
    reads, hints = "none", {}
    for key in drawable.value_fields():
        found = {e.name: e.value for e in vocab.entries if e.drawn_by == key}
        if found:
            reads, hints = key, found
            break
    text = vocab.aspect.ask(object=asked or name)
    return Question(f"{text} Answer with one of: {', '.join(choices)}.", choices,
                    value, name, hints=hints, reads=reads)

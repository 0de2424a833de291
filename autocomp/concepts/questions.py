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
    reads: str = "color"  # what a pixel reader measures: color, scale, pattern, material
    #                       or count of one object (from the vocabulary's entries), relation
    #                       between two, or none (only a VQA answerer can answer it)

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


# what a pixel reader measures for a vocabulary, from the field that draws its entries
READS = (("rgb", "color"), ("scale", "scale"), ("pattern", "pattern"),
         ("material", "material"), ("count", "count"))


def attribute_question(name: str, value: str, vocab, asked: str | None = None) -> Question:
    """Asked as the vocabulary's aspect asks ("What is the {object} made of?"; `asked`:
    how the question writes the object, if not by its name: "How many cubes ..."). What a
    pixel reader measures follows the entries: rgb (color), scale (a size word), pattern
    (a texture), material (a surface) or count (a numeral); others only a VQA answerer can
    answer."""
    choices = tuple(vocab.names)
    reads, hints = "none", {}
    for key, reader in READS:
        drawn = {e.name: getattr(e, key) for e in vocab.entries if getattr(e, key) is not None}
        if drawn:
            reads, hints = reader, drawn
            break
    text = vocab.aspect.ask(object=asked or name)
    return Question(f"{text} Answer with one of: {', '.join(choices)}.", choices,
                    value, name, hints=hints, reads=reads)

"""Count tasks: numerals bound to objects ("two cubes and three spheres").

    name: shape_count
    kind: count
    objects: shapes        # no pair nouns ("two gloves" would not say how many pairs)
    values: numbers        # an attribute vocabulary whose entries carry `count`
    n: [1, 2, 3]           # how many objects are counted, each with its numeral

A concept is an attribute concept whose attribute is a numeral: the scene graph keeps one
object per noun, its numeral as its attribute, and `object_counts` says how many of each
the image must show, which the objects check (detected classes and counts, docs/methods.md
section 3) compares. Swap permutes the numerals over the objects ("three cubes and two
spheres"), confusion repeats one ("two cubes and two spheres").
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

from autocomp.concepts import drawable
from autocomp.concepts.questions import Question, attribute_question
from autocomp.concepts.task import AttributeTask
from autocomp.core.scene import SceneGraph
from autocomp.language.grammar import COUNTED, Noun


@dataclass(frozen=True)
class CountTask(AttributeTask):
    kind: ClassVar[str] = "count"

    @classmethod
    def vocabulary_problem(cls, objects, values) -> str | None:
        uncounted = [e.name for e in values.entries
                     if e.drawn_by is None or drawable.kind_of(e).copies(e.value) is None]
        if uncounted:
            return (f"field 'values': a count task needs numerals (entries with `count`); "
                    f"'{uncounted[0]}' of vocabulary '{values.name}' has none")
        pairs = [e.name for e in objects.entries if e.pair]
        if pairs:
            return (f"field 'objects': a count task cannot count pair nouns ('{pairs[0]}' of "
                    f"vocabulary '{objects.name}')")
        return None

    @cached_property
    def nouns(self) -> dict[str, Noun]:
        """Every object written after its numeral, in the plural ("two cubes")."""
        return {e.name: Noun(e.name, COUNTED, e.plural) for e in self.objects.entries}

    def noun(self, name: str) -> Noun:
        return self.nouns.get(name) or counted(Noun.guess(name))

    def example_noun(self, name: str) -> Noun:
        return counted(Noun.guess(name))

    def object_counts(self, graph: SceneGraph) -> Counter:
        return Counter({o.name: copies(self.values[o.attributes[0]]) for o in graph.objects})

    def questions(self, graph: SceneGraph) -> list[Question]:
        """"How many cubes are there?": the object in the plural."""
        return [attribute_question(o.name, o.attributes[0], self.values,
                                   asked=self.noun(o.name).plural) for o in graph.objects]


def counted(noun: Noun) -> Noun:
    return Noun(noun.name, COUNTED, noun.plural)


def copies(entry) -> int:
    """How many of the object a numeral asks for (as its drawable kind counts it)."""
    return drawable.kind_of(entry).copies(entry.value)

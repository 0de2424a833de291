"""Minimal captions of scene graphs (several attributes per object, relations forming a
forest): one sentence per relation, each object introduced once with all its attributes,
objects in no relation introduced on their own, then the background.

  "There is a large striped red cube to the left of a sphere. The cube is above a small
   cone. There is a blue torus. The background is white."

Every binding is written so that the semantic-preservation check finds it: an attribute
right before its object among the object's other attributes, a relation between its two
noun phrases.
"""

from __future__ import annotations

from collections.abc import Callable

from autocomp.core.scene import SceneGraph
from autocomp.language.grammar import Noun, noun_phrase, predicate_form

BACKGROUND = "The background is white."


def render_scene(graph: SceneGraph, noun: Callable[[str], Noun],
                 background: str | None = BACKGROUND,
                 phrase: Callable[[int], str] | None = None) -> str:
    """The caption; `phrase(i)` may give object i's first mention (an indefinite noun
    phrase), e.g. with a modifier added, as the template writer does."""
    said: set[int] = set()
    sentences = []

    def np(i: int) -> str:
        if phrase is not None:
            return phrase(i)
        return noun_phrase(noun(graph.objects[i].name), graph.objects[i].attributes)

    def there(i: int) -> str:
        return "There are" if noun(graph.objects[i].name).plural_verb else "There is"

    for r in graph.relations:
        subject = noun(graph.objects[r.subject].name)
        form = predicate_form(r.predicate)
        obj = (f"the {noun(graph.objects[r.object].name).form}" if r.object in said
               else np(r.object))
        if r.subject in said:
            sentences.append(f"The {subject.form} {form.clause(subject.plural_verb)} {obj}.")
        else:
            sentences.append(f"{there(r.subject)} {np(r.subject)} "
                             f"{form.modifier(subject.plural_verb)} {obj}.")
        said |= {r.subject, r.object}
    sentences += [f"{there(i)} {np(i)}." for i in range(graph.n_objects) if i not in said]
    if background:
        sentences.append(background)
    return " ".join(sentences)

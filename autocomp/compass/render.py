"""Template captions of primitive sets ("There is a dark brown sofa in the living room.
There is a ceiling."), their decomposed captions, and the primitives of a graph.

Grammar holds on Visual Genome's open vocabulary: verb predicates are conjugated or follow
"is" ("The man wears the pants.", "There is a man wearing a shirt.", "There is a car
parked on a street."), plural names take no article and "are" ("There are bikes behind a
man."), and a/an follows the first word (inflect). The rendering depends only on the
graph's structure, so a negative made by changing one primitive renders with the same
words everywhere else, agreement and articles re-rendered for the new word.
"""

from __future__ import annotations

from functools import lru_cache

from autocomp.core.scene import SceneGraph
from autocomp.language.grammar import (
    Noun,
    indefinite_article,
    is_plural_noun,
    predicate_form,
)
from autocomp.language.scene import render_scene

__all__ = ["composed", "decomposed", "predicate_form", "primitives", "plural"]


def primitives(graph: SceneGraph) -> list[tuple]:
    """("O", i) for every object, ("A", i, j) for attribute j of object i, ("R", k)."""
    out = [("O", i) for i in range(graph.n_objects)]
    out += [("A", i, j) for i, o in enumerate(graph.objects) for j in range(len(o.attributes))]
    out += [("R", k) for k in range(graph.n_relations)]
    return out


@lru_cache(maxsize=1)
def _noun_test():
    """WordNet's "is this a noun" when WordNet is installed, else None (inflect alone)."""
    from autocomp.core.errors import AutocompError

    try:
        from autocomp.compass.wordnet import load_wordnet

        wn = load_wordnet()
    except (AutocompError, ImportError):
        return None
    return lambda word: bool(wn.synsets(word, "n"))


@lru_cache(maxsize=65536)
def plural(name: str) -> bool:
    return is_plural_noun(name, _noun_test())


def _indefinite(words: str, name: str) -> str:
    """'a dark brown sofa', 'an apple', 'black pants' (plurals take no article)."""
    return words if plural(name) else f"{indefinite_article(words)} {words}"


def _np(graph: SceneGraph, i: int) -> str:
    o = graph.objects[i]
    return _indefinite(" ".join([*o.attributes, o.name]), o.name)


def _there(graph: SceneGraph, i: int) -> str:
    return "There are" if plural(graph.objects[i].name) else "There is"


def _relation(graph: SceneGraph, k: int, obj: str) -> str:
    """'The man wears <obj>.', 'The trees are behind <obj>.'"""
    r = graph.relations[k]
    subject = graph.objects[r.subject].name
    clause = predicate_form(r.predicate).clause(plural(subject))
    return f"The {subject} {clause} {obj}."


def composed(graph: SceneGraph) -> str:
    """Relations first, each as a sentence, each object introduced once with its
    attributes; objects in no relation get "There is/are ...": the scene renderer of
    autocomp's own scene tasks, with Visual Genome's nouns (articles from inflect, plurals
    bare and with "are")."""
    return render_scene(graph, _vg_noun, background=None, phrase=lambda i: _np(graph, i))


def _vg_noun(name: str) -> Noun:
    """The renderer reads only the written form and the verb agreement of a noun whose
    noun phrases `phrase` gives ("some" marks a plural verb)."""
    return Noun(name, "some" if plural(name) else "a", name)


def decomposed(graph: SceneGraph, prim: tuple) -> str:
    """The caption of one primitive: an object exists, an object has an attribute, or a
    relation holds between two objects."""
    if prim[0] == "O":
        name = graph.objects[prim[1]].name
        return f"{_there(graph, prim[1])} {_indefinite(name, name)} in the image."
    if prim[0] == "A":
        o = graph.objects[prim[1]]
        words = f"{o.attributes[prim[2]]} {o.name}"
        return f"{_there(graph, prim[1])} {_indefinite(words, o.name)}."
    r = graph.relations[prim[1]]
    return _relation(graph, prim[1], f"the {graph.objects[r.object].name}")

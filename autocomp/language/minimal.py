"""Minimal captions: a template rendering of a concept's scene graph.

Attribute concepts: "a red chair and a blue lamp on a white background".
Relation chains: "a chair under a lamp, which is above a cup, on a white background".
"""

from __future__ import annotations

from collections.abc import Callable

from autocomp.core.scene import SceneGraph
from autocomp.language.grammar import Noun, join, noun_phrase

SUFFIX = "on a white background"


def render_minimal(graph: SceneGraph, noun: Callable[[str], Noun],
                   suffix: str = SUFFIX) -> str:
    """The template caption of `graph`; `noun` gives the Noun of an object name."""
    phrases = [noun_phrase(noun(o.name), o.attributes) for o in graph.objects]
    if not graph.relations:
        body = join(phrases)
    elif graph.is_chain():
        body = f"{phrases[0]} {graph.relations[0].predicate} {phrases[1]}"
        for rel in graph.relations[1:]:
            verb = "are" if noun(graph.objects[rel.subject].name).plural_verb else "is"
            body += f", which {verb} {rel.predicate} {phrases[rel.object]}"
        if len(graph.relations) > 1 and suffix:
            body += ","
    else:
        raise ValueError("the minimal template renders attribute lists and relation chains; "
                         f"this graph has relations {graph.to_dict()['relations']}")
    return f"{body} {suffix}" if suffix else body

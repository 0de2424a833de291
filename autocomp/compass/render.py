"""Template captions of primitive sets ("There is a dark brown sofa in the living room.
There is a ceiling."), their decomposed captions, and the primitives of a graph.

The rendering depends only on the graph's structure, so a negative made by changing one
primitive renders with the same words everywhere else.
"""

from __future__ import annotations

from autocomp.captions.grammar import indefinite_article
from autocomp.scene import SceneGraph


def primitives(graph: SceneGraph) -> list[tuple]:
    """("O", i) for every object, ("A", i, j) for attribute j of object i, ("R", k)."""
    out = [("O", i) for i in range(graph.n_objects)]
    out += [("A", i, j) for i, o in enumerate(graph.objects) for j in range(len(o.attributes))]
    out += [("R", k) for k in range(graph.n_relations)]
    return out


def _np(graph: SceneGraph, i: int) -> str:
    o = graph.objects[i]
    words = " ".join([*o.attributes, o.name])
    return f"{indefinite_article(words)} {words}"


def composed(graph: SceneGraph) -> str:
    """Relations first, each as a sentence, each object introduced once with its
    attributes; objects in no relation get "There is ...".
    """
    said: set[int] = set()
    sentences = []
    for r in graph.relations:
        obj = f"the {graph.objects[r.object].name}" if r.object in said else _np(graph, r.object)
        if r.subject in said:
            sentences.append(f"The {graph.objects[r.subject].name} is {r.predicate} {obj}.")
        else:
            sentences.append(f"There is {_np(graph, r.subject)} {r.predicate} {obj}.")
        said |= {r.subject, r.object}
    sentences += [f"There is {_np(graph, i)}." for i in range(graph.n_objects) if i not in said]
    return " ".join(sentences)


def decomposed(graph: SceneGraph, prim: tuple) -> str:
    """The caption of one primitive: an object exists, an object has an attribute, or a
    relation holds between two objects."""
    if prim[0] == "O":
        name = graph.objects[prim[1]].name
        return f"There is {indefinite_article(name)} {name} in the image."
    if prim[0] == "A":
        o = graph.objects[prim[1]]
        words = f"{o.attributes[prim[2]]} {o.name}"
        return f"There is {indefinite_article(words)} {words}."
    r = graph.relations[prim[1]]
    return (f"The {graph.objects[r.subject].name} is {r.predicate} the "
            f"{graph.objects[r.object].name}.")

"""Atoms and compounds of a scene graph (CREPE section 3.1), the units a split holds out
and a corpus is scanned for."""

from __future__ import annotations

from autocomp.core.scene import SceneGraph


def atoms(graph: SceneGraph) -> set[tuple]:
    out = {("object", o.name) for o in graph.objects}
    out |= {("value", a) for o in graph.objects for a in o.attributes}
    return out | {("relation", r.predicate) for r in graph.relations}


def compounds(graph: SceneGraph) -> set[tuple]:
    out = {("value-object", a, o.name) for o in graph.objects for a in o.attributes}
    return out | {("relation", graph.objects[r.subject].name, r.predicate,
                   graph.objects[r.object].name) for r in graph.relations}


def words(unit: tuple) -> str:
    """A compound or atom as words ("red cube", "cube above sphere")."""
    return " ".join(unit[1:])

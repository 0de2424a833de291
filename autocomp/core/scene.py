"""The one data type that flows through autocomp: a small scene graph.

An Auto-Comp concept ("a red chair and a blue lamp"; "a chair under a lamp, which is above
a cup") and a Visual Genome subgraph are both a SceneGraph: objects with attributes, and
relations (subject index, predicate, object index) between them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache


@dataclass(frozen=True)
class Object:
    name: str
    attributes: tuple[str, ...] = ()

    def __post_init__(self):
        if type(self.attributes) is not tuple:
            object.__setattr__(self, "attributes", tuple(self.attributes))
        if not self.name:
            raise ValueError("an object needs a non-empty name")


@lru_cache(maxsize=1 << 16)
def shared_object(name: str, attributes: tuple[str, ...] = ()) -> Object:
    """One Object per (name, attributes), reused: objects are frozen, so the millions of
    negatives a benchmark enumerates share them instead of building each anew."""
    return Object(name, attributes)


@dataclass(frozen=True)
class Relation:
    subject: int
    predicate: str
    object: int


@dataclass(frozen=True)
class SceneGraph:
    objects: tuple[Object, ...]
    relations: tuple[Relation, ...] = field(default=())

    def __post_init__(self):
        object.__setattr__(self, "objects", tuple(self.objects))
        object.__setattr__(self, "relations", tuple(self.relations))
        n = len(self.objects)
        for rel in self.relations:
            if not (0 <= rel.subject < n and 0 <= rel.object < n):
                raise ValueError(f"relation {rel} points outside the {n} objects")
            if rel.subject == rel.object:
                raise ValueError(f"relation {rel} relates an object to itself")

    # ---- primitive counts (COMPASS skill load) -------------------------------------
    @property
    def n_objects(self) -> int:
        return len(self.objects)

    @property
    def n_attributes(self) -> int:
        return sum(len(o.attributes) for o in self.objects)

    @property
    def n_relations(self) -> int:
        return len(self.relations)

    @property
    def counts(self) -> dict[str, int]:
        """n_O, n_A, n_R and their total (the complexity N of COMPASS)."""
        counts = {"n_O": self.n_objects, "n_A": self.n_attributes, "n_R": self.n_relations}
        counts["total"] = sum(counts.values())
        return counts

    # ---- structure -----------------------------------------------------------------
    @property
    def names(self) -> tuple[str, ...]:
        return tuple(o.name for o in self.objects)

    def is_chain(self) -> bool:
        """True when the relations chain the objects in order: (o1 r1 o2), (o2 r2 o3), ..."""
        return [(r.subject, r.object) for r in self.relations] == [
            (i, i + 1) for i in range(len(self.objects) - 1)
        ]

    def meaning_key(self, inverses: Mapping[str, str] | None = None) -> tuple:
        """A key equal for two graphs that state the same facts.

        Object order does not matter ("a red chair and a blue lamp" = "a blue lamp and a red
        chair"), and a relation equals its inverse read backwards ("a chair under a lamp" =
        "a lamp above a chair") when `inverses` names the inverse predicates.
        """
        inverses = inverses or {}
        objects = sorted((o.name, tuple(sorted(o.attributes)) if len(o.attributes) > 1
                          else o.attributes) for o in self.objects)
        facts = []
        names = [o.name for o in self.objects]
        for rel in self.relations:
            forward = (names[rel.subject], rel.predicate, names[rel.object])
            if rel.predicate in inverses:
                backward = (forward[2], inverses[rel.predicate], forward[0])
                forward = min(forward, backward)
            facts.append(forward)
        facts.sort()
        return (tuple(objects), tuple(facts))  # multisets as sorted tuples

    # ---- identity and serialisation ------------------------------------------------
    def to_dict(self) -> dict:
        return {
            "objects": [{"name": o.name, "attributes": list(o.attributes)} for o in self.objects],
            "relations": [[r.subject, r.predicate, r.object] for r in self.relations],
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> SceneGraph:
        objects = [Object(o["name"], tuple(o.get("attributes", ()))) for o in data["objects"]]
        relations = [Relation(int(s), str(p), int(o)) for s, p, o in data.get("relations", ())]
        return cls(tuple(objects), tuple(relations))

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> SceneGraph:
        return cls.from_dict(json.loads(text))

    @property
    def id(self) -> str:
        """Stable id: a hash of the content (same graph, same id, in any process)."""
        return hashlib.sha256(self.to_json().encode()).hexdigest()[:16]

    # ---- edits ---------------------------------------------------------------------
    @classmethod
    def trusted(cls, objects: tuple, relations: tuple) -> SceneGraph:
        """A graph from parts already checked (an edit of a valid graph that keeps its
        structure): no validation, for the millions of negatives a benchmark enumerates."""
        graph = object.__new__(cls)
        object.__setattr__(graph, "objects", objects)
        object.__setattr__(graph, "relations", relations)
        return graph

    def with_objects(self, objects) -> SceneGraph:
        objects = tuple(objects)
        if len(objects) != len(self.objects):
            return SceneGraph(objects, self.relations)
        return SceneGraph.trusted(objects, self.relations)

    def with_predicates(self, predicates) -> SceneGraph:
        pairs = zip(self.relations, predicates, strict=True)
        rels = tuple(Relation(r.subject, p, r.object) for r, p in pairs)
        return SceneGraph.trusted(self.objects, rels)


def attribute_graph(names, values) -> SceneGraph:
    """N objects, one attribute each: an attribute-binding concept."""
    return SceneGraph(tuple(Object(n, (v,)) for n, v in zip(names, values, strict=True)))


def chain_graph(names, predicates) -> SceneGraph:
    """N objects chained by N-1 relations: a relation-binding concept."""
    if len(predicates) != len(names) - 1:
        raise ValueError(f"a chain of {len(names)} objects needs {len(names) - 1} relations")
    rels = tuple(Relation(i, p, i + 1) for i, p in enumerate(predicates))
    return SceneGraph(tuple(Object(n) for n in names), rels)

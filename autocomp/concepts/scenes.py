"""Scene tasks: scene graphs whose object, attribute and relation counts vary independently,
so COMPASS's skill-load regression can tell b_O, b_A and b_R apart on synthetic data.

A scene task file (built-in ones in catalog/scenes/):

    name: scenes
    kind: scene
    objects: shapes                         # object vocabulary
    attributes: [size_words, textures, colors]   # at most one value of each per object,
                                            # written in this order ("a large striped red cube")
    relations: relations                    # relation vocabulary
    design:
      kind: factorial                       # every feasible (n_O, n_A, n_R) cell, or
                                            # lhs: a Latin hypercube of `points` cells
      n_O: 2-4                              # ranges (or one integer)
      n_A: 0-5
      n_R: 0-3
      points: 24                            # lhs only

A cell is feasible when its objects fit the object vocabulary, n_A <= n_O x (attribute
vocabularies), and n_R <= n_O - 1: relations form a forest (a tree when n_R = n_O - 1),
edges of a random tree over the objects, each with a random direction and predicate.
Concepts are spread evenly over the cells (round-robin in a seeded order), so the three
counts vary independently up to the feasibility bounds; `design_vifs` measures how far
(variance inflation factors, statsmodels).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import ClassVar

from autocomp.concepts.files import task_path
from autocomp.concepts.questions import Question, attribute_question, relation_questions
from autocomp.concepts.task import TaskType
from autocomp.concepts.vocab import Vocabulary, load_vocabulary
from autocomp.core.errors import AutocompError
from autocomp.core.fields import check_name
from autocomp.core.scene import Object, Relation, SceneGraph
from autocomp.core.yamlio import read_yaml
from autocomp.language.grammar import Noun, noun_phrase
from autocomp.language.scene import render_scene

FIELDS = {"name", "kind", "description", "objects", "attributes", "relations", "design"}
DESIGN_FIELDS = {"kind", "n_O", "n_A", "n_R", "points"}
COUNTS = ("n_O", "n_A", "n_R")


MAX_CELLS = 100_000  # cells of a factorial design, or Latin hypercube points


@dataclass(frozen=True)
class Design:
    kind: str  # "factorial" | "lhs"
    ranges: dict  # count -> (low, high)
    points: int = 0  # lhs: how many cells

    def feasible(self, cell, n_objects: int, n_vocabs: int) -> bool:
        o, a, r = cell
        return 1 <= o <= n_objects and 0 <= a <= o * n_vocabs and 0 <= r <= o - 1

    def cells(self, n_objects: int, n_vocabs: int, seed: int = 0) -> list[tuple[int, ...]]:
        if self.kind == "lhs":
            return self._lhs(n_objects, n_vocabs, seed)
        return [(o, a, r) for o in _span(self.ranges["n_O"]) for a in _span(self.ranges["n_A"])
                for r in _span(self.ranges["n_R"]) if self.feasible((o, a, r), n_objects,
                                                                     n_vocabs)]

    def _lhs(self, n_objects: int, n_vocabs: int, seed: int) -> list[tuple[int, ...]]:
        """`points` feasible cells from Latin hypercube draws (scipy), infeasible draws
        redrawn; each count's range is cut in `points` strata."""
        from scipy.stats import qmc

        out: list[tuple[int, ...]] = []
        sampler = qmc.LatinHypercube(d=3, seed=seed)
        for _ in range(100):
            for u in sampler.random(self.points):
                cell = tuple(int(lo + min(int(x * (hi - lo + 1)), hi - lo))
                             for x, (lo, hi) in zip(u, (self.ranges[c] for c in COUNTS),
                                                    strict=True))
                if self.feasible(cell, n_objects, n_vocabs) and len(out) < self.points:
                    out.append(cell)
            if len(out) == self.points:
                return out
        raise AutocompError(f"the design's ranges {self.ranges} leave too few feasible cells "
                            f"for {self.points} Latin hypercube points")


def _span(r) -> range:
    return range(r[0], r[1] + 1)


@dataclass(frozen=True)
class SceneTask(TaskType):
    name: str
    objects: Vocabulary
    attributes: tuple[Vocabulary, ...]
    relations: Vocabulary
    design: Design
    description: str = ""
    path: str = ""

    kind: ClassVar[str] = "scene"
    swap_moves: ClassVar[str] = "objects"
    prompt_suffix: ClassVar[str] = "_scene"
    counts_follow_n: ClassVar[bool] = False  # a concept's negatives depend on its graph

    @cached_property
    def nouns(self) -> dict[str, Noun]:
        return {e.name: e.noun() for e in self.objects.entries}

    def noun(self, name: str) -> Noun:
        return self.nouns.get(name) or Noun.guess(name)

    @cached_property
    def object_forms(self) -> tuple[str, ...]:
        return tuple(sorted({f for noun in self.nouns.values() for f in noun.forms}))

    @cached_property
    def inverses(self) -> dict[str, str]:
        return self.relations.inverses

    def cells(self, seed: int = 0) -> list[tuple[int, ...]]:
        return self.design.cells(len(self.objects), len(self.attributes), seed)

    @property
    def n(self) -> tuple[int, ...]:
        """The object counts of the design (a scene concept's N is its n_O)."""
        return tuple(sorted({c[0] for c in self.cells()}))

    def capacity_problem(self, n: int) -> str | None:
        return None if n in self.n else (f"scene task '{self.name}' has no cell with "
                                         f"n_O={n} (its design gives n_O in {list(self.n)})")

    @cached_property
    def vocab_of_value(self) -> dict[str, Vocabulary]:
        """Attribute value -> the attribute vocabulary it belongs to."""
        return {name: v for v in self.attributes for name in v.names}

    def minimal_caption(self, graph: SceneGraph) -> str:
        return render_scene(graph, self.noun)

    def primitive_vocabularies(self) -> list[tuple[str, Vocabulary]]:
        """(COMPASS primitive type, vocabulary): each attribute vocabulary, the relations."""
        return [*(("A", v) for v in self.attributes), ("R", self.relations)]

    def attribute_words(self, graph: SceneGraph) -> list[str]:
        return [" ".join(o.attributes) for o in graph.objects]

    def relation_geometry(self) -> dict:
        return self.relations.geometries

    def vocab_of(self, value: str) -> Vocabulary:
        """An attribute's own vocabulary, or the relations."""
        return self.vocab_of_value.get(value) or self.relations

    def negative_kinds(self, n: int) -> tuple[str, ...]:
        """Swap and confusion; nothing to swap with one object."""
        return ("swap", "confusion") if n >= 2 else ()

    def binding_phrases(self, graph: SceneGraph) -> list[str]:
        """One per relation with both objects' attributes, one per object in none."""
        def np(i):
            return noun_phrase(self.noun(graph.objects[i].name), graph.objects[i].attributes)

        related = {i for r in graph.relations for i in (r.subject, r.object)}
        return ([f"{np(r.subject)} {r.predicate} {np(r.object)}" for r in graph.relations]
                + [np(i) for i in range(graph.n_objects) if i not in related])

    def questions(self, graph: SceneGraph) -> list[Question]:
        """One per attribute (in its own vocabulary), then one per relation."""
        out = [attribute_question(obj.name, value, self.vocab_of_value[value])
               for obj in graph.objects for value in obj.attributes]
        return out + relation_questions(graph, self.relations)

    # The slots of a scene concept are its n_O object names, the attribute slots of each
    # attribute vocabulary (objects in order, each object's attributes in the task's order)
    # and its n_R relation predicates. Swap permutes the names over the fixed structure;
    # confusion fills each vocabulary's slots with the concept's own values of it (so a
    # negative never gives an object two colors), and the relation slots with its own
    # predicates, with replacement.

    def values_of(self, graph: SceneGraph) -> list[str]:
        """The value slots: every attribute in slot order, then every predicate."""
        return ([graph.objects[i].attributes[k] for i, k in attribute_slots(graph)]
                + [r.predicate for r in graph.relations])

    def rebuild(self, graph: SceneGraph, names, values) -> SceneGraph:
        values = list(values)
        attrs: list[list[str]] = [[] for _ in graph.objects]
        slots = attribute_slots(graph)
        for (i, _), v in zip(slots, values[:len(slots)], strict=True):
            attrs[i].append(v)
        preds = values[len(slots):]
        objects = tuple(Object(n, tuple(a)) for n, a in zip(names, attrs, strict=True))
        relations = tuple(Relation(r.subject, p, r.object)
                          for r, p in zip(graph.relations, preds, strict=True))
        return SceneGraph(objects, relations)

    def slot_groups(self, graph: SceneGraph) -> list[list[int]]:
        """One group per attribute vocabulary present, then the relation slots."""
        values = self.values_of(graph)
        n_attr = len(attribute_slots(graph))
        by_vocab: dict[str, list[int]] = {}
        for s in range(n_attr):
            by_vocab.setdefault(self.vocab_of_value[values[s]].name, []).append(s)
        groups = list(by_vocab.values())
        if graph.relations:
            groups.append(list(range(n_attr, len(values))))
        return groups

    def category(self, graph: SceneGraph, pos, names, values) -> str:
        """Which primitives the negative changed ("objects + attributes"); `pos`:
        the positive's value slots."""
        n_attr = len(attribute_slots(graph))
        changed = []
        if list(names) != list(graph.names):
            changed.append("objects")
        if list(values[:n_attr]) != pos[:n_attr]:
            changed.append("attributes")
        if list(values[n_attr:]) != pos[n_attr:]:
            changed.append("relations")
        return " + ".join(changed) or "same words"


def attribute_slots(graph: SceneGraph) -> list[tuple[int, int]]:
    """(object index, attribute index) of every attribute, in slot order."""
    return [(i, k) for i, o in enumerate(graph.objects) for k in range(len(o.attributes))]


def load_scene_task(ref: str | Path) -> SceneTask:
    """A scene task by built-in name (catalog/scenes/) or by the path of its YAML file."""
    path = task_path(ref, ("scenes",), "scene task")
    return parse_scene_task(read_yaml(path), path)


def _vocab(ref, want: str, field: str, path: Path) -> Vocabulary:
    if not isinstance(ref, str):
        raise AutocompError(f"expected a vocabulary name or path, got {ref!r}", file=path,
                            field=field)
    try:
        vocab = load_vocabulary(ref, base=Path(path).parent)
    except AutocompError as exc:
        if exc.file:
            raise
        raise AutocompError(exc.problem, file=path, field=field) from None
    if vocab.kind != want:
        raise AutocompError(f"vocabulary '{vocab.name}' is of kind {vocab.kind}; expected "
                            f"{want}", file=path, field=field)
    return vocab


def _range(raw, field: str, path: Path) -> tuple[int, int]:
    if isinstance(raw, int) and not isinstance(raw, bool) and raw >= 0:
        return raw, raw
    if isinstance(raw, str) and "-" in raw:
        lo, _, hi = raw.partition("-")
        if lo.strip().isdigit() and hi.strip().isdigit() and int(lo) <= int(hi):
            return int(lo), int(hi)
    raise AutocompError(f"expected a range 'LOW-HIGH' or an integer >= 0, got {raw!r}",
                        file=path, field=field)


def parse_scene_task(data, path: Path) -> SceneTask:
    if not isinstance(data, dict) or data.get("kind") != "scene":
        raise AutocompError("a scene task is a mapping with kind: scene, objects, attributes, "
                            "relations, design", file=path)
    unknown = sorted(set(data) - FIELDS)
    if unknown:
        raise AutocompError(f"unknown field (allowed: {', '.join(sorted(FIELDS))})", file=path,
                            field=unknown[0])
    attrs = data.get("attributes")
    if not isinstance(attrs, list) or not attrs:
        raise AutocompError("expected a non-empty list of attribute vocabularies, got "
                            f"{attrs!r}", file=path, field="attributes")
    design = data.get("design")
    if not isinstance(design, dict):
        raise AutocompError(f"expected a mapping with kind, n_O, n_A, n_R, got {design!r}",
                            file=path, field="design")
    unknown = sorted(set(design) - DESIGN_FIELDS)
    if unknown:
        raise AutocompError(f"unknown field (allowed: {', '.join(sorted(DESIGN_FIELDS))})",
                            file=path, field=f"design.{unknown[0]}")
    kind = design.get("kind", "factorial")
    if kind not in ("factorial", "lhs"):
        raise AutocompError(f"expected factorial or lhs, got {kind!r}", file=path,
                            field="design.kind")
    points = design.get("points", 0)
    if kind == "lhs" and (not isinstance(points, int) or isinstance(points, bool)
                          or points < 1):
        raise AutocompError(f"a Latin hypercube needs points: an integer >= 1, got "
                            f"{points!r}", file=path, field="design.points")
    if kind == "lhs" and points > MAX_CELLS:
        raise AutocompError(f"at most {MAX_CELLS:,} Latin hypercube points, got {points:,}",
                            file=path, field="design.points")
    ranges = {c: _range(design.get(c), f"design.{c}", path) for c in COUNTS}
    size = 1
    for low, high in ranges.values():
        size *= high - low + 1
    if kind == "factorial" and size > MAX_CELLS:  # checked before anything is allocated
        raise AutocompError(f"the ranges make {size:,} cells; a factorial design takes at most "
                            f"{MAX_CELLS:,} (narrow n_O, n_A, n_R or use kind: lhs)",
                            file=path, field="design")
    task = SceneTask(
        name=check_name(data.get("name") or Path(path).stem, "task", file=path),
        objects=_vocab(data.get("objects"), "objects", "objects", path),
        attributes=tuple(_vocab(a, "attributes", f"attributes[{i}]", path)
                         for i, a in enumerate(attrs)),
        relations=_vocab(data.get("relations"), "relations", "relations", path),
        design=Design(kind, ranges, points if kind == "lhs" else 0),
        description=str(data.get("description", "")), path=str(path))
    seen: dict[str, str] = {}
    for i, vocab in enumerate(task.attributes):
        for name in vocab.names:
            if name in seen:
                raise AutocompError(f"value '{name}' is in two attribute vocabularies "
                                    f"('{seen[name]}' and '{vocab.name}'); a value must say "
                                    "which attribute it is", file=path, field=f"attributes[{i}]")
            seen[name] = vocab.name
    if not task.cells():
        raise AutocompError(f"no feasible cell in the design {ranges} (n_R <= n_O - 1, "
                            f"n_A <= n_O x {len(task.attributes)} attribute vocabularies, "
                            f"n_O <= {len(task.objects)} objects)", file=path, field="design")
    return task

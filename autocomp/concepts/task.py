"""Task definitions: one YAML file each, no Python needed for a new task.

    name: color
    kind: attribute            # attribute (binding) | relation (binding)
    objects: objects           # object vocabulary: built-in name or path (relative to this file)
    values: colors             # attribute vocabulary, or relation vocabulary for kind relation
    n: [1, 2, 3]               # the task's complexities (a list, one integer, or "1-3"); a
                               # run uses these, and any other N the vocabularies can supply
                               # may still be asked for explicitly
    distinct_values: true      # values distinct within a concept (default true)
    attribute: color           # optional: what the values describe, how a question asks
                               # for them (attribute tasks; `relation:` for relation
                               # tasks); see concepts/aspect.py
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

from autocomp.concepts.aspect import Aspect
from autocomp.concepts.questions import Question, attribute_question, relation_questions
from autocomp.concepts.vocab import Vocabulary
from autocomp.core.errors import AutocompError
from autocomp.core.scene import SceneGraph, attribute_graph, chain_graph, shared_object
from autocomp.language.grammar import Noun, noun_phrase

TASK_FIELDS = {"name", "kind", "description", "objects", "values", "n", "distinct_values",
               "attribute", "relation"}


class TaskType:
    """What every task type declares. The task types (attribute, relation, count, scene) answer
    everything the pipeline needs to know about their concepts: value slots, binding
    phrases, prompts, questions, the slots negatives edit, how concepts are drawn. Only
    this package asks what kind a task is; everything else calls these methods."""

    kind: ClassVar[str] = ""
    value_key: ClassVar[str] = "values"  # how a negative's edit names the value slots
    swap_moves: ClassVar[str] = "values"  # what swap permutes: "values" or "objects"
    prompt_suffix: ClassVar[str] = ""  # prompts/contextual_{system,user}<suffix>.txt
    counts_follow_n: ClassVar[bool] = True  # the number of negatives depends on N alone
    is_relation: ClassVar[bool] = False  # objects chained by relations (order matters)

    @classmethod
    def vocabulary_problem(cls, objects, values) -> str | None:
        """Why these vocabularies cannot make this task's concepts, or None."""
        return None

    def object_counts(self, graph: SceneGraph) -> Counter:
        """How many of each object the image must show (one per object of the graph)."""
        return Counter(graph.names)

    def relation_geometry(self) -> dict:
        """Predicate -> its geometry (dx/dy, size or depth), for drawing and reading."""
        return {}

    def prompt_fields(self) -> dict:
        """The task's own placeholders of its contextual prompt (prompts/README.md)."""
        return {}

    def visit(self, handler, *args, **kwargs):
        """Call `handler.<kind>(*args)`, or `handler.other(*args)` for a kind it has no
        way of its own for: the task picks the method of its own kind, so a module with one
        way per kind (the template writer, the procedural generator) never asks which
        kind it has, and a new task type works wherever a handler has a general way."""
        method = getattr(handler, self.kind, None) or getattr(handler, "other", None)
        if method is None:
            raise AutocompError(f"{getattr(handler, '__name__', handler)} has no way for "
                                f"tasks of kind '{self.kind}'")
        return method(*args, **kwargs)


@dataclass(frozen=True)
class Task(TaskType):
    """A binding task: N objects, each bound to values of one vocabulary."""

    name: str
    objects: Vocabulary
    values: Vocabulary
    n: tuple[int, ...]
    distinct_values: bool = True
    description: str = ""
    path: str = ""

    values_kind: ClassVar[str] = ""  # the vocabulary kind its values come from
    aspect_field: ClassVar[str] = "attribute"  # the task file's field declaring the aspect

    @property
    def aspect(self) -> Aspect:
        """What the task's values describe ("color"), as prompts and questions name it."""
        return self.values.aspect

    def primitive_vocabularies(self) -> list[tuple[str, Vocabulary]]:
        """(COMPASS primitive type, vocabulary) of its values: "A" attributes, "R"
        relations."""
        return [("R" if self.is_relation else "A", self.values)]

    def attribute_words(self, graph: SceneGraph) -> list[str]:
        """Each object's attribute words as written ("large red"); [] where the task's
        concepts carry no attributes (relation chains)."""
        if self.is_relation:
            return []
        return [" ".join(o.attributes) for o in graph.objects]

    def value_slots(self, n: int) -> int:
        """How many values a concept of complexity n carries."""
        return n

    def capacity_problem(self, n: int) -> str | None:
        """Why complexity n cannot be sampled from the vocabularies, or None."""
        if n < 1:
            return f"N must be at least 1, got N={n}"
        if n > len(self.objects):
            return (f"N={n} needs {n} distinct objects but vocabulary '{self.objects.name}' "
                    f"has {len(self.objects)}")
        k = self.value_slots(n)
        if self.distinct_values and k > len(self.values):
            return (f"N={n} needs {k} distinct values but vocabulary '{self.values.name}' "
                    f"has {len(self.values)}")
        return None

    @cached_property
    def nouns(self) -> dict[str, Noun]:
        return {e.name: e.noun() for e in self.objects.entries}

    @cached_property
    def object_forms(self) -> tuple[str, ...]:
        """Every written form of the task's objects (for the semantic-preservation check)."""
        return tuple(sorted({f for noun in self.nouns.values() for f in noun.forms}))

    def noun(self, name: str) -> Noun:
        return self.nouns.get(name) or Noun.guess(name)

    @cached_property
    def inverses(self) -> dict[str, str]:
        return {}

    def vocab_of(self, value: str) -> Vocabulary:
        """The vocabulary a value of one of this task's concepts comes from."""
        return self.values

    def minimal_caption(self, graph) -> str:
        """The minimal-track caption of one of this task's graphs."""
        from autocomp.language.minimal import render_minimal

        return render_minimal(graph, self.noun)

    def negative_kinds(self, n: int) -> tuple[str, ...]:
        """The benchmark kinds defined at N: swap and confusion from N = 2."""
        return ("swap", "confusion") if n >= 2 else ()

    def slot_groups(self, graph: SceneGraph) -> list[list[int]]:
        """The value slots grouped by what may fill them (confusion fills each group with
        the concept's own values of it, with replacement)."""
        k = len(self.values_of(graph))
        return [list(range(k))] if k else []


@dataclass(frozen=True)
class AttributeTask(Task):
    """One value per object ("a red cube and a blue sphere")."""

    kind: ClassVar[str] = "attribute"
    values_kind: ClassVar[str] = "attributes"

    def negative_kinds(self, n: int) -> tuple[str, ...]:
        """N = 1 has its own checks: every other value, every other object."""
        return ("swap", "confusion") if n >= 2 else ("vary_value", "vary_object")

    def graph(self, names, values) -> SceneGraph:
        return attribute_graph(names, values)

    def values_of(self, graph: SceneGraph) -> list[str]:
        if any(len(o.attributes) != 1 for o in graph.objects) or graph.relations:
            raise ValueError(f"task '{self.name}' needs one attribute per object and no "
                             f"relations, got {graph.to_dict()}")
        return [o.attributes[0] for o in graph.objects]

    def rebuild(self, graph: SceneGraph, names, values) -> SceneGraph:
        return graph.with_objects(shared_object(n, (v,))
                                 for n, v in zip(names, values, strict=True))

    def binding_phrases(self, graph: SceneGraph) -> list[str]:
        """'a red cube': one per binding."""
        return [noun_phrase(self.noun(o.name), o.attributes) for o in graph.objects]

    def questions(self, graph: SceneGraph) -> list[Question]:
        return [attribute_question(obj.name, value, self.values)
                for obj in graph.objects for value in obj.attributes]

    def prompt_fields(self) -> dict:
        """The attribute's words and the worked example ('a green chair' and 'a yellow
        lamp': the aspect's example values, else the vocabulary's first two)."""
        aspect = self.aspect
        ex = list(aspect.example or self.values.names[:2])
        ex += ex[:1] * (2 - len(ex))
        chair = self.example_noun("chair")
        a, b = (noun_phrase(noun, (value,)) for noun, value in
                zip((chair, self.example_noun("lamp")), ex[:2], strict=True))
        verb = "stand" if chair.plural_verb else "stands"
        return {"attribute": aspect.name, "attributes": aspect.plural, "example_a": a,
                "example_b": b,
                "example_caption": f"{a[:1].upper()}{a[1:]} {verb} beside {b} in a brightly "
                                   "lit room."}

    def example_noun(self, name: str) -> Noun:
        """How the prompt's worked example writes an object ("chair")."""
        return Noun.guess(name)

    def category(self, graph: SceneGraph, pos_values, names, values) -> str:
        """Auto-Comp Table 6: whether the negative repeats an object name and a value."""
        same_obj = len(set(names)) < len(set(graph.names))
        same_val = len(set(values)) < len(set(pos_values))
        if same_val:
            return "same value / same object" if same_obj else "same value / different objects"
        return "same object / different values" if same_obj else "swapped values"


@dataclass(frozen=True)
class RelationTask(Task):
    """N objects chained by N - 1 relations ("a cube under a sphere, which is ...")."""

    kind: ClassVar[str] = "relation"
    values_kind: ClassVar[str] = "relations"
    aspect_field: ClassVar[str] = "relation"
    value_key: ClassVar[str] = "relations"
    swap_moves: ClassVar[str] = "objects"
    prompt_suffix: ClassVar[str] = "_relation"
    is_relation: ClassVar[bool] = True

    def value_slots(self, n: int) -> int:
        return n - 1

    def capacity_problem(self, n: int) -> str | None:
        if n < 2:
            return f"a relation task needs N >= 2, got N={n}"
        return super().capacity_problem(n)

    @cached_property
    def inverses(self) -> dict[str, str]:
        return self.values.inverses

    def graph(self, names, values) -> SceneGraph:
        return chain_graph(names, values)

    def values_of(self, graph: SceneGraph) -> list[str]:
        if not graph.is_chain():
            raise ValueError(f"task '{self.name}' needs a relation chain, got {graph.to_dict()}")
        return [r.predicate for r in graph.relations]

    def rebuild(self, graph: SceneGraph, names, values) -> SceneGraph:
        return graph.with_objects(shared_object(n) for n in names).with_predicates(values)

    def binding_phrases(self, graph: SceneGraph) -> list[str]:
        """'a cube under a sphere': one per relation."""
        return [f"{noun_phrase(self.noun(graph.objects[r.subject].name))} {r.predicate} "
                f"{noun_phrase(self.noun(graph.objects[r.object].name))}"
                for r in graph.relations]

    def questions(self, graph: SceneGraph) -> list[Question]:
        return relation_questions(graph, self.values)

    def relation_geometry(self) -> dict:
        return self.values.geometries

    def prompt_fields(self) -> dict:
        aspect = self.aspect
        return {"relation": aspect.name,
                "example_relation": (aspect.example or self.values.names)[0]}

    def category(self, graph: SceneGraph, pos_values, names, values) -> str:
        """'<swapped objects | repeated object | same objects> / <same | swapped |
        repeated> relations'."""
        pos_names = list(graph.names)
        objs = ("same objects" if list(names) == pos_names else "swapped objects"
                if len(set(names)) == len(set(pos_names)) else "repeated object")
        rels = ("same relations" if list(values) == pos_values else "swapped relations"
                if sorted(values) == sorted(pos_values) else "repeated relation")
        return f"{objs} / {rels}"

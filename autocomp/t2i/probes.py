"""The questions a text-to-image image is checked with, from its prompt's scene graph (no
LLM writes them, so none is hallucinated, missing or asked twice):

  object     one per object: "Is there a cube in the image?" (yes / no)
  attribute  one per attribute of an object, its answer constrained to the attribute's
             vocabulary (the validators' question: "What color is the cube? Answer with
             one of: red, blue, ...")
  relation   one per relation ("Where is the cube relative to the sphere? ...")

Each attribute or relation question depends on the object questions of its objects (DSG's
dependency graph, for free: a binding presupposes its objects). `aspect` is what a
question asks about, as the vocabulary names it (object, color, material, number, spatial,
...), for per-aspect tables.

`true_answers` gives each question's exact answer for an image the embedded generator
drew, from its truth record: objects left out, values as drawn after the injected faults,
relations read off the drawn boxes by the relation's own geometry rule; None where the
drawing cannot say (a texture with no room to show, sizes drawn smaller than asked).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from autocomp.concepts.questions import Question
from autocomp.core.errors import AutocompError
from autocomp.core.scene import SceneGraph

YES, NO = "yes", "no"


@dataclass(frozen=True)
class Probe:
    id: str  # "o0" (object 0), "a0.1" (object 0's second attribute), "r0" (relation 0)
    kind: str  # object | attribute | relation
    aspect: str  # what it asks about: "object", or the vocabulary's aspect name
    question: Question
    slots: tuple[int, ...]  # the objects it is about
    parents: tuple[str, ...] = field(default=())  # the object probes it presupposes

    def to_dict(self) -> dict:
        return {"id": self.id, "kind": self.kind, "aspect": self.aspect,
                "text": self.question.text, "expected": self.question.expected,
                "parents": list(self.parents)}


def presence_question(task, name: str) -> Question:
    from autocomp.language.grammar import noun_phrase

    phrase = noun_phrase(task.noun(name))
    return Question(f"Is there {phrase} in the image? Answer with one of: yes, no.",
                    (YES, NO), YES, name, reads="presence")


def probes(graph: SceneGraph, task) -> list[Probe]:
    """Every question of the graph: its objects, then the task's binding questions (in the
    task's order: each object's attributes, then the relations)."""
    out = [Probe(f"o{i}", "object", "object", presence_question(task, o.name), (i,))
           for i, o in enumerate(graph.objects)]
    bindings = [("attribute", i, k, value) for i, o in enumerate(graph.objects)
                for k, value in enumerate(o.attributes)]
    bindings += [("relation", k, None, rel) for k, rel in enumerate(graph.relations)]
    asked = task.questions(graph)
    if len(asked) != len(bindings):
        raise AutocompError(f"task {task.name}: {len(asked)} binding questions for "
                            f"{len(bindings)} attributes and relations; t2i cannot tell "
                            "which question asks about which binding")
    for (kind, i, k, what), q in zip(bindings, asked, strict=True):
        if kind == "attribute":
            aspect = task.vocab_of(what).aspect.name
            out.append(Probe(f"a{i}.{k}", kind, aspect, q, (i,), (f"o{i}",)))
        else:
            vocab = task.vocab_of(what.predicate)
            slots = (what.subject, what.object)
            out.append(Probe(f"r{i}", kind, vocab.aspect.name, q, slots,
                             tuple(f"o{s}" for s in slots)))
    return out


def true_answers(found: list[Probe], graph: SceneGraph, task, truth: dict,
                 faults: list[dict]) -> list[bool | None]:
    """Whether each probe's expected answer is true of the drawn image (None: unknown)."""
    counts = truth.get("counts")
    drawn = _drawn(graph, truth)
    values = _values(graph, task, faults)
    unsure = bool(truth.get("shrunk") or truth.get("unshown") or truth.get("pattern_share"))
    out: list[bool | None] = []
    for p in found:
        if p.kind == "object":
            name = graph.objects[p.slots[0]].name
            out.append(counts[name] > 0 if counts is not None else any(
                drawn[j] for j, o in enumerate(graph.objects) if o.name == name))
        elif p.kind == "attribute":
            i, k = (int(x) for x in p.id[1:].split("."))
            value = graph.objects[i].attributes[k]
            if counts is not None:  # a numeral: the drawn count of the object
                from autocomp.concepts.count import copies

                name = graph.objects[i].name
                out.append(counts[name] == copies(task.vocab_of(value)[value]))
            elif unsure:
                out.append(None)
            else:
                out.append(drawn[i] and values[i][k] == value)
        else:
            out.append(_relation_holds(p, graph, task, truth, drawn))
    return out


def _drawn(graph: SceneGraph, truth: dict) -> list[bool]:
    by_slot = {o["slot"]: o.get("drawn", True) for o in truth.get("objects", ())}
    return [by_slot.get(i, True) for i in range(graph.n_objects)]


def _values(graph: SceneGraph, task, faults: list[dict]) -> list[list[str]]:
    """Each object's attribute values as drawn: the graph's, after the value faults in
    the order they were applied (a swap trades two objects' values of the traded kind; a
    wrong value replaces one)."""
    values = [list(o.attributes) for o in graph.objects]
    for f in faults:
        if f["kind"] == "swap" and f.get("what") in ("values", "colors"):
            a, b = f["slots"]
            if f["what"] == "values":
                values[a], values[b] = values[b], values[a]
                continue
            ka, kb = _color_index(values[a], task), _color_index(values[b], task)
            if ka is not None and kb is not None:
                values[a][ka], values[b][kb] = values[b][kb], values[a][ka]
        elif f["kind"] in ("wrong_color", "wrong_value"):
            slot = f["slot"]
            vocab = task.vocab_of(f["to"])
            for k, v in enumerate(values[slot]):
                if v == f["from"] or task.vocab_of(v) is vocab:
                    values[slot][k] = f["to"]
                    break
    return values


def _color_index(values: list[str], task) -> int | None:
    from autocomp.concepts import drawable

    for k, v in enumerate(values):
        kind = drawable.kind_of(task.vocab_of(v)[v])
        if kind is not None and kind.colors:
            return k
    return None


def _relation_holds(p: Probe, graph, task, truth, drawn) -> bool | None:
    from autocomp.synth.layout import holds

    s, o = p.slots
    if not (drawn[s] and drawn[o]):
        return False
    boxes = {obj["slot"]: obj["box"] for obj in truth.get("objects", ())}
    if s not in boxes or o not in boxes:
        return None
    rel = graph.relations[int(p.id[1:])]
    geometry = task.relation_geometry()
    if rel.predicate not in geometry:
        return None
    return holds(boxes, (s, rel.predicate, o), geometry)

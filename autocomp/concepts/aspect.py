"""What a vocabulary's values describe ("color", "material", "spatial relation"), in the
words prompts, questions, review criteria and reports use for them.

A vocabulary or a task declares it as data (a task's declaration wins over its values'
vocabulary's):

    attribute:                                  # in an attribute vocabulary or task
      name: material                            # the noun ("What material ...", "colors")
      plural: materials                         # optional (inflect writes it)
      question: "What is the {object} made of?" # optional; {object} is the object's name
      example: [wooden, metal]                  # optional: values the prompt's example uses

    relation:                                   # in a relation vocabulary or task
      name: depth
      question: "Is the {subject} in front of or behind the {object}?"
      example: [in front of]

    attribute: material                         # the short form: the noun alone

Undeclared, the aspect is the one of the kind that draws the entries (autocomp/kinds/: rgb
color, scale size, pattern pattern, material material, count number; geometry dx/dy
spatial, size relative size, depth depth), else follows from the vocabulary's name
("materials" -> material).
"""

from __future__ import annotations

import string
from dataclasses import dataclass

from autocomp.concepts import drawable
from autocomp.core.errors import AutocompError
from autocomp.language.grammar import plural as plural_of
from autocomp.language.grammar import singular

FIELDS = {"name", "plural", "question", "example"}
PLACES = {"attribute": {"object"}, "relation": {"subject", "object"}}


@dataclass(frozen=True)
class Aspect:
    name: str  # "color"
    plural: str  # "colors"
    question: str  # "What color is the {object}?"
    example: tuple[str, ...] = ()  # values a prompt's worked example uses

    def ask(self, **names) -> str:
        return self.question.format(**names)


def default_aspect(vocab_name: str, kind: str, entries) -> Aspect:
    """The aspect a vocabulary describes when it declares none: its first drawing kind's
    (in the registry's order)."""
    for k in drawable.kinds(kind):
        if any(e.drawn_by == k.name for e in entries):
            return Aspect(k.noun, plural_of(k.noun), k.question)
    if kind == "relations":
        return Aspect("relation", "relations", "How is the {subject} related to the {object}?")
    name = singular(vocab_name.replace("_", " "))
    return Aspect(name, plural_of(name), f"What {name} is the {{object}}?")


def parse_aspect(raw, kind: str, names, default: Aspect, *, file, field: str) -> Aspect:
    """An `attribute:` or `relation:` declaration (kind "attribute" | "relation"), its
    unset parts taken from `default`; example values must be among `names`."""
    if isinstance(raw, str):
        raw = {"name": raw}
    if not isinstance(raw, dict):
        raise AutocompError(f"must be a name or a mapping with {', '.join(sorted(FIELDS))}, "
                            f"got {raw!r}", file=file, field=field)
    unknown = sorted(set(raw) - FIELDS)
    if unknown:
        raise AutocompError(f"unknown field '{unknown[0]}' (allowed: {sorted(FIELDS)})",
                            file=file, field=f"{field}.{unknown[0]}")
    out = {}
    for key in ("name", "plural", "question"):
        value = raw.get(key)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise AutocompError(f"must be a non-empty string, got {value!r}", file=file,
                                field=f"{field}.{key}")
        out[key] = value and " ".join(value.split())
    name = out["name"] or default.name
    named = out["name"] is not None and out["name"] != default.name
    plural = out["plural"] or (plural_of(name) if named else default.plural)
    question = out["question"] or (
        (f"What {name} is the {{object}}?" if kind == "attribute" else default.question)
        if named else default.question)
    _check_places(question, kind, file, f"{field}.question")
    example = raw.get("example", list(default.example))
    if isinstance(example, str):
        example = [example]
    if not isinstance(example, list) or not all(isinstance(v, str) for v in example):
        raise AutocompError(f"must be a list of values, got {example!r}", file=file,
                            field=f"{field}.example")
    for value in example:
        if value not in names:
            raise AutocompError(f"'{value}' is not a value of the vocabulary", file=file,
                                field=f"{field}.example")
    return Aspect(name, plural, question, tuple(example))


def _check_places(question: str, kind: str, file, field: str) -> None:
    want = PLACES[kind]
    try:
        used = {f for _, f, _, _ in string.Formatter().parse(question) if f is not None}
    except ValueError as exc:
        raise AutocompError(f"is not a valid template ({exc}): {question!r}", file=file,
                            field=field) from None
    extra = used - want
    if extra:
        raise AutocompError(f"names {{{sorted(extra)[0]}}}; a question may name "
                            f"{', '.join('{' + p + '}' for p in sorted(want))}", file=file,
                            field=field)
    missing = want - used
    if missing:
        raise AutocompError(f"must name {{{sorted(missing)[0]}}}, got {question!r}",
                            file=file, field=field)

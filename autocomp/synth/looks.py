"""An object's look: how the procedural generator draws its attribute values, each by its
value kind (autocomp/kinds/: color, size word, pattern, material, count)."""

from __future__ import annotations

from autocomp.concepts import drawn
from autocomp.language.grammar import join


def scene_look(task, obj) -> dict:
    """How an object is drawn: its look with every one of its attributes applied."""
    look = plain_look()
    for value in obj.attributes:
        apply_value(look, value, task.vocab_of(value)[value])
    return look


def plain_look() -> dict:
    """An object with no attribute: every value kind's unmarked look (a palette color,
    unmarked size, plain surface, one copy)."""
    look: dict = {}
    for kind in drawn.kinds("attributes"):
        look.update(kind.look)
    return look


def apply_value(look: dict, value: str, entry) -> None:
    """Draw one attribute value into a look, by the kind that draws its entry."""
    kind = drawn.kind_of(entry)
    if kind is not None:
        kind.draw(look, value, entry.value)


def value_look(value: str, entry) -> dict:
    """A plain look with one value drawn into it."""
    look = plain_look()
    apply_value(look, value, entry)
    return look


def undrawable(vocab) -> str | None:
    """Why a value of an attribute vocabulary cannot be drawn on its own, or None."""
    alone = [k for k in drawn.kinds("attributes") if k.alone]
    for entry in vocab.entries:
        kind = drawn.kind_of(entry)
        if kind is None or not kind.alone:
            hint = kind.alone_hint if kind is not None else ""
            return (f"value '{entry.name}' of vocabulary '{vocab.name}' has no "
                    f"{join((k.name for k in alone), 'or')}; the procedural generator draws "
                    f"{join(k.drawn_as for k in alone)}{hint}")
    return None

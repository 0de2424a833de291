"""An object's look: how the procedural generator draws its attribute values, each by its
value kind (autocomp/kinds/: color, size word, pattern, material, count).

A look is a dict of fields, each set by the value kind that owns it. The generator itself
reads GENERATOR_FIELDS (the fill color, the box's size, the copies); every other field is
drawn by its kind's `paint` on the rendered object, in the kinds' `paint_order` (a surface
before what lies on it), so a new kind with a field of its own is drawn without an edit
here. A kind setting a field that neither reads is refused when a vocabulary names it.
"""

from __future__ import annotations

from functools import partial

from autocomp.concepts import drawable
from autocomp.language.grammar import join

GENERATOR_FIELDS = {"color": "the fill color's name", "rgb": "the fill color",
                    "scale": "the size of the object's box", "count": "the copies drawn"}


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
    for kind in drawable.kinds("attributes"):
        look.update(kind.look)
    return look


def apply_value(look: dict, value: str, entry) -> None:
    """Draw one attribute value into a look, by the kind that draws its entry."""
    kind = drawable.kind_of(entry)
    if kind is not None:
        kind.draw(look, value, entry.value)


def value_look(value: str, entry) -> dict:
    """A plain look with one value drawn into it."""
    look = plain_look()
    apply_value(look, value, entry)
    return look


def undrawable(vocab) -> str | None:
    """Why a value of an attribute vocabulary cannot be drawn on its own, or None."""
    alone = [k for k in drawable.kinds("attributes") if k.alone]
    for entry in vocab.entries:
        kind = drawable.kind_of(entry)
        if kind is None or not kind.alone:
            hint = kind.alone_hint if kind is not None else ""
            return (f"value '{entry.name}' of vocabulary '{vocab.name}' has no "
                    f"{join((k.name for k in alone), 'or')}; the procedural generator draws "
                    f"{join(k.drawn_as for k in alone)}{hint}")
    return None


def painted(look: dict) -> dict:
    """The look's fields that its kinds paint and that differ from an unmarked object's
    (what the truth records of each object beyond its color and size)."""
    return {key: look[key] for kind in _painting() for key in kind.look
            if look.get(key, kind.look[key]) != kind.look[key]}


def painters(look: dict) -> list:
    """The paints of a look, in order: each kind whose fields differ from an unmarked
    object's, as `(pixels, surface) -> str | None` (synth/shapes.py render)."""
    return [partial(_paint, kind, look) for kind in _painting()
            if any(look.get(key, kind.look[key]) != kind.look[key] for key in kind.look)]


def _paint(kind, look, pixels, surface):
    return kind.paint(pixels, look, surface)


def _painting() -> list:
    return sorted((k for k in drawable.kinds("attributes") if k.paints),
                  key=lambda k: k.paint_order)


def render_look(name: str, box, rgb, look: dict, outline: int, pitch: int):
    """An object of shape `name` drawn in its box with its look painted: (RGBA tile, why
    each painted value that cannot show does not)."""
    from autocomp.synth.shapes import render_painted

    x0, y0, x1, y1 = box
    return render_painted(name, x1 - x0, y1 - y0, rgb, outline, pitch, painters(look))

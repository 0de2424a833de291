"""An object's look: how the procedural generator draws its attribute values (color, size
word, pattern, material, count), from the field of each value's vocabulary entry."""

from __future__ import annotations


def scene_look(task, obj) -> dict:
    """How an object is drawn: color (rgb), scale, pattern and material from its
    attributes."""
    look = plain_look()
    for value in obj.attributes:
        apply_value(look, value, task.vocab_of(value)[value])
    return look


def plain_look() -> dict:
    """An object with no attribute: a palette color, unmarked size, plain surface."""
    return {"color": None, "rgb": None, "scale": 1.0, "pattern": None, "material": None,
            "count": 1}


def apply_value(look: dict, value: str, entry) -> None:
    """Draw one attribute value into a look: the field its entry is drawn by."""
    if entry.rgb is not None:
        look["color"], look["rgb"] = value, entry.rgb
    elif entry.scale is not None:
        look["scale"] = entry.scale
    elif entry.pattern is not None:
        look["pattern"] = entry.pattern
    elif entry.material is not None:
        look["material"] = entry.material
    elif entry.count is not None:
        look["count"] = entry.count


def undrawable(vocab) -> str | None:
    """Why a value of an attribute vocabulary cannot be drawn, or None."""
    for entry in vocab.entries:
        if all(getattr(entry, key) is None for key in ("rgb", "scale", "pattern", "material")):
            hint = " (numerals are drawn by tasks of kind count)" if entry.count else ""
            return (f"value '{entry.name}' of vocabulary '{vocab.name}' has no rgb, scale, "
                    "pattern or material; the procedural generator draws colors, size "
                    f"words, textures and materials{hint}")
    return None

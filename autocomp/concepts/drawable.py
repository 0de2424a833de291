"""The drawable kinds a vocabulary's entries are drawn by (the registry's "kind" family,
autocomp/kinds/): lower layers ask here by name, so the concept, drawing and reading code
never switches on which kind it has.

An attribute entry is drawn by the value kind registered under its field (`rgb: [...]`
-> "rgb"); a relation entry by the geometry kind whose keys its geometry has
(`{dx: 0, dy: 1}` -> "spatial")."""

from __future__ import annotations

from functools import cache

from autocomp.core import registry


@cache
def kind(name: str):
    """The kind registered as `name` (one instance per name)."""
    return registry.resolve("kind", name)()


def forget(name: str) -> None:
    """Drop the kinds made so far (registry.unregister: `name` is gone)."""
    kind.cache_clear()


def kinds(of: str) -> list:
    """Every registered kind of "attributes" (value kinds) or "relations" (geometry
    kinds), in registration order."""
    return [k for k in map(kind, registry.names("kind")) if k.of == of]


def kind_of(entry):
    """The kind that draws a vocabulary entry, or None (drawn by no kind)."""
    return kind(entry.drawn_by) if entry.drawn_by else None


def geometry_kind(geometry: dict):
    """The geometry kind of a relation's geometry (its first key's), or None."""
    return _by_key().get(next(iter(geometry), None))


def _by_key() -> dict:
    return {key: k for k in kinds("relations") for key in k.keys}


def value_fields() -> tuple[str, ...]:
    """The entry fields that declare a value kind ("rgb", "scale", ...)."""
    return tuple(k.name for k in kinds("attributes"))


def geometry_keys() -> tuple[str, ...]:
    return tuple(_by_key())


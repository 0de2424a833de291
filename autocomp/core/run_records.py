"""The typed records that cross the pipeline's stage boundaries, one per line of a stage's
part files: concept -> caption -> image (one per track) -> validation. Stages build them and
write `to_dict()`; the next stages read them back with `from_dict`, which names the stage
file's missing field instead of failing on a KeyError later. The JSON on disk is the same
bytes as before the types existed (keys sorted, optional fields left out when empty)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, fields

from autocomp.core.errors import AutocompError
from autocomp.core.scene import SceneGraph


@functools.cache
def _names(cls) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))


@functools.cache
def _required(cls) -> frozenset[str]:
    return frozenset(n for n in _names(cls) if n not in cls.OPTIONAL)


class Record:
    OPTIONAL: tuple[str, ...] = ()  # left out of the JSON when None

    @classmethod
    def from_dict(cls, data: dict, where=None):
        names = _names(cls)
        if not _required(cls) <= data.keys():
            missing = [n for n in names if n not in data and n not in cls.OPTIONAL]
            raise AutocompError(f"a {cls.__name__} without field '{missing[0]}' (record "
                                f"{data.get('id', '?')})", file=where)
        return cls(**{n: data.get(n) for n in names})

    @classmethod
    def expand(cls, data: dict, where=None) -> list:
        """The typed records one stored line holds (one, unless a type says otherwise)."""
        return [cls.from_dict(data, where)]

    def to_dict(self) -> dict:
        """The record's fields as JSON-ready values; nested dicts and lists are the record's
        own (shared, not copied: a record is frozen, and copying a scene graph deeply for
        each of 800k records cost seconds)."""
        out = {name: getattr(self, name) for name in _names(type(self))}
        for name in self.OPTIONAL:
            if out.get(name) is None:
                out.pop(name, None)
        return out


@dataclass(frozen=True)
class ConceptRecord(Record):
    id: str
    task: str
    n: int
    seed: int
    graph: dict
    counts: dict
    index: int | None = None  # its place in its (task, N) draw (run records)
    partner_of: str | None = None  # drawn as the swap partner of this concept (winoground)

    OPTIONAL = ("index", "partner_of")

    @property
    def scene(self) -> SceneGraph:
        return SceneGraph.from_dict(self.graph)


@dataclass(frozen=True)
class CaptionRecord(Record):
    id: str  # the concept's
    task: str
    n: int
    passed: bool
    minimal: str
    contextual: str | None
    check: dict | None  # the semantic-preservation check's matches on the contextual caption
    attempts: int
    tried: list = field(default_factory=list)
    reason: str = ""
    # the swap partner's captions, derived from these ({id, minimal, contextual, check}):
    # the partner's contextual caption is this one with the partner's words in its spans
    partner: dict | None = None

    OPTIONAL = ("partner",)

    def caption(self, track: str) -> str | None:
        return getattr(self, track)

    @classmethod
    def expand(cls, data: dict, where=None) -> list:
        """This concept's record, and its swap partner's when it has one."""
        mine = cls.from_dict(data, where)
        p = mine.partner
        if not p:
            return [mine]
        passed = p.get("contextual") is not None
        return [mine, cls(p["id"], mine.task, mine.n, passed, p["minimal"], p.get("contextual"),
                          p.get("check"), mine.attempts, [],
                          "" if passed else "derived from its original's caption, which "
                          "has no contextual caption or whose swapped words fail the check")]


@dataclass(frozen=True)
class _OfImage(Record):
    id: str  # the image's: "<concept>-<track>", "<concept>-<track>@<label>" when drawn by a
    #          compared generator (generate.compare)
    concept: str
    task: str
    n: int
    track: str


@dataclass(frozen=True)
class ImageRecord(_OfImage):
    seed: int
    image: str  # relative to the run directory
    width: int
    height: int
    faults: list
    truth: dict
    generation: dict | None = None  # what the generator recorded (model, dtype, ...)
    # the label of the compared generator that drew it (generate.compare); None: the run's own
    generator: str | None = None

    OPTIONAL = ("generation", "generator")


@dataclass(frozen=True)
class ValidationRecord(_OfImage):
    image: str
    passed: bool
    failed_at: str | None
    checks: list
    generator: str | None = None  # as its image's

    OPTIONAL = ("generator",)


RECORDS = {"concepts": ConceptRecord, "captions": CaptionRecord, "images": ImageRecord,
           "validation": ValidationRecord}

"""Concept vocabularies: YAML files of objects, attribute values or relations.

A vocabulary file:

    name: colors
    kind: attributes            # objects | attributes | relations
    description: ...            # optional
    entries:
      - red                     # a plain name, or a mapping with the fields below
      - {name: blue, rgb: [0, 0, 255]}

Fields per kind (all optional but `name`):
  objects:    article (a | an | some | a pair of), plural, pair (true/false)
  attributes: one field saying how the value is drawn, the name of a value kind
              (autocomp/kinds/): rgb ([r, g, b], 0-255); scale (a size word: the
              object's size relative to an unmarked one, e.g. 0.65 small, 1.45 large);
              pattern (a surface texture: stripes | dots | checks); material (a surface
              rendering: wood | metal | glass | stone | fabric); count (a numeral: how many
              of the object, 1-6). The procedural generator draws these; any other
              attribute needs a generator that reads captions.
  relations:  inverse (another entry of the same file), geometry (a mapping whose keys
              name its geometry kind: dx and dy, a direction; size, the sign of
              log(area subject / area object); depth, +1 when the subject is nearer the
              viewer)

A vocabulary may say what its values describe (`attribute:` or `relation:`, see
concepts/aspect.py), which prompts, questions and reports then name.

Built-in vocabularies live in the `catalog/vocab/` folder; a user's file loads the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from autocomp.concepts import drawable
from autocomp.concepts.aspect import Aspect, default_aspect, parse_aspect
from autocomp.core.errors import AutocompError
from autocomp.core.fields import check_text
from autocomp.core.resources import data_dir
from autocomp.core.yamlio import checked_mapping, read_yaml
from autocomp.language.grammar import ARTICLES, Noun, indefinite_article, join, plural
from autocomp.language.letters import look_alike

VOCABULARY_KINDS = ("objects", "attributes", "relations")
FIELDS = {  # attribute entries also take one field per value kind (drawable.value_fields)
    "objects": {"name", "article", "plural", "pair"},
    "attributes": {"name"},
    "relations": {"name", "inverse", "geometry"},
}
TOP_FIELDS = {"name", "kind", "description", "entries", "attribute", "relation"}
ASPECT_FIELD = {"attributes": "attribute", "relations": "relation"}
MAX_NAME = 64  # characters of a name (the longest Objects365 name has 31): it is written
#                into captions and prompts, and a huge one made the check take minutes


@dataclass(frozen=True)
class Entry:
    name: str
    article: str = ""
    plural: str = ""
    inverse: str | None = None
    geometry: dict = field(default_factory=dict, compare=False, hash=False)
    drawn_by: str | None = None  # the kind that draws it (autocomp/kinds/): "rgb", "spatial"
    value: object = None  # an attribute's value of that kind: [r, g, b], a scale, ...

    @property
    def pair(self) -> bool:
        return self.article == "a pair of"

    def noun(self) -> Noun:
        return Noun(self.name, self.article, self.plural)


@dataclass(frozen=True)
class Vocabulary:
    name: str
    kind: str
    entries: tuple[Entry, ...]
    path: str = ""
    description: str = ""
    declared: Aspect | None = field(default=None, compare=False)  # `attribute:`/`relation:`

    @cached_property
    def aspect(self) -> Aspect:
        """What the values describe (declared, else from how the entries are drawn)."""
        return self.declared or default_aspect(self.name, self.kind, self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(e.name for e in self.entries)

    def __getitem__(self, name: str) -> Entry:
        for e in self.entries:
            if e.name == name:
                return e
        raise KeyError(name)

    @property
    def geometries(self) -> dict[str, dict]:
        """Relation -> its geometry (dx/dy, size or depth; {} where none is given)."""
        return {e.name: dict(e.geometry or {}) for e in self.entries}

    @property
    def inverses(self) -> dict[str, str]:
        """Predicate -> its inverse, both ways round ("under" <-> "above")."""
        pairs = {e.name: e.inverse for e in self.entries if e.inverse}
        return {**{v: k for k, v in pairs.items()}, **pairs}


def builtin_vocabularies() -> dict[str, Path]:
    return {p.stem: p for p in sorted((data_dir("catalog") / "vocab").glob("*.yaml"))}


def resolve(ref: str, base: Path | None = None) -> Path:
    """A vocabulary reference: a built-in name, or a path (relative to `base`)."""
    builtin = builtin_vocabularies()
    if ref in builtin:
        return builtin[ref]
    path = Path(ref).expanduser()
    if not path.is_absolute() and base is not None:
        path = base / path
    if path.is_file():
        return path
    known = ", ".join(builtin)
    raise AutocompError(f"no vocabulary '{ref}' (not a file; built-in ones: {known})")


def load_vocabulary(ref: str | Path, base: Path | None = None) -> Vocabulary:
    """The vocabulary of a file, parsed once per process while the file is unchanged (a
    command opens its run several times; Objects365's 365 entries took 0.25 s to parse
    each time, the eval of a small run twice over). Vocabularies are frozen."""
    path = ref if isinstance(ref, Path) else resolve(ref, base)
    try:
        st = Path(path).stat()
        stamp = (str(Path(path).resolve()), st.st_mtime_ns, st.st_size, st.st_ino)
    except OSError:  # read_yaml names the file and the problem
        return parse_vocabulary(read_yaml(path), path)
    got = _parsed.get(stamp)
    if got is None or got.path != str(path):
        got = parse_vocabulary(read_yaml(path), path)
        if len(_parsed) >= 64:
            _parsed.clear()
        _parsed[stamp] = got
    return got


_parsed: dict[tuple, Vocabulary] = {}  # (file, mtime, size, inode) -> its vocabulary


def answer_words(text: str) -> str:
    """A name or an answer as the attribute check compares them: its lowercase letters and
    digits (any script), one space between words ("sky-blue" and "Sky blue." both read
    "sky blue"). Values are answered, so two values that read alike are refused; objects
    are detected, and keep their names as they are ("c" and "c++")."""
    return " ".join(re.findall(r"[^\W_]+", text.lower()))


def parse_vocabulary(data, path: Path | str = "<memory>") -> Vocabulary:
    checked_mapping(data, path, TOP_FIELDS,
                    "a vocabulary file must be a mapping with name, kind, entries")
    kind = data.get("kind")
    if kind not in VOCABULARY_KINDS:
        raise AutocompError(f"field 'kind' must be one of {', '.join(VOCABULARY_KINDS)}, "
                            f"got {kind!r}", file=path)
    name = check_text(data.get("name") or Path(str(path)).stem, "vocabulary", file=path)
    entries = data.get("entries")
    if not isinstance(entries, list) or not entries:
        raise AutocompError("field 'entries' must be a non-empty list", file=path)
    parsed = []
    seen, read = {}, {}  # names, and their words (answer_words)
    for i, raw in enumerate(entries, 1):
        entry = _parse_entry(raw, kind, path, i)
        if entry.name in seen:
            raise AutocompError(f"duplicate name '{entry.name}' (also entry {seen[entry.name]})",
                                file=path, entry=f"{i} ('{entry.name}')")
        words = answer_words(entry.name) if kind != "objects" else entry.name
        if not words:
            raise AutocompError("a name needs letters or digits (answers are read by their "
                                "words)", file=path, entry=f"{i} ('{entry.name}')")
        if words in read:
            raise AutocompError(f"reads as '{words}' once punctuation is set aside, as entry "
                                f"{read[words]} does: an answer cannot tell them apart",
                                file=path, entry=f"{i} ('{entry.name}')")
        seen[entry.name] = read[words] = i
        parsed.append(entry)
    vocab = Vocabulary(str(name), kind, tuple(parsed), str(path), str(data.get("description", "")))
    _check_inverses(vocab, path)
    key = ASPECT_FIELD.get(kind)
    if key is None and ({"attribute", "relation"} & set(data)):
        raise AutocompError("fields 'attribute' and 'relation' belong to attribute and "
                            "relation vocabularies", file=path)
    other = {"attribute": "relation", "relation": "attribute"}.get(key)
    if other in data:
        raise AutocompError(f"field '{other}' does not apply to a vocabulary of kind {kind} "
                            f"(use '{key}')", file=path)
    if data.get(key) is not None:
        vocab = declare(vocab, data[key], file=path, field=key)
    return vocab


def declare(vocab: Vocabulary, raw, *, file, field: str) -> Vocabulary:
    """The vocabulary with an `attribute:` / `relation:` declaration read from `raw`."""
    import dataclasses

    kind = "relation" if vocab.kind == "relations" else "attribute"
    aspect = parse_aspect(raw, kind, vocab.names, vocab.aspect, file=file, field=field)
    return dataclasses.replace(vocab, declared=aspect)


def _parse_entry(raw, kind: str, path, i: int) -> Entry:
    if isinstance(raw, str):
        raw = {"name": raw}
    if not isinstance(raw, dict):
        raise AutocompError(f"an entry must be a name or a mapping, got {raw!r}",
                            file=path, entry=i)
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        raise AutocompError(f"field 'name' must be a non-empty string, got {name!r}"[:160],
                            file=path, entry=i)
    if (long := _too_long(name, "name")):
        raise AutocompError(long, file=path, entry=i)
    check_text(name.replace("\n", " ").replace("\t", " "), "value", file=path, entry=i)
    name = " ".join(name.lower().split())
    where = f"{i} ('{name}')"
    odd = look_alike(name)
    if odd:
        import warnings

        warnings.warn(f"{path}: entry {where}: {odd}; captions and detector prompts typed "
                      "with the ordinary letters will not match it", stacklevel=3)

    def fail(problem):
        return AutocompError(problem, file=path, entry=where)

    allowed = FIELDS[kind] | (set(drawable.value_fields()) if kind == "attributes" else set())
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise fail(f"unknown field '{unknown[0]}' for {kind} (allowed: {sorted(allowed)})")
    if kind == "objects":
        return _object_entry(name, raw, fail)
    if kind == "attributes":
        return _attribute_entry(name, raw, fail)
    inverse = raw.get("inverse")
    if inverse is not None and not isinstance(inverse, str):
        raise fail(f"field 'inverse' must be a relation name, got {inverse!r}"[:160])
    if inverse is not None and (long := _too_long(inverse, "inverse")):
        raise fail(long)
    geometry = raw.get("geometry") or {}
    if not isinstance(geometry, dict):
        raise fail(f"field 'geometry' must be a mapping, got {geometry!r}")
    geo_kind = _geometry_kind(geometry, fail)
    inverse = inverse and " ".join(inverse.lower().split())
    if geo_kind is not None and geo_kind.symmetric:  # "near": its own inverse
        if inverse not in (None, name):
            raise fail(f"a {geo_kind.name} relation says the same read either way: its "
                       f"inverse is itself, not '{inverse}'")
        return Entry(name, inverse=name, geometry=geometry, drawn_by=geo_kind.name)
    if inverse == name or (geometry and not any(geometry.values())):
        why = ("its inverse is itself" if inverse == name else
               "its geometry has no direction (every component 0)")
        raise fail(f"relation '{name}' is symmetric ({why}): swapping its two objects says "
                   "the same thing, so its swap and confusion negatives would be true of the "
                   "image; give a directed relation (one with an inverse, e.g. 'to the left "
                   "of' / 'to the right of') or leave it out")
    return Entry(name, inverse=inverse, geometry=geometry,
                 drawn_by=geo_kind and geo_kind.name)


def _attribute_entry(name: str, raw: dict, fail) -> Entry:
    """An attribute entry, drawn by at most one value kind (the field it gives)."""
    given = [f for f in drawable.value_fields() if raw.get(f) is not None]
    if len(given) > 1:
        raise fail(f"an attribute is drawn as one of {join(drawable.value_fields(), 'or')}, "
                   "not several")
    if not given:
        return Entry(name)
    kind = drawable.kind(given[0])
    problem = kind.look_problem()
    if problem:  # a look nothing draws: refused here, not drawn plain later
        raise fail(f"field '{given[0]}': {problem}")
    return Entry(name, drawn_by=given[0], value=kind.parse(raw[given[0]], fail))


def _geometry_kind(geometry: dict, fail):
    """The geometry kind of a relation's geometry (None when it has none), its keys
    checked: known, numbers, all of one kind."""
    known = drawable.geometry_keys()
    for key, value in geometry.items():
        if key not in known:
            raise fail(f"field 'geometry.{key}' is not known (known: {', '.join(known)})")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise fail(f"field 'geometry.{key}' must be a number, got {value!r}")
    found = {drawable.geometry_kind({key: 0}) for key in geometry}
    if len(found) > 1:
        raise fail("field 'geometry' is one of "
                   f"{join((k.described for k in drawable.kinds('relations')), 'or')}")
    if not found:
        return None
    geo_kind = found.pop()
    geo_kind.parse(geometry, fail)
    return geo_kind


def drawn_alike(vocab: Vocabulary) -> list[str]:
    """One line per group of entries the embedded generator draws the same way (same
    kind and value: rgb, scale, pattern, ...): its images cannot show them apart and its
    validators cannot read them apart, so their concepts fail validation or test nothing."""
    out = []
    by_kind: dict = {}
    for e in vocab.entries:
        if e.drawn_by and vocab.kind == "attributes":
            by_kind.setdefault(e.drawn_by, []).append(e.name)
    if len(by_kind) > 1:  # patterns with one `material: fabric` value: drawn plain
        main = max(by_kind, key=lambda k: len(by_kind[k]))
        rest = [f"{n!r} ({k})" for k, names in by_kind.items() if k != main for n in names]
        out.append(f"{vocab.path or vocab.name}: entries are drawn by {len(by_kind)} kinds ("
                   + ", ".join(f"{k}: {len(v)}" for k, v in by_kind.items()) + "): the "
                   f"embedded generator and validators read one kind per vocabulary, so "
                   f"{', '.join(rest[:5])} will be drawn plain and fail validation (give "
                   f"every entry a {main} field, or use diffusers with a VQA answerer)")
    for key in drawable.value_fields():
        groups: dict = {}
        for e in vocab.entries:
            if e.drawn_by == key:
                groups.setdefault(e.value, []).append(e.name)
        for value, names in groups.items():
            if len(names) > 1:
                shown = drawable.kind(key).shown(value)
                out.append(f"{vocab.path or vocab.name}: entries {', '.join(map(repr, names))} "
                           f"are drawn alike ({key}: {shown}): the embedded generator and "
                           "validators cannot tell them apart (give each its own "
                           f"{key}, or use diffusers with a VQA answerer)")
    return out


def drawn_alike_in(task) -> list[str]:
    """drawn_alike over every vocabulary a task draws its values from."""
    return [line for _, voc in task.primitive_vocabularies() for line in drawn_alike(voc)]


def _too_long(text: str, field: str) -> str | None:
    """The problem with a name longer than MAX_NAME, or None."""
    if len(text) <= MAX_NAME:
        return None
    return (f"field '{field}' is {len(text):,} characters long (at most {MAX_NAME}: it is "
            f"written into every caption): {text[:30]!r}...")


def _object_entry(name: str, raw: dict, fail) -> Entry:
    pair = raw.get("pair", False)
    if not isinstance(pair, bool):
        raise fail(f"field 'pair' must be true or false, got {pair!r}")
    article = raw.get("article")
    if article is None:
        article = "a pair of" if pair else indefinite_article(name)
    if article not in ARTICLES:
        raise fail(f"field 'article' must be one of {', '.join(ARTICLES)}, got {article!r}")
    if pair != (article == "a pair of"):
        raise fail(f"field 'pair' is {str(pair).lower()} but 'article' is {article!r}")
    plural_form = raw.get("plural")
    if plural_form is None:
        plural_form = name if article == "some" else plural(name)
    if not isinstance(plural_form, str) or not plural_form.strip():
        raise fail(f"field 'plural' must be a non-empty string, got {plural_form!r}"[:160])
    if (long := _too_long(plural_form, "plural")):
        raise fail(long)
    return Entry(name, article=article, plural=" ".join(plural_form.lower().split()))


def _check_inverses(vocab: Vocabulary, path) -> None:
    names = set(vocab.names)
    for i, e in enumerate(vocab.entries, 1):
        if e.inverse is None:
            continue
        where = f"{i} ('{e.name}')"
        if e.inverse not in names:
            raise AutocompError(f"field 'inverse' names '{e.inverse}', which is not in this "
                                "vocabulary", file=path, entry=where)
        back = vocab[e.inverse].inverse
        if back is not None and back != e.name:
            raise AutocompError(f"field 'inverse' is '{e.inverse}' but '{e.inverse}' gives "
                                f"'{back}' as its inverse", file=path, entry=where)

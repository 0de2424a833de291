"""Semantic-preservation check (Auto-Comp section 3, docs/methods.md section 2).

Every binding of the concept must appear in the caption:
  attribute:  <Article> [<Word>] a_i o_i                       ("an elegant red chair")
  relation:   <Article> [<Word>] o_i [is|which is] r_i <Article> [<Word>] o_{i+1}
  object:     <Article> [<Word>] o_i    (scene graphs: an object with no attribute and in
              no relation, so it is said too, and its contextual negatives have a span)
  count:      a_i [<Word>] o_i          ("two red cubes": a counted noun's numeral stands
              where the article would, its modifier after it; the article span is empty)
An object with several attributes (scene graphs: "a large red cube") may also have its own
other attribute words around a_i and before o_i in relations; with one attribute or none
the patterns are exactly the paper's.

The relation pattern also accepts a copula between the subject and the relation ("a chair
is under a lamp", "a lamp, which is above a cup"): without it the paper's own minimal
caption of a 3-object chain would fail the paper's check on its second relation.

A match keeps the character spans of every part (article, modifier, value, noun,
predicate), so contextual negatives can substitute words inside them and nowhere else.
An object name does not match inside a longer object name of the vocabulary ("tape" in
"tape measure", "truck" in "pickup truck").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache

from autocomp.core.scene import SceneGraph
from autocomp.language.grammar import Noun

DETERMINERS = ("a pair of", "the pair of", "a", "an", "the", "one", "another", "some", "this",
               "that", "its", "his", "her", "their", "our", "your", "each")
_ART = "|".join(re.escape(d).replace(r"\ ", r"\s+") for d in sorted(DETERMINERS, key=len,
                                                                     reverse=True))
_WORD = r"[^\W_][\w'-]*"
_VERB = r"(?:\s*,)?\s+(?:(?:which|that)\s+)?(?P<verb>is|are)"

Span = tuple[int, int]


@dataclass(frozen=True)
class Binding:
    """One binding of a concept: an attribute of an object, or a relation."""

    kind: str  # "attribute" | "relation" | "object"
    index: int  # object index (attribute, object) or relation index (relation)
    attribute: int = 0  # which attribute of the object

    def label(self, graph: SceneGraph) -> str:
        return _LABELS[self.kind](graph, self)


def _object_label(graph: SceneGraph, b: Binding) -> str:
    return graph.objects[b.index].name


def _attribute_label(graph: SceneGraph, b: Binding) -> str:
    obj = graph.objects[b.index]
    return f"{obj.attributes[b.attribute]} {obj.name}"


def _relation_label(graph: SceneGraph, b: Binding) -> str:
    rel = graph.relations[b.index]
    return f"{graph.objects[rel.subject].name} {rel.predicate} {graph.objects[rel.object].name}"


_LABELS = {"object": _object_label, "attribute": _attribute_label, "relation": _relation_label}


@dataclass(frozen=True)
class Phrase:
    """A noun phrase inside a match: article, optional modifier and value, the noun."""

    slot: int  # the object's index in the graph
    article: Span
    modifier: Span | None
    value: Span | None
    noun: Span


@dataclass(frozen=True)
class BindingMatch:
    binding: Binding
    span: Span
    phrases: tuple[Phrase, ...]
    predicate: Span | None = None
    verb: Span | None = None

    def to_dict(self) -> dict:
        return {"kind": self.binding.kind, "index": self.binding.index,
                "attribute": self.binding.attribute, "span": list(self.span),
                "phrases": [_phrase_dict(p) for p in self.phrases],
                "predicate": _opt(self.predicate), "verb": _opt(self.verb)}

    @classmethod
    def from_dict(cls, d: dict) -> BindingMatch:
        phrases = tuple(Phrase(p["slot"], tuple(p["article"]), _span(p["modifier"]),
                               _span(p["value"]), tuple(p["noun"])) for p in d["phrases"])
        return cls(Binding(d["kind"], d["index"], d["attribute"]), tuple(d["span"]), phrases,
                   _span(d["predicate"]), _span(d["verb"]))


@dataclass(frozen=True)
class CheckResult:
    passed: bool
    matches: tuple[BindingMatch, ...]
    failed: tuple[str, ...]  # labels of the bindings that matched nowhere

    def to_dict(self) -> dict:
        return {"passed": self.passed, "matches": [m.to_dict() for m in self.matches],
                "failed": list(self.failed)}

    @classmethod
    def from_dict(cls, d: dict) -> CheckResult:
        return cls(d["passed"], tuple(BindingMatch.from_dict(m) for m in d["matches"]),
                   tuple(d["failed"]))


def bindings(graph: SceneGraph) -> list[Binding]:
    out = [Binding("attribute", i, j) for i, o in enumerate(graph.objects)
           for j in range(len(o.attributes))]
    out += [Binding("relation", k) for k in range(len(graph.relations))]
    related = {i for r in graph.relations for i in (r.subject, r.object)}
    return out + [Binding("object", i) for i, o in enumerate(graph.objects)
                  if not o.attributes and i not in related]


def check_caption(caption: str, graph: SceneGraph, noun: Callable[[str], Noun],
                  vocabulary: Iterable[str] = (), articles: bool = True) -> CheckResult:
    """Match every binding of `graph` in `caption`.

    `noun` gives the written forms of an object name; `vocabulary` lists the written forms
    of the vocabulary's objects (`Task.object_forms`), which a match must not be a part of.
    `articles=False` lets a noun phrase stand without its article ("red cars on a road"):
    how a training corpus is read for the compounds it holds (bench/corpus.py).
    """
    longer = tuple(vocabulary)
    matches, failed = [], []
    for b in bindings(graph):
        m = _MATCHERS[b.kind](caption, graph, b, noun, longer, articles)
        if m is None:
            failed.append(b.label(graph))
        else:
            matches.append(m)
    return CheckResult(not failed, tuple(matches), tuple(failed))


def _match_object(caption, graph, b: Binding, noun, longer, articles) -> BindingMatch | None:
    pattern = _np("s", None, noun(graph.objects[b.index].name).forms, (), articles)
    return _match_phrase(caption, pattern, b, longer)


def _match_attribute(caption, graph, b: Binding, noun, longer, articles) -> BindingMatch | None:
    obj = graph.objects[b.index]
    value = obj.attributes[b.attribute]
    others = [a for j, a in enumerate(obj.attributes) if j != b.attribute]
    written = noun(obj.name)
    if written.counted:
        return _match_phrase(caption, _counted("s", value, written.forms), b, longer)
    return _match_phrase(caption, _np("s", value, written.forms, others, articles), b, longer)


def _match_phrase(caption, pattern: str, b: Binding, longer) -> BindingMatch | None:
    """The first match of one object's noun phrase not inside a longer object name."""
    regex = _compile(pattern)
    pos = 0
    while (m := regex.search(caption, pos)) is not None:
        phrases = (_phrase(m, "s", b.index),)
        if not _inside_longer(caption, phrases[0].noun, longer):
            return BindingMatch(b, m.span(), phrases)
        pos = m.start() + 1
    return None


def _match_relation(caption, graph, b: Binding, noun, longer, articles) -> BindingMatch | None:
    """The subject's noun phrase, then the relation and the object's phrase right after it.
    Two patterns instead of one: each is shared by many bindings (one per subject, one per
    relation and object), so a benchmark's hundred thousand distinct relation bindings
    compile a few thousand patterns, not one each."""
    rel = graph.relations[b.index]
    subj, objn = (graph.objects[i] for i in (rel.subject, rel.object))
    head = _compile(_np("s", None, noun(subj.name).forms, subj.attributes, articles))
    tail = _compile(f"(?:{_VERB})?" + r"\s+(?P<pred>" + _words(rel.predicate) + r")\s+"
                    + _np("o", None, noun(objn.name).forms, objn.attributes, articles))
    pos = 0
    while (m := head.search(caption, pos)) is not None:
        t = tail.match(caption, m.end())
        if t is not None:
            phrases = (_phrase(m, "s", rel.subject), _phrase(t, "o", rel.object))
            if not any(_inside_longer(caption, ph.noun, longer) for ph in phrases):
                verb = t.span("verb") if t.group("verb") else None
                return BindingMatch(b, (m.start(), t.end()), phrases, t.span("pred"), verb)
        pos = m.start() + 1
    return None


_MATCHERS = {"object": _match_object, "attribute": _match_attribute,
             "relation": _match_relation}


def _words(phrase: str) -> str:
    return r"\s+".join(re.escape(w) for w in phrase.split())


def _np(prefix: str, value: str | None, forms: tuple[str, ...], others=(),
        articles: bool = True) -> str:
    """<Article> [<Word>] [value] noun. `others`: the object's other attributes (scene
    graphs give an object several: "a large red cube"), whose words may stand before and
    after the value in any order; an object with one attribute or none gets the paper's
    strict pattern.

    Linear time: the other attributes are matched word by word (distinct words, none of
    the value's), so at any position at most one alternative matches; alternatives of
    phrases that overlap ("big", "big big") made the match exponential in repeated words."""
    alts = "|".join(_words(f) for f in sorted(forms, key=len, reverse=True))
    own = {w.lower() for w in (value or "").split()}
    words = sorted({w.lower() for o in others for w in o.split()} - own, key=len,
                   reverse=True)
    extra = rf"(?:(?:{'|'.join(map(re.escape, words))})\s+)*" if words else ""
    middle = f"{extra}(?P<{prefix}val>{_words(value)})\\s+{extra}" if value else extra
    art = rf"(?P<{prefix}art>{_ART})\s+" if articles else rf"(?:(?P<{prefix}art>{_ART})\s+)?"
    return (rf"\b{art}(?:(?P<{prefix}mod>{_WORD})\s+)?{middle}"
            rf"(?P<{prefix}noun>{alts})(?!\w)")  # not \b: "c++" ends in no word char


def _counted(prefix: str, value: str, forms: tuple[str, ...]) -> str:
    """<numeral> [<Word>] noun ("two red cubes"), with an empty article group."""
    alts = "|".join(_words(f) for f in sorted(forms, key=len, reverse=True))
    return (rf"(?P<{prefix}art>)\b(?P<{prefix}val>{_words(value)})\s+"
            rf"(?:(?P<{prefix}mod>{_WORD})\s+)?(?P<{prefix}noun>{alts})(?!\w)")


@lru_cache(maxsize=65536)
def _compile(pattern: str) -> re.Pattern:
    return re.compile(pattern, re.IGNORECASE)


def _phrase(m: re.Match, p: str, slot: int) -> Phrase:
    groups = m.re.groupindex
    value = m.span(f"{p}val") if f"{p}val" in groups else None
    mod = m.span(f"{p}mod") if m.group(f"{p}mod") else None
    return Phrase(slot, m.span(f"{p}art"), mod, value, m.span(f"{p}noun"))


def _inside_longer(text: str, span: Span, longer: tuple[str, ...]) -> bool:
    """True when the noun at `span` is part of a longer vocabulary name written there."""
    found = text[span[0]:span[1]].lower()
    for name, offset in _containing(found, longer):
        start, end = span[0] - offset, span[0] - offset + len(name)
        if (start >= 0 and text[start:end].lower() == name
                and not text[start - 1:start].isalnum() and not text[end:end + 1].isalnum()):
            return True
    return False


@lru_cache(maxsize=65536)
def _containing(found: str, longer: tuple[str, ...]) -> tuple[tuple[str, int], ...]:
    """The longer names that hold `found` from the start of one of their words ("tape" in
    "tape measure", "c" in "c++"), with where it starts in each (the caption decides)."""
    out = []
    for name in longer:
        if name == found:
            continue
        offset = f" {name}".find(f" {found}")
        while offset >= 0:
            out.append((name, offset))
            offset = f" {name}".find(f" {found}", offset + 1)
    return tuple(out)


def _opt(span):
    return None if span is None else list(span)


def _span(value):
    return None if value is None else tuple(value)


def _phrase_dict(p: Phrase) -> dict:
    return {"slot": p.slot, "article": list(p.article), "modifier": _opt(p.modifier),
            "value": _opt(p.value), "noun": list(p.noun)}

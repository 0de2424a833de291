"""English grammar for captions: articles, plurals, lists. inflect does the work.

inflect is imported on first use, never at module import, and without typeguard's run-time
instrumentation (see _engine).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

ARTICLES = ("a", "an", "some", "a pair of")
COUNTED = "counted"  # a Noun written after a numeral ("two cubes"): no article


@lru_cache(maxsize=1)
def _engine():
    """inflect's engine. inflect 7 decorates its methods with typeguard's @typechecked, which
    re-parses and recompiles each one at import (2.3-2.8 s of every autocomp process) and
    checks every call's argument types (160 us a call). Our calls pass non-empty strings, so
    the module is imported with @typechecked as the identity, as `python -O` would; the
    grammar tests pin the outputs."""
    import sys

    if "inflect" not in sys.modules:
        try:
            import typeguard
        except ImportError:  # an inflect that does not use typeguard
            typeguard = None
        checked = getattr(typeguard, "typechecked", None)
        if checked is not None:
            typeguard.typechecked = _unchecked
        try:
            import inflect  # noqa: F401
        finally:
            if checked is not None:
                typeguard.typechecked = checked
    import inflect

    return inflect.engine()


def _unchecked(target=None, **_options):
    """typeguard.typechecked's signature, checking nothing (with or without arguments)."""
    return target if target is not None else _unchecked


@lru_cache(maxsize=65536)
def indefinite_article(phrase: str) -> str:
    """'a' or 'an' for the phrase that follows ("orange chair" -> "an")."""
    return _engine().a(phrase).split(" ", 1)[0].lower()


@lru_cache(maxsize=65536)
def plural(noun: str) -> str:
    return _engine().plural_noun(noun)


def singular(word: str) -> str:
    """The singular of a plural noun ("materials" -> "material"); other words as they are."""
    return _engine().singular_noun(word) or word


def join(phrases, last: str = "and") -> str:
    """'a, b and c' (no serial comma, as in the Auto-Comp captions; `last`: "or" for
    'a, b or c').

    Written here rather than with inflect.join, whose run-time type checks cost 160 us a call
    (80% of the time to build a 65,535-caption confusion set).
    """
    phrases = list(phrases)
    if len(phrases) <= 2:
        return f" {last} ".join(phrases)
    return f"{', '.join(phrases[:-1])} {last} {phrases[-1]}"


@dataclass(frozen=True)
class Noun:
    """How an object name is written: its article when bare, its plural, pair or not.

    article is one of "a", "an", "some" (plural-only words such as "cookies") or
    "a pair of" (pair nouns such as "gloves", written with their plural form), or
    "counted": a numeral takes the article's place and the noun is plural ("two cubes";
    the count tasks' objects).
    """

    name: str
    article: str
    plural: str

    @property
    def pair(self) -> bool:
        return self.article == "a pair of"

    @property
    def counted(self) -> bool:
        return self.article == COUNTED

    @property
    def is_plural(self) -> bool:
        """True when the written form is plural ("a pair of gloves", "some cookies")."""
        return self.article in ("some", "a pair of", COUNTED)

    @property
    def plural_verb(self) -> bool:
        """True when the noun takes "are" ("some cookies are"; "a pair of gloves is")."""
        return self.article in ("some", COUNTED)

    @property
    def form(self) -> str:
        """The word as it appears in a caption (pair and counted nouns in their plural)."""
        return self.plural if self.pair or self.counted else self.name

    @property
    def forms(self) -> tuple[str, ...]:
        """The written forms a caption may use for one such object: the name, and for a pair
        noun its plural too ("earphones"). The plural of a single object ("chairs") is not
        one: it would state another count."""
        return tuple(dict.fromkeys((self.form, self.name)))

    @classmethod
    def guess(cls, name: str, *, pair: bool = False) -> Noun:
        """A Noun for a word no vocabulary describes (articles and plural from inflect)."""
        if pair:
            already_plural = _engine().singular_noun(name) is not False
            return cls(name, "a pair of", name if already_plural else plural(name))
        return cls(name, indefinite_article(name), plural(name))


def article_for(noun: Noun, following: str) -> str:
    """The indefinite article of a noun phrase whose words after the article are `following`.

    Pair and plural-only nouns keep "a pair of" / "some"; otherwise a bare noun keeps its
    recorded article ("an SUV") and a modified noun gets the article of its first word.
    """
    if noun.counted:
        return ""
    if noun.is_plural:
        return noun.article
    if following == noun.form:
        return noun.article
    return indefinite_article(following)


def noun_phrase(noun: Noun, modifiers=()) -> str:
    """'a red chair', 'an orange lamp', 'a pair of blue gloves', 'some cookies'."""
    return _noun_phrase(noun, tuple(modifiers))


@lru_cache(maxsize=262144)  # negatives re-render the same phrases thousands of times
def _noun_phrase(noun: Noun, modifiers: tuple[str, ...]) -> str:
    words = " ".join([*modifiers, noun.form])
    if noun.counted:  # the numeral is the first modifier: "two cubes"
        return words
    return f"{article_for(noun, words)} {words}"


# ---- open-vocabulary relations and nouns (Visual Genome: "wears", "parked on", "bikes") ----

PREPOSITIONS = frozenset([
    "aboard", "about", "above", "across", "after", "against", "along", "alongside", "amid",
    "among", "around", "as", "at", "atop", "before", "behind", "below", "beneath", "beside",
    "besides", "between", "beyond", "by", "down", "during", "except", "for", "from", "in",
    "inside", "into", "like", "near", "next", "of", "off", "on", "onto", "opposite", "out",
    "outside", "over", "past", "round", "since", "than", "through", "throughout", "thru", "to",
    "toward", "towards", "under", "underneath", "unlike", "until", "up", "upon", "via", "with",
    "within", "without"
])
# heads of Visual Genome's phrase predicates that are not verbs ("left of", "top of", "close
# to", "full of"): they follow "is" like a preposition, never conjugated ("lefts of")
PHRASE_HEADS = frozenset([
    "left", "right", "top", "front", "back", "bottom", "side", "rear", "middle", "center",
    "edge", "close", "part", "full", "ahead", "adjacent", "parallel", "outside", "inside",
])
IRREGULAR_PARTICIPLES = frozenset([
    "made", "worn", "held", "built", "hung", "sewn", "shown", "drawn", "written", "grown",
    "thrown", "torn", "broken", "frozen", "stuck", "bound", "cut", "set", "put", "lit", "shut",
    "spread", "laid"
])


@dataclass(frozen=True)
class PredicateForm:
    """How a relation predicate is said.

    kind: "preposition" ("on", "in front of"), "participle" ("wearing", "sitting on"),
    "passive" ("parked on", "made of") -- all three follow "is"/"are" -- or "finite"
    ("wears", "has", "hold"), conjugated to agree with its subject. `verb` is the verb's
    base form (finite) or the participle itself; `rest` the words after it.
    """

    kind: str
    verb: str
    rest: str

    @property
    def is_preposition(self) -> bool:
        return self.kind in ("preposition",)

    def clause(self, plural_subject: bool) -> str:
        """The words between subject and object: "is on", "are wearing", "wears"."""
        if self.kind != "finite":
            be = "are" if plural_subject else "is"
            return " ".join(w for w in (be, self.verb, self.rest) if w)
        verb = self.verb if plural_subject else third_person(self.verb)
        return " ".join(w for w in (verb, self.rest) if w)

    def modifier(self, plural_subject: bool) -> str:
        """After a noun that is introduced: "on", "wearing", "parked on", "that wears"."""
        if self.kind != "finite":
            return " ".join(w for w in (self.verb, self.rest) if w)
        return f"that {self.clause(plural_subject)}"


@lru_cache(maxsize=65536)
def predicate_form(predicate: str) -> PredicateForm:
    words = predicate.split()
    if words and words[0] in ("is", "are") and len(words) > 1:
        words = words[1:]  # "is on" -> "on"
    if not words:
        return PredicateForm("preposition", "", "")
    first, rest = words[0], " ".join(words[1:])
    if first in PREPOSITIONS or (first in PHRASE_HEADS and len(words) > 1):
        return PredicateForm("preposition", " ".join(words), "")
    if first.endswith("ing") and len(first) > 4:
        return PredicateForm("participle", first, rest)
    if first in IRREGULAR_PARTICIPLES or (first.endswith("ed") and len(first) > 3):
        return PredicateForm("passive", first, rest)
    return PredicateForm("finite", base_verb(first), rest)


@lru_cache(maxsize=65536)
def base_verb(verb: str) -> str:
    """'wears' -> 'wear', 'has' -> 'have', 'carries' -> 'carry'; a base form stays."""
    return _engine().plural_verb(verb)


@lru_cache(maxsize=65536)
def third_person(base: str) -> str:
    """'wear' -> 'wears', 'have' -> 'has', 'carry' -> 'carries', 'watch' -> 'watches'."""
    irregular = {"have": "has", "be": "is", "do": "does", "go": "goes"}
    if base in irregular:
        return irregular[base]
    if base.endswith(("s", "sh", "ch", "x", "z", "o")):
        return base + "es"
    if len(base) > 1 and base.endswith("y") and base[-2] not in "aeiou":
        return base[:-1] + "ies"
    return base + "s"


def is_plural_noun(name: str, known_noun=None) -> bool:
    """True for a plural noun phrase ("bikes", "black pants", "glasses"). inflect proposes
    a singular; `known_noun(word)`, when given (WordNet), must accept it, which keeps
    "bus", "lens" and "canvas" singular."""
    last = name.split()[-1] if name.split() else name
    single = _engine().singular_noun(last)
    if not single or single == last:
        return False
    return known_noun is None or known_noun(single)

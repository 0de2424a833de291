"""English grammar for captions: articles, plurals, lists. inflect does the work.

inflect is imported on first use (it costs ~0.5-2 s), never at module import.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

ARTICLES = ("a", "an", "some", "a pair of")


@lru_cache(maxsize=1)
def _engine():
    import inflect

    return inflect.engine()


@lru_cache(maxsize=65536)
def indefinite_article(phrase: str) -> str:
    """'a' or 'an' for the phrase that follows ("orange chair" -> "an")."""
    return _engine().a(phrase).split(" ", 1)[0].lower()


@lru_cache(maxsize=65536)
def plural(noun: str) -> str:
    return _engine().plural_noun(noun)


def join(phrases: list[str]) -> str:
    """'a, b and c' (no serial comma, as in the Auto-Comp captions).

    Written here rather than with inflect.join, whose run-time type checks cost 160 us a call
    (80% of the time to build a 65,535-caption confusion set).
    """
    if len(phrases) <= 2:
        return " and ".join(phrases)
    return f"{', '.join(phrases[:-1])} and {phrases[-1]}"


@dataclass(frozen=True)
class Noun:
    """How an object name is written: its article when bare, its plural, pair or not.

    article is one of "a", "an", "some" (plural-only words such as "cookies") or
    "a pair of" (pair nouns such as "gloves", written with their plural form).
    """

    name: str
    article: str
    plural: str

    @property
    def pair(self) -> bool:
        return self.article == "a pair of"

    @property
    def is_plural(self) -> bool:
        """True when the written form is plural ("a pair of gloves", "some cookies")."""
        return self.article in ("some", "a pair of")

    @property
    def plural_verb(self) -> bool:
        """True when the noun takes "are" ("some cookies are"; "a pair of gloves is")."""
        return self.article == "some"

    @property
    def form(self) -> str:
        """The word as it appears in a caption (pair nouns in their plural form)."""
        return self.plural if self.pair else self.name

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
    if noun.is_plural:
        return noun.article
    if following == noun.form:
        return noun.article
    return indefinite_article(following)


def noun_phrase(noun: Noun, modifiers=()) -> str:
    """'a red chair', 'an orange lamp', 'a pair of blue gloves', 'some cookies'."""
    words = " ".join([*modifiers, noun.form])
    return f"{article_for(noun, words)} {words}"

"""Contextual negatives: substitute the edited words inside the matched binding spans.

The contextual caption is free text written by a caption writer; the semantic-preservation
check kept where each binding sits. A negative graph (same slots as the positive, other
words in them) is written into those spans only: nouns, values and predicates replaced,
indefinite articles re-rendered ("a red chair" -> "an orange lamp", "a pair of gloves" ->
"a chair"), the copula of a relation clause agreed ("which is" / "which are"). Everything
outside the spans stays as written, so positive and negative differ only there.

Known limit: agreement outside the spans (a verb after a pair noun) is not rewritten.
"""

from __future__ import annotations

from collections.abc import Callable

from autocomp.core.scene import SceneGraph
from autocomp.language.check import CheckResult
from autocomp.language.grammar import ARTICLES, Noun, article_for


def substitute(caption: str, check: CheckResult, negative: SceneGraph,
               noun: Callable[[str], Noun]) -> str:
    """The contextual caption with `negative`'s words written into the matched spans.

    Articles are settled last, from the words that follow them in the new caption, so an
    object with several attributes (several matched phrases sharing one article) gets one
    article that agrees with its first word."""
    return Substitution(caption, check, noun)(negative)


class Substitution:
    """`substitute` for one caption and many negatives: where each word goes is read from
    the check once; each negative then only fills the spans (a confusion item has hundreds
    of negatives, rendered again each time a benchmark is read)."""

    def __init__(self, caption: str, check: CheckResult, noun: Callable[[str], Noun]):
        if not check.passed:
            raise ValueError(f"caption failed the check ({', '.join(check.failed)}): no spans "
                             "to use")
        self.caption, self.noun = caption, noun
        self.puts = []  # (span, what, slot or relation, attribute, capitalised)
        self.articles = []  # (article span, noun span, slot)
        for m in check.matches:
            for ph in m.phrases:
                self.puts.append((tuple(ph.noun), "noun", ph.slot, None, False))
                if ph.value is not None:  # a sentence's first word ("Two cubes") keeps its capital
                    self.puts.append((tuple(ph.value), "value", ph.slot, m.binding.attribute,
                                      caption[ph.value[0]:ph.value[0] + 1].isupper()))
                self.articles.append((tuple(ph.article), tuple(ph.noun), ph.slot))
            if m.predicate is not None:
                self.puts.append((tuple(m.predicate), "predicate", m.binding.index, None,
                                  False))
                if m.verb is not None:
                    self.puts.append((tuple(m.verb), "verb", m.binding.index, None, False))
        spans = sorted({p[0] for p in self.puts} | {a[0] for a in self.articles})
        last = len(caption) + 1
        for start, end in reversed(spans):
            if end > last:
                raise ValueError(f"overlapping matched spans in {caption!r}")
            last = start
        self.spans = spans
        # the words between an article and its noun: the spans inside, and the text around
        self.between = {}
        for art, noun_span, _ in self.articles:
            inside = [sp for sp in spans if sp[0] >= art[1] and sp[1] <= noun_span[1]]
            self.between[(art, noun_span)] = inside

    def _text(self, what: str, index: int, attribute, capital: bool, negative, nouns) -> str:
        if what == "noun":
            return nouns(index).form
        if what == "value":
            value = negative.objects[index].attributes[attribute]
            return value[:1].upper() + value[1:] if capital else value
        rel = negative.relations[index]
        if what == "predicate":
            return rel.predicate
        return "are" if nouns(rel.subject).plural_verb else "is"

    def __call__(self, negative: SceneGraph) -> str:
        caption, seen = self.caption, {}

        def nouns(slot: int) -> Noun:
            if slot not in seen:
                seen[slot] = self.noun(negative.objects[slot].name)
            return seen[slot]

        edits: dict[tuple[int, int], str] = {}
        for span, what, index, attribute, capital in self.puts:
            _put(edits, span, self._text(what, index, attribute, capital, negative, nouns))
        articles: dict[tuple[int, int], tuple] = {}  # article span -> (noun span, new noun)
        for art, noun_span, slot in self.articles:
            new = nouns(slot)
            if articles.setdefault(art, (noun_span, new)) != (noun_span, new):
                raise ValueError(f"two phrases share the article at {art} in {caption!r}")
        settled = {}
        for span, (noun_span, new) in articles.items():
            old = caption[span[0]:span[1]]
            article = " ".join(old.lower().split())
            if article in ARTICLES:  # indefinite: agree with the words that now follow it
                following = " ".join(self._join(span[1], noun_span[1],
                                                self.between[(span, noun_span)],
                                                edits).split())
                article = article_for(new, following)
            elif article == "the pair of" and not new.pair:
                article = "the"
            if old[:1].isupper():
                article = article[:1].upper() + article[1:]
            settled[span] = article
        return self._join(0, len(caption), self.spans, {**edits, **settled})

    def _join(self, start: int, end: int, spans, texts: dict) -> str:
        """caption[start:end] with the text of each of `spans` (sorted, inside) in place."""
        out, at = [], start
        for span in spans:
            if span not in texts:
                continue
            out.append(self.caption[at:span[0]])
            out.append(texts[span])
            at = span[1]
        out.append(self.caption[at:end])
        return "".join(out)


def _apply(caption: str, edits: dict) -> str:
    out = caption
    last = len(caption) + 1
    for (start, end), text in sorted(edits.items(), reverse=True):
        if end > last:
            raise ValueError(f"overlapping matched spans in {caption!r}")
        out = out[:start] + text + out[end:]
        last = start
    return out


def _put(edits: dict, span, text: str) -> None:
    span = tuple(span)
    if edits.setdefault(span, text) != text:
        raise ValueError(f"two bindings write different words at {span}: "
                         f"{edits[span]!r} and {text!r}")

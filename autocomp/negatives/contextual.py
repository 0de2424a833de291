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
        # the caption between the spans: pieces[i] precedes spans[i], the last piece ends it
        ends = [0, *(sp[1] for sp in spans)]
        self.pieces = [caption[a:b[0]] for a, b in zip(ends, spans, strict=False)]
        self.pieces.append(caption[ends[-1]:])
        # each article: its span, the noun it agrees with, and the words between them (the
        # spans inside, and the text around them), read once here
        self.agree = []
        put_spans = {p[0] for p in self.puts}
        for art, noun_span, slot in self.articles:
            inside = [sp for sp in spans if sp[0] >= art[1] and sp[1] <= noun_span[1]
                      and sp in put_spans]  # an article inside keeps its words here
            ends = [art[1], *(sp[1] for sp in inside)]
            around = [caption[a:b[0]] for a, b in zip(ends, inside, strict=False)]
            around.append(caption[ends[-1]:noun_span[1]])
            old = caption[art[0]:art[1]]
            self.agree.append((art, noun_span, slot, old, " ".join(old.lower().split()),
                               inside, around))

    def __call__(self, negative: SceneGraph) -> str:
        objects, relations, noun = negative.objects, negative.relations, self.noun
        nouns: dict[int, Noun] = {}

        def noun_of(slot: int) -> Noun:
            got = nouns.get(slot)
            if got is None:
                got = nouns[slot] = noun(objects[slot].name)
            return got

        texts: dict[tuple[int, int], str] = {}
        for span, what, index, attribute, capital in self.puts:
            if what == "noun":
                text = noun_of(index).form
            elif what == "value":
                text = objects[index].attributes[attribute]
                if capital:
                    text = text[:1].upper() + text[1:]
            elif what == "predicate":
                text = relations[index].predicate
            else:
                text = "are" if noun_of(relations[index].subject).plural_verb else "is"
            if texts.setdefault(span, text) != text:
                raise ValueError(f"two bindings write different words at {span}: "
                                 f"{texts[span]!r} and {text!r}")
        agreed: dict[tuple[int, int], tuple] = {}  # article span -> (noun span, new noun)
        settled: dict[tuple[int, int], str] = {}
        for art, noun_span, slot, old, article, inside, around in self.agree:
            new = noun_of(slot)
            if agreed.setdefault(art, (noun_span, new)) != (noun_span, new):
                raise ValueError(f"two phrases share the article at {art} in "
                                 f"{self.caption!r}")
            if art in settled:  # a second phrase of this article: settled by the first
                continue
            if article in ARTICLES:  # indefinite: agree with the words that now follow it
                following = around[0] + "".join(
                    texts[sp] + after for sp, after in zip(inside, around[1:], strict=True))
                article = article_for(new, " ".join(following.split()))
            elif article == "the pair of" and not new.pair:
                article = "the"
            if old[:1].isupper():
                article = article[:1].upper() + article[1:]
            settled[art] = article
        texts.update(settled)
        pieces = self.pieces
        return pieces[0] + "".join(texts[sp] + after
                                   for sp, after in zip(self.spans, pieces[1:], strict=True))


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
    if not check.passed:
        raise ValueError(f"caption failed the check ({', '.join(check.failed)}): no spans to use")
    edits: dict[tuple[int, int], str] = {}
    articles: dict[tuple[int, int], tuple] = {}  # article span -> (noun span, new noun)
    for m in check.matches:
        for ph in m.phrases:
            new = noun(negative.objects[ph.slot].name)
            _put(edits, ph.noun, new.form)
            if ph.value is not None:  # a sentence's first word ("Two cubes") keeps its capital
                value = negative.objects[ph.slot].attributes[m.binding.attribute]
                if caption[ph.value[0]:ph.value[0] + 1].isupper():
                    value = value[:1].upper() + value[1:]
                _put(edits, ph.value, value)
            if articles.setdefault(tuple(ph.article), (tuple(ph.noun), new)) != (
                    tuple(ph.noun), new):
                raise ValueError(f"two phrases share the article at {tuple(ph.article)} in "
                                 f"{caption!r}")
        if m.predicate is not None:
            rel = negative.relations[m.binding.index]
            _put(edits, m.predicate, rel.predicate)
            if m.verb is not None:
                subject = noun(negative.objects[rel.subject].name)
                _put(edits, m.verb, "are" if subject.plural_verb else "is")
    out = _apply(caption, edits)

    def moved(i: int) -> int:  # where position i of the caption is in `out`
        return i + sum(len(t) - (e - s) for (s, e), t in edits.items() if e <= i)

    settled = {}
    for span, (noun_span, new) in articles.items():
        old = caption[span[0]:span[1]]
        article = " ".join(old.lower().split())
        if article in ARTICLES:  # indefinite: agree with the words that now follow it
            following = " ".join(out[moved(span[1]):moved(noun_span[1])].split())
            article = article_for(new, following)
        elif article == "the pair of" and not new.pair:
            article = "the"
        if old[:1].isupper():
            article = article[:1].upper() + article[1:]
        settled[span] = article
    return _apply(caption, {**edits, **settled})


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

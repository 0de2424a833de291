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

from autocomp.captions.check import CheckResult, Phrase
from autocomp.captions.grammar import ARTICLES, Noun, article_for
from autocomp.scene import SceneGraph


def substitute(caption: str, check: CheckResult, negative: SceneGraph,
               noun: Callable[[str], Noun]) -> str:
    """The contextual caption with `negative`'s words written into the matched spans."""
    if not check.passed:
        raise ValueError(f"caption failed the check ({', '.join(check.failed)}): no spans to use")
    edits: dict[tuple[int, int], str] = {}
    for m in check.matches:
        for ph in m.phrases:
            value = None
            if ph.value is not None:
                value = negative.objects[ph.slot].attributes[m.binding.attribute]
            for span, text in _phrase_edits(caption, ph, noun(negative.objects[ph.slot].name),
                                            value):
                _put(edits, span, text)
        if m.predicate is not None:
            rel = negative.relations[m.binding.index]
            _put(edits, m.predicate, rel.predicate)
            if m.verb is not None:
                subject = noun(negative.objects[rel.subject].name)
                _put(edits, m.verb, "are" if subject.plural_verb else "is")
    out = caption
    last = len(caption) + 1
    for (start, end), text in sorted(edits.items(), reverse=True):
        if end > last:
            raise ValueError(f"overlapping matched spans in {caption!r}")
        out = out[:start] + text + out[end:]
        last = start
    return out


def _phrase_edits(caption: str, ph: Phrase, new: Noun, value: str | None):
    yield ph.noun, new.form
    if value is not None:
        yield ph.value, value
    old_article = caption[ph.article[0]:ph.article[1]]
    article = " ".join(old_article.lower().split())
    if article in ARTICLES:  # indefinite: agree with the new words
        following = " ".join(w for w in (
            caption[slice(*ph.modifier)] if ph.modifier else None, value, new.form) if w)
        article = article_for(new, following)
    elif article == "the pair of" and not new.pair:
        article = "the"
    if old_article[:1].isupper():
        article = article[:1].upper() + article[1:]
    yield ph.article, article


def _put(edits: dict, span, text: str) -> None:
    span = tuple(span)
    if edits.setdefault(span, text) != text:
        raise ValueError(f"two bindings write different words at {span}: "
                         f"{edits[span]!r} and {text!r}")

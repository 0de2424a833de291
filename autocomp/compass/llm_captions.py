"""COMPASS captions written by an LLM caption writer (transformers, openai) from the
primitives, with the few-shot prompt in prompts/. A caption is kept only if it names every
object, attribute and predicate as whole words (retries with the same prompt otherwise).
Its negatives replace the edited word in place; a primitive whose word is not found exactly
once cannot be localised, and the negative is refused (the caption is then dropped by the
usual rules)."""

from __future__ import annotations

import hashlib
import re

from autocomp.captions.chat import clean_caption
from autocomp.captions.writers import CaptionRequest
from autocomp.core.resources import prompt_text
from autocomp.core.scene import SceneGraph
from autocomp.language.grammar import indefinite_article


def prompt(graph: SceneGraph) -> tuple[str, str]:
    objs = ", ".join(f"{o.name} ({', '.join(o.attributes)})" if o.attributes else o.name
                     for o in graph.objects)
    rels = "; ".join(f"{graph.objects[r.subject].name} / {r.predicate} / "
                     f"{graph.objects[r.object].name}" for r in graph.relations) or "none"
    return (prompt_text("compass_caption_system.txt").strip(),
            prompt_text("compass_caption_user.txt").format(objects=objs, relations=rels).strip())


def _find(caption: str, phrase: str) -> list[re.Match]:
    return list(re.finditer(rf"(?<![\w-]){re.escape(phrase)}(?![\w-])", caption, re.I))


def mentions_all(caption: str, graph: SceneGraph) -> bool:
    words = [o.name for o in graph.objects] + [a for o in graph.objects for a in o.attributes]
    words += [r.predicate for r in graph.relations]
    return all(_find(caption, w) for w in words)


def substitute(graph: SceneGraph, caption: str, neg_graph: SceneGraph, edit: dict) -> str | None:
    """The caption with the edited primitive's word replaced, its article re-agreed."""
    hits = _find(caption, edit["from"])
    if len(hits) != 1:
        return None
    m = hits[0]
    new = edit["to"]
    before = caption[:m.start()]
    art = re.search(r"(?<![\w-])(a|an|A|An)\s+$", before)
    if art:  # "a sofa" -> "an armchair", "a red sofa" -> "an orange sofa"
        word = indefinite_article(new)
        word = word.capitalize() if art.group(1)[0].isupper() else word
        before = before[:art.start(1)] + word + before[art.end(1):]
    return before + new + caption[m.end():]


def write_captions(writer, graphs: list[tuple[str, SceneGraph]], retries: int = 2) -> dict:
    """key -> caption (None when no attempt named every primitive)."""
    out: dict[str, str | None] = {}
    pending = list(graphs)
    for attempt in range(retries + 1):
        if not pending:
            break
        reqs = []
        for key, g in pending:
            system, user = prompt(g)
            seed = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16)
            reqs.append(CaptionRequest(key, g, None, seed, attempt, system, user))
        texts = writer.write(reqs)
        still = []
        for (key, g), text in zip(pending, texts, strict=True):
            text = clean_caption(text)
            if text and mentions_all(text, g):
                out[key] = text
            else:
                still.append((key, g))
        pending = still
    for key, _ in pending:
        out[key] = None
    return out


EXAMPLES = {"O": ("object", "sofa", "chair, bed, table, bench, stool, desk, lamp, cabinet, "
                                    "dresser, ottoman"),
            "A": ("attribute", "dark brown", "white, light gray, red, blue, green, yellow, "
                                             "pink, black, orange, purple"),
            "R": ("relation", "on", "under, beside, behind, in front of, above, below, "
                                    "next to, inside, near, across from")}


class LLMCandidates:
    """Replacement candidates proposed by an LLM writer, asked once per primitive and
    cached (COMPASS appendix A); asked again (`more`, up to REQUERIES times, sampling anew)
    when none of its candidates can be used; the vocabulary's own primitives when it
    proposes none at all."""

    REQUERIES = 2

    def __init__(self, writer, fallback):
        self.writer, self.fallback, self.cache = writer, fallback, {}
        self.asked: dict[tuple[str, str], int] = {}

    def _ask(self, primitive: str, value: str, attempt: int) -> list[str]:
        name, example, answer = EXAMPLES[primitive]
        user = prompt_text("compass_candidates.txt").format(
            kind=name, value=value, example=example, example_answer=answer)
        seed = int(hashlib.sha256(f"{primitive}:{value}:{attempt}".encode()).hexdigest()[:8], 16)
        text = self.writer.write([CaptionRequest(f"{primitive}:{value}", None, None, seed, attempt,
                                                 "You propose words.", user)])[0]
        self.asked[(primitive, value)] = attempt + 1
        words = [" ".join(w.lower().strip(" .\"'").split())
                 for w in re.split(r"[,\n;]", text or "")]
        return [w for w in dict.fromkeys(words) if w and w != value and len(w) < 40]

    def __call__(self, primitive: str, value: str) -> list[str]:
        key = (primitive, value)
        if key not in self.cache:
            self.cache[key] = self._ask(primitive, value, 0) or self.fallback(primitive, value)
        return self.cache[key]

    def more(self, primitive: str, value: str) -> list[str]:
        """New proposals when none of the cached ones survived (COMPASS re-queries)."""
        out: list[str] = []
        while not out and self.asked.get((primitive, value), 0) <= self.REQUERIES:
            known = set(self.cache.get((primitive, value), []))
            out = [w for w in self._ask(primitive, value, self.asked.get((primitive, value), 0))
                   if w not in known]
        return out

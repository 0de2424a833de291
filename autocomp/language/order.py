"""Word-order perturbations of a caption (ARO's COCO-Order and Flickr30k-Order, Yuksekgonul
et al. 2023), written from the paper's description:

  nouns_adjectives   the nouns shuffled among themselves, the adjectives among themselves
  all_but            every word that is not a noun or an adjective shuffled among those
  within_trigrams    the tokens cut into consecutive trigrams, each shuffled inside
  trigrams           the trigrams shuffled as wholes

Part-of-speech tags (Penn Treebank: NN*, JJ*) come from the rule-based tagger TextBlob
ships (pattern's English lexicon, no download). The authors' orders are random and not
released, so each perturbation draws from a random generator seeded by (seed, item):
a benchmark is scored under several seeds and averaged. Every caption, the positive and
its perturbations, is then normalised as the authors' loader does (`pre_caption`:
lowercase, the marks .!"()*#:;~ removed, spaces collapsed, cut to 30 words).
"""

from __future__ import annotations

import random
import re
from functools import lru_cache

from autocomp.core.backend import require

PERTURBATIONS = ("nouns_adjectives", "all_but", "within_trigrams", "trigrams")
NOUN = ("NN", "NNS", "NNP", "NNPS")
ADJ = ("JJ", "JJR", "JJS")


def pre_caption(text: str, max_words: int = 30) -> str:
    text = re.sub(r"[.!\"()*#:;~]", " ", text.lower())
    return " ".join(text.split()[:max_words])


@lru_cache(maxsize=1)
def _tagger():
    taggers = require("textblob.en.taggers", "formats", "ARO's word-order perturbations")
    return taggers.PatternTagger()


@lru_cache(maxsize=1 << 16)
def tagged(text: str) -> tuple[tuple[str, str], ...]:
    """(token, Penn Treebank tag) pairs, punctuation kept as tokens (each caption tagged
    once, whatever the seed and the perturbation)."""
    return tuple((w, t) for w, t in _tagger().tag(text, tokenize=True))


def _shuffle_where(tokens: list[str], picks: list[int], rng: random.Random) -> list[str]:
    out = list(tokens)
    moved = [tokens[i] for i in picks]
    rng.shuffle(moved)
    for i, word in zip(picks, moved, strict=True):
        out[i] = word
    return out


def _trigrams(tokens: list[str]) -> list[list[str]]:
    return [tokens[i:i + 3] for i in range(0, len(tokens), 3)]


def perturb(text: str, how: str, rng: random.Random) -> str:
    pairs = tagged(text)
    tokens = [w for w, _ in pairs]
    if how == "nouns_adjectives":
        out = _shuffle_where(tokens, [i for i, (_, t) in enumerate(pairs) if t in NOUN], rng)
        out = _shuffle_where(out, [i for i, (_, t) in enumerate(pairs) if t in ADJ], rng)
    elif how == "all_but":
        out = _shuffle_where(tokens, [i for i, (_, t) in enumerate(pairs)
                                      if t not in NOUN + ADJ], rng)
    elif how == "within_trigrams":
        groups = _trigrams(tokens)
        for g in groups:
            rng.shuffle(g)
        out = [w for g in groups for w in g]
    elif how == "trigrams":
        groups = _trigrams(tokens)
        rng.shuffle(groups)
        out = [w for g in groups for w in g]
    else:
        raise ValueError(f"unknown perturbation {how!r} (known: {', '.join(PERTURBATIONS)})")
    return " ".join(out)


def perturbations(text: str, seed: int, key: str) -> list[str]:
    """The four perturbed orders of `text` (normalised), the same for (seed, key)."""
    out = []
    for how in PERTURBATIONS:
        rng = random.Random(f"autocomp:order:{seed}:{key}:{how}")
        out.append(pre_caption(perturb(text, how, rng)))
    return out

"""Multiple-choice test takers: a model reads an item's shuffled captions as options and names
one. Two families share this loop:

  blind:choice@ID     the paper's blind baseline (Auto-Comp Table 9): a text-only chat LLM,
                      image unseen, options numbered 1..K
  vlm:ID              a generative VLM (Auto-Comp Table 7): sees the image, options
                      lettered A..Z, AA..AX (vlm.py)

Items with more than 49 negatives (confusion) are shown the positive and 49 negatives drawn
with a seed from the item id; the others are not shown, score -inf, and the chance row of
the harness counts only the 50 shown (2.0%). The order is shuffled per item (seeded). An
answer that names no option is asked once more, with a reminder of the labels; after that
the item is scored wrong (the positive 0, every shown negative 1). The scorer counts
questions, retries and invalid answers (`stats`, written into the result JSON).
"""

from __future__ import annotations

import hashlib
import random
import re
import string

import numpy as np

from autocomp.core.errors import AutocompError
from autocomp.eval.scorers.base import ItemScorer

MAX_OPTIONS = 50  # the positive + 49 negatives, as the paper subsamples confusion


def _seed(*parts) -> int:
    return int(hashlib.sha256(":".join(map(str, parts)).encode()).hexdigest()[:8], 16)


def parse_choice(answer: str | None, k: int) -> int | None:
    """The first number 1..k in the answer (0-based index), or None."""
    for m in re.finditer(r"\d+", answer or ""):
        v = int(m.group())
        if 1 <= v <= k:
            return v - 1
    return None


def letters(k: int) -> list[str]:
    """Option labels A..Z, then AA, AB, ... (50 options end at AX)."""
    up = string.ascii_uppercase
    return [up[i] if i < 26 else up[i // 26 - 1] + up[i % 26] for i in range(k)]


# "answer/option [is] X": a capital label anywhere, a small one only before punctuation or
# the end ("the answer is a red cube" names no option; "answer: b" names B)
_NAMED = re.compile(r"(?i:\b(?:answer|option|choice)\b(?:\s+is)?)\s*[:\-]?\s*\(?\**"
                    r"(?:([A-Z]{1,2})\b|([a-z]{1,2})(?=\s*(?:$|[).:,*])))")


def parse_letter(answer: str | None, k: int, options: list[str] | None = None) -> int | None:
    """The option an answer names (0-based), or None. Read in this order: the whole answer
    is a label ("B", "(b)", "AC."); "answer/option [is] X"; a label opening the answer ("B.
    a red cube ..."); the answer is exactly one option's caption. A lone article "A" inside
    a sentence is not read as a label."""
    labels = letters(k)
    index = {lab: i for i, lab in enumerate(labels)}
    text = " ".join((answer or "").split())
    bare = text.strip(" .:)(*[]'\"").upper()
    if bare in index:
        return index[bare]
    m = _NAMED.search(text)
    if m and (m.group(1) or m.group(2)).upper() in index:
        return index[(m.group(1) or m.group(2)).upper()]
    m = re.match(r"\**\(?([A-Z]{1,2})\s*[).:]", text)
    if m and m.group(1) in index:
        return index[m.group(1)]
    if options:
        said = text.strip(" .\"'").lower()
        hits = [i for i, o in enumerate(options) if o.strip(" .").lower() == said]
        if len(hits) == 1:
            return hits[0]
    return None


def shown(item: dict) -> list[int]:
    """Indices (0 = positive) of the candidates put to a test taker: all of them, or the
    positive and 49 negatives drawn with a seed from the item id."""
    n = len(item["negatives"])
    if n + 1 <= MAX_OPTIONS:
        return list(range(n + 1))
    picked = random.Random(_seed("choice-subsample", item["id"])).sample(
        range(1, n + 1), MAX_OPTIONS - 1)
    return [0, *sorted(picked)]


def option_order(item: dict) -> list[int]:
    """The shown candidates in the order they are put (seeded by the item id); the human
    review page puts the same options in the same order."""
    order = shown(item)
    random.Random(_seed("choice-order", item["id"])).shuffle(order)
    return order


class ChoiceScorer(ItemScorer):
    """The loop: pick the options, put them, read the answer, retry once, score."""

    stats_keys = ("questions", "retried", "invalid", "subsampled")
    default_batch_size = 16  # prompts of a chat LLM per generate call
    circular = False  # ask every rotation of the options (CircularEval)

    def __init__(self, name, pretrained=None, **kw):
        super().__init__(name, pretrained, **kw)
        self.stats = dict.fromkeys(self.stats_keys, 0)
        self.picked: list[tuple[int, int]] = []  # (options shown, place picked) per answer

    # what a family defines
    def labels(self, k: int) -> list[str]:
        raise NotImplementedError

    def parse(self, answer: str, k: int, options: list[str]) -> int | None:
        raise NotImplementedError

    def prompt(self, options: str, labels: list[str], retry: bool) -> str:
        raise NotImplementedError

    def ask(self, questions: list[tuple]) -> list[str]:
        """Answers to (item, image or None, prompt, attempt) tuples, in order."""
        raise NotImplementedError

    # shared
    def shown(self, item: dict) -> list[int]:
        return shown(item)

    def order(self, item: dict) -> list[int]:
        return option_order(item)

    def position_bias(self, since: int = 0) -> dict | None:
        """position_bias of the answers given after the first `since`."""
        return position_bias(self.picked[since:], self.labels)

    def score_item(self, item, candidates, truth, image=None):
        return self.score_items([(item, candidates, truth, image)])[0]

    def score_items(self, entries: list[tuple]) -> list[list[float]]:
        """Scores for each (item, candidates, truth, image) entry, asked as one batch (the
        retries as a second). Circular: each item is asked once per rotation of its
        options; the positive scores 1 only when every rotation picked it, each negative
        the share of rotations that picked it (an unanswered rotation counts for every
        shown negative), so the item is right only if right under every rotation."""
        from autocomp.eval.items import captions_of

        todo, scores, asked = [], [], []
        for item, _cands, _truth, image in entries:
            texts = captions_of(item)
            order = self.order(item)
            labels = self.labels(len(order))
            s = np.full(len(texts), -np.inf)
            s[order] = 0.0
            scores.append(s)
            turns = rotations(order) if self.circular else [order]
            asked.append(len(turns))
            for turn in turns:
                opts = [texts[c] for c in turn]
                listing = "\n".join(f"{lab}. {t}" for lab, t in zip(labels, opts, strict=True))
                todo.append((len(scores) - 1, item, image, listing, labels, opts, turn))
            self.stats["questions"] += len(turns)
            self.stats["subsampled"] += len(order) < len(texts)
        picks = [[] for _ in scores]
        for attempt in range(2):
            if not todo:
                break
            answers = self.ask([(item, image, self.prompt(listing, labels, attempt > 0),
                                 attempt)
                                for _, item, image, listing, labels, _, _ in todo])
            left = []
            for entry, answer in zip(todo, answers, strict=True):
                pos, _, _, _, labels, opts, turn = entry
                pick = self.parse(answer, len(labels), opts)
                if pick is None:
                    left.append(entry)
                    continue
                picks[pos].append(turn[pick])
                self.picked.append((len(labels), pick))
            self.stats["retried" if attempt == 0 else "invalid"] += len(left)
            todo = left
        for pos, *_, turn in todo:  # no valid answer: counts for every shown negative
            picks[pos] += [c for c in turn if c != 0]
        for s, got, n in zip(scores, picks, asked, strict=True):
            for c in got:
                if c:
                    s[c] += 1.0 / n
            s[0] = 1.0 if got.count(0) == n and len(got) == n else 0.0
        return [s.tolist() for s in scores]


def rotations(order: list[int]) -> list[list[int]]:
    """Every cyclic shift of the options (CircularEval): each one takes every place once."""
    return [order[r:] + order[:r] for r in range(len(order))]


def position_bias(picked: list[tuple[int, int]], labels=letters) -> dict | None:
    """How often each option place was picked, against the count expected were the picks
    spread evenly over the places shown (sum of 1/K over the questions of K options), and
    scipy's chi-square test of the difference. With rotation every place holds the right
    caption equally often, so a difference is the model's preference for a place. None
    when there was no answer."""
    if not picked:
        return None
    from scipy.stats import chisquare

    width = max(k for k, _ in picked)
    observed = np.zeros(width)
    expected = np.zeros(width)
    for k, place in picked:
        observed[place] += 1
        expected[:k] += 1.0 / k
    fit = chisquare(observed, expected) if width > 1 else None
    return {"n": len(picked), "labels": labels(width), "observed": observed.astype(int).tolist(),
            "expected": [round(float(e), 3) for e in expected],
            "first_share": round(float(observed[0] / len(picked)), 4),
            "first_expected": round(float(expected[0] / len(picked)), 4),
            "chi2": None if fit is None else round(float(fit.statistic), 4),
            "p": None if fit is None else float(fit.pvalue)}


SYSTEM = ("You are taking a multiple-choice test about images. You cannot see the image. "
          "Answer with the number of one option and nothing else.")
USER = ("One of these captions is the true description of an image; the others were made "
        "from it by changing words. Which one is the true caption?\n\n{options}\n\n"
        "Answer with the option number only.")
USER_RETRY = "\n\nYour answer must be one number from 1 to {k}, nothing else."


class MultipleChoice(ChoiceScorer):
    """blind:choice -- a text-only chat LLM (transformers id or folder, or openai:MODEL)."""

    family = "blind"

    def __init__(self, name, pretrained=None, **kw):
        super().__init__(name, pretrained, **kw)
        if not pretrained:
            raise AutocompError("blind:choice needs a model: blind:choice@<transformers id or "
                                "path>, blind:choice@openai:<served model>")
        backend, sep, model = pretrained.partition(":")
        if not sep or backend not in ("transformers", "openai"):
            backend, model = "transformers", pretrained
        self.backend, self.model = backend, model
        self._writer = None

    def writer(self):
        if self._writer is None:
            if self.backend == "openai":
                from autocomp.captions.openai_writer import OpenAIWriter

                self._writer = OpenAIWriter(self.model, max_tokens=8)
            else:
                from autocomp.captions.llm import TransformersWriter

                self._writer = TransformersWriter(self.model, max_new_tokens=8,
                                                  batch_size=self.batch_size,
                                                  device=self.device)
        return self._writer

    def _load(self):
        if self.backend != "openai":
            self.writer()._load()

    def labels(self, k):
        return [str(i + 1) for i in range(k)]

    def parse(self, answer, k, options):
        return parse_choice(answer, k)

    def prompt(self, options, labels, retry):
        return USER.format(options=options) + (USER_RETRY.format(k=len(labels)) if retry
                                               else "")

    def ask(self, questions):
        from autocomp.captions.writers import CaptionRequest

        reqs = [CaptionRequest(item["id"], None, None, _seed("choice", item["id"]), attempt,
                               SYSTEM, prompt)
                for item, _image, prompt, attempt in questions]
        return self.writer().write(reqs)

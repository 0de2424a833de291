"""blind:choice -- the paper's blind baseline (Auto-Comp Table 9): a text-only LLM picks, among
the item's shuffled captions, the one most likely to describe an image it cannot see.

  blind:choice@google/gemma-3-12b-it        a chat model through transformers (id or folder)
  blind:choice@transformers:/weights/llm    the same, backend named
  blind:choice@openai:MODEL                 an OpenAI-compatible server ($OPENAI_BASE_URL)

Items with more than 49 negatives (confusion) are shown the positive and 49 negatives drawn
with a seed from the item id; the others are not shown, score -inf, and the chance row of
the harness counts only the 50 shown (2.0%). Options are numbered 1..K in an order shuffled
per item (seeded). An answer that names no option number is retried once (sampling anew);
after that the item is scored wrong (the positive 0, every shown negative 1). The scorer
counts questions, retries and invalid answers (`stats`, written into the result JSON).
"""

from __future__ import annotations

import hashlib
import random
import re

import numpy as np

from autocomp.errors import AutocompError
from autocomp.eval.scorers.base import ItemScorer

MAX_OPTIONS = 50  # the positive + 49 negatives, as the paper subsamples confusion
SYSTEM = ("You are taking a multiple-choice test about images. You cannot see the image. "
          "Answer with the number of one option and nothing else.")
USER = ("One of these captions is the true description of an image; the others were made "
        "from it by changing words. Which one is the true caption?\n\n{options}\n\n"
        "Answer with the option number only.")


def _seed(*parts) -> int:
    return int(hashlib.sha256(":".join(map(str, parts)).encode()).hexdigest()[:8], 16)


def parse_choice(answer: str | None, k: int) -> int | None:
    """The first number 1..k in the answer (0-based index), or None."""
    for m in re.finditer(r"\d+", answer or ""):
        v = int(m.group())
        if 1 <= v <= k:
            return v - 1
    return None


class MultipleChoice(ItemScorer):
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
        self.stats = {"questions": 0, "retried": 0, "invalid": 0, "subsampled": 0}

    def writer(self):
        if self._writer is None:
            if self.backend == "openai":
                from autocomp.captions.openai_writer import OpenAIWriter

                self._writer = OpenAIWriter(self.model, max_tokens=8)
            else:
                from autocomp.captions.llm import TransformersWriter

                self._writer = TransformersWriter(self.model, max_new_tokens=8,
                                                  batch_size=1, device=self.device)
        return self._writer

    def shown(self, item: dict) -> list[int]:
        """Indices (0 = positive) of the candidates put to the model."""
        n = len(item["negatives"])
        if n + 1 <= MAX_OPTIONS:
            return list(range(n + 1))
        picked = random.Random(_seed("choice-subsample", item["id"])).sample(
            range(1, n + 1), MAX_OPTIONS - 1)
        return [0, *sorted(picked)]

    def score_item(self, item, candidates, truth):
        from autocomp.captions.writers import CaptionRequest

        texts = [item["positive"], *(x["caption"] for x in item["negatives"])]
        shown = self.shown(item)
        order = shown[:]
        random.Random(_seed("choice-order", item["id"])).shuffle(order)
        options = "\n".join(f"{i + 1}. {texts[c]}" for i, c in enumerate(order))
        self.stats["questions"] += 1
        self.stats["subsampled"] += len(shown) < len(texts)
        scores = np.full(len(texts), -np.inf)
        scores[shown] = 0.0
        for attempt in range(2):
            req = CaptionRequest(item["id"], None, None, _seed("choice", item["id"]), attempt,
                                 SYSTEM, USER.format(options=options))
            pick = parse_choice(self.writer().write([req])[0], len(order))
            if pick is not None:
                scores[order[pick]] = 1.0
                return scores.tolist()
            self.stats["retried" if attempt == 0 else "invalid"] += 1
        scores[[c for c in shown if c != 0]] = 1.0  # no valid answer: scored wrong
        return scores.tolist()

"""Blind baselines: text-only scorers that never see the image (Auto-Comp Table 9). If one
beats chance, the captions carry a linguistic artifact that gives the positive away.

  unigram   the sum of log10 word frequencies (wordfreq, English; its data ships with the
            package): prefers captions of common words
  distinct  the number of distinct words: the "never repeat a word" shortcut. A confusion
            positive never repeats an object or a value, many negatives do, so this rule
            beats chance on Confusion without the image (ties with every all-distinct
            negative): the ceiling a text-only shortcut reaches there
  length    the number of words: prefers longer captions (a negative that adds or drops
            words gives itself away)
  lm@ID     a causal language model (any transformers id or local path): the caption's
            total log-likelihood after the BOS token
  perplexity@ID  VALSE's unimodal baseline, as its authors compute it: the model's
            perplexity of the caption with a stride of 3 tokens, lower wins
  choice@ID the paper's blind baseline: a chat LLM picks among the shuffled captions
            (confusion subsampled to 49 negatives + the positive); see choice.py
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np

from autocomp.core.backend import require
from autocomp.core.errors import AutocompError
from autocomp.core.families import contract_example
from autocomp.eval.scorers.base import TextScorer
from autocomp.models.hub import fingerprint

# words as the audit reads them (autocomp/audit.py): numerals are words ("3 dogs" and "4
# dogs" must not become the same caption: VALSE's counting foils change only a numeral)
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


class Unigram(TextScorer):
    family = "blind"
    light = True

    def __init__(self, name, pretrained=None, **kw):
        super().__init__(name, pretrained, **kw)
        self._log10 = _Log10Frequency()  # a caption list repeats a few hundred words

    def score_texts(self, texts: Sequence[str]) -> np.ndarray:
        get = self._log10.__getitem__
        return np.array([[sum(map(get, _WORD.findall(t.lower())))] for t in texts],
                        dtype=np.float32)


class _Log10Frequency(dict):
    """word -> log10 of its English frequency (wordfreq, 1e-8 at least), looked up once."""

    def __missing__(self, word: str) -> float:
        freq = require("wordfreq", "", "blind:unigram").word_frequency
        got = self[word] = math.log10(freq(word, "en", minimum=1e-8))
        return got


class DistinctWords(TextScorer):
    family = "blind"
    light = True

    def score_texts(self, texts: Sequence[str]) -> np.ndarray:
        return np.array([[len(set(_WORD.findall(t.lower())))] for t in texts],
                        dtype=np.float32)


class Length(TextScorer):
    family = "blind"
    light = True

    def score_texts(self, texts: Sequence[str]) -> np.ndarray:
        return np.array([[len(_WORD.findall(t.lower()))] for t in texts], dtype=np.float32)


class CausalLM(TextScorer):
    family = "blind"

    def __init__(self, name, pretrained=None, **kw):
        super().__init__(name, pretrained, **kw)
        if not pretrained:
            raise AutocompError(f"blind:{name} needs a model: blind:{name}@<transformers id "
                                f"or path> (e.g. blind:{name}@gpt2)")
        self._model = self._tok = None

    @property
    def cache_id(self) -> str:
        return f"{self.spec}#{fingerprint(self.pretrained)}"

    def _load(self):
        if self._model is None:
            from autocomp.models.hub import load_scoring_lm

            self._tok, self._model = load_scoring_lm(self.pretrained, self.device)
        return self._tok, self._model

    def score_texts(self, texts: Sequence[str]) -> np.ndarray:
        from autocomp.models.lm import sequence_logprobs

        tok, model = self._load()
        scores = sequence_logprobs(tok, model, texts, self.batch_size)
        return np.array([[total] for total, _ in scores], dtype=np.float32)


class StridedPerplexity(CausalLM):
    """VALSE's unimodal baseline as its authors compute it: GPT perplexity with a stride of
    3 tokens (models/lm.py strided_perplexity); the lower perplexity wins. A caption of 3
    tokens or fewer has an infinite perplexity there; here it scores below every other
    (and ties another such), as their comparison does."""

    def score_texts(self, texts: Sequence[str]) -> np.ndarray:
        from autocomp.models.lm import strided_perplexity, token_nlls

        tok, model = self._load()
        out = []
        for t in texts:
            ppl = strided_perplexity(token_nlls(tok, model, t))
            out.append([-ppl if math.isfinite(ppl) else -1e30])
        return np.array(out, dtype=np.float32)


@contract_example("blind:unigram", "blind:distinct", "blind:length", "blind:lm@{tiny:lm}")
def make_blind(name, pretrained=None, **kw):
    from autocomp.eval.scorers.choice import MultipleChoice

    blind = {"unigram": Unigram, "distinct": DistinctWords, "length": Length,
             "lm": CausalLM, "perplexity": StridedPerplexity, "choice": MultipleChoice}
    if name not in blind:
        raise AutocompError(f"unknown blind scorer '{name}' (known: unigram, distinct, "
                            "length, lm@MODEL, perplexity@MODEL, choice@MODEL)")
    return blind[name](name, pretrained, **kw)

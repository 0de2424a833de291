"""Blind baselines: text-only scorers that never see the image (Auto-Comp Table 9). If one
beats chance, the captions carry a linguistic artifact that gives the positive away.

  unigram   the sum of log10 word frequencies (wordfreq, English; its data ships with the
            package): prefers captions of common words
  distinct  the number of distinct words: the "never repeat a word" shortcut. A confusion
            positive never repeats an object or a value, many negatives do, so this rule
            beats chance on Confusion without the image (ties with every all-distinct
            negative): the ceiling a text-only shortcut reaches there
  lm@ID     a causal language model (any transformers id or local path): the caption's
            total log-likelihood after the BOS token
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from autocomp.errors import AutocompError
from autocomp.eval.scorers.base import TextScorer, fingerprint

_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


class Unigram(TextScorer):
    family = "blind"

    def score_texts(self, texts: Sequence[str]) -> np.ndarray:
        try:
            from wordfreq import word_frequency
        except ImportError:
            raise AutocompError("blind:unigram needs wordfreq: pip install "
                                "'autocomp[eval]'") from None
        return np.array([[sum(np.log10(word_frequency(w, "en", minimum=1e-8))
                              for w in _WORD.findall(t.lower()))] for t in texts],
                        dtype=np.float32)


class DistinctWords(TextScorer):
    family = "blind"

    def score_texts(self, texts: Sequence[str]) -> np.ndarray:
        return np.array([[len(set(_WORD.findall(t.lower())))] for t in texts],
                        dtype=np.float32)


class CausalLM(TextScorer):
    family = "blind"

    def __init__(self, name, pretrained=None, **kw):
        super().__init__(name, pretrained, **kw)
        if not pretrained:
            raise AutocompError("blind:lm needs a model: blind:lm@<transformers id or path> "
                                "(e.g. blind:lm@gpt2)")
        self._model = self._tok = None

    @property
    def cache_id(self) -> str:
        return f"{self.spec}#{fingerprint(self.pretrained)}"

    def _load(self):
        if self._model is None:
            from autocomp.eval.scorers.loading import hf_load

            self._tok, self._model = hf_load(self.pretrained, "causal-lm", self.device)
        return self._tok, self._model

    def score_texts(self, texts: Sequence[str]) -> np.ndarray:
        import torch

        tok, model = self._load()
        bos = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
        out = []
        for i in range(0, len(texts), self.batch_size):
            batch = list(texts[i:i + self.batch_size])
            enc = tok(batch, add_special_tokens=False)
            seqs = [[bos, *ids] for ids in enc["input_ids"]]
            width = max(len(s) for s in seqs)
            pad = tok.pad_token_id if tok.pad_token_id is not None else 0
            ids = torch.tensor([s + [pad] * (width - len(s)) for s in seqs])
            mask = torch.tensor([[1] * len(s) + [0] * (width - len(s)) for s in seqs])
            with torch.inference_mode():
                logits = model(input_ids=ids.to(self.device),
                               attention_mask=mask.to(self.device)).logits.float()
            logp = torch.log_softmax(logits[:, :-1], dim=-1)
            target = ids[:, 1:].to(logp.device)
            picked = logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
            picked = picked * mask[:, 1:].to(picked.device)
            out.extend(picked.sum(dim=1).cpu().tolist())
        return np.array(out, dtype=np.float32)[:, None]


def make_blind(name, pretrained=None, **kw):
    blind = {"unigram": Unigram, "distinct": DistinctWords, "lm": CausalLM}
    if name not in blind:
        raise AutocompError(f"unknown blind scorer '{name}' (known: unigram, distinct, "
                            "lm@MODEL)")
    return blind[name](name, pretrained, **kw)

"""Generative VLMs scored by likelihood: one number per (image, caption), so they get whole
image x caption matrices (Winoground's text, image and group scores; every table of the
dual encoders) instead of a letter among shuffled options.

  vqascore:google/gemma-3-12b-it    VQAScore (Lin et al. 2024): P("Yes" | image, 'Does
                                    this figure show "{caption}"? Please answer yes or no.')
  vqascore:openai:MODEL             the same from an OpenAI-compatible server that returns
                                    log-probabilities (top 20 first tokens; "Yes" not among
                                    them scores 0 and is counted)
  vqascore:vllm:MODEL               the same rows through vLLM's offline engine, the answer's
                                    tokens read from its prompt log-probabilities (exact,
                                    like transformers; pip install 'autocomp[vllm]')
  visualgpt:google/gemma-3-12b-it   VisualGPTScore (Lin et al. 2023): the caption's mean
                                    token log-probability as the answer to "Describe this
                                    image in one sentence." (transformers or vllm: a
                                    chat server cannot score a given answer)

The probability of an answer is the product of its tokens' probabilities (a tokenizer may
split "Yes"); every token is scored as the tokenizer gives it alone, after the chat
template's generation prompt. An image's captions go through the model in batches of
`batch_size` rows that share one pass of its vision tower (models/likelihood.py); the
harness caches each (image content, caption) score.
"""

from __future__ import annotations

import math

import numpy as np

from autocomp.core.errors import AutocompError
from autocomp.core.families import contract_example
from autocomp.eval.scorers.base import PairScorer
from autocomp.eval.scorers.vlm import model_ref

VQA_QUESTION = 'Does this figure show "{caption}"? Please answer yes or no.'
VQA_ANSWER = "Yes"
CAPTION_PROMPT = "Describe this image in one sentence."
TOP_LOGPROBS = 20


class Likelihood(PairScorer):
    """The shared loop: rows of (image, prompt, answer), log-probabilities, one number."""

    default_batch_size = 16  # rows per forward pass (an image with each caption)
    stats_keys = ("pairs",)

    def __init__(self, name, pretrained=None, **kw):
        super().__init__(name, pretrained, **kw)
        self.backend, self.model = model_ref(self.family, name, pretrained)
        self.stats = dict.fromkeys(self.stats_keys, 0)
        self._pair = self._client = None

    def _load(self):
        if self.backend == "transformers" and self._pair is None:
            from autocomp.models.loading import load_vlm

            self._pair = load_vlm(self.model, self.device)
        return self._pair

    def row(self, caption: str) -> tuple[str, str]:
        """(prompt, answer) whose log-probability scores `caption`."""
        raise NotImplementedError

    def reduce(self, logprobs: list[float]) -> float:
        raise NotImplementedError

    def score_pairs(self, jobs):
        from autocomp.models.encode_once import groups

        rows, owner = [], []
        for j, (pil, captions) in enumerate(jobs):
            rows += [(pil, *self.row(c)) for c in captions]
            owner += [j] * len(captions)
        self.stats["pairs"] += len(rows)
        if self.backend == "openai":
            flat = self._served(rows)
        elif self.backend == "vllm":
            if self._client is None:
                from autocomp.validators.vqa_vllm import VLLMAnswerer

                self._client = VLLMAnswerer(self.model, device=self.device)
            flat = [self.reduce(lp) for lp in self._client.reply_logprobs(rows)]
        else:
            from autocomp.models.likelihood import continuation_logprobs

            proc, model = self._load()
            bs = self.batch_size
            flat = []
            for i in range(0, len(rows), bs):
                part = rows[i:i + bs]
                logprobs = continuation_logprobs(proc, model, part,
                                                 groups(owner[i:i + bs]))
                flat += [self.reduce(lp) for lp in logprobs]
        out, at = [], 0
        for _, captions in jobs:
            out.append(np.asarray(flat[at:at + len(captions)], dtype=np.float64))
            at += len(captions)
        return out

    def _served(self, rows) -> list[float]:
        raise AutocompError(f"{self.family}:openai: a chat server cannot score a given "
                            f"answer; use {self.family}:<transformers id or folder>")


@contract_example("vqascore:{tiny:gemma_vlm}")
class VQAScore(Likelihood):
    family = "vqascore"
    stats_keys = ("pairs", "yes_unlisted")

    def row(self, caption):
        return VQA_QUESTION.format(caption=caption), VQA_ANSWER

    def reduce(self, logprobs):
        return math.exp(sum(logprobs))

    def _served(self, rows):
        from autocomp.models.chat import ChatClient
        from autocomp.validators.vqa import image_chats

        if self._client is None:
            self._client = ChatClient(self.model)
        client = self._client
        convs = image_chats([(pil, prompt) for pil, prompt, _ in rows])
        out = []
        for listed in client.first_logprobs_many(convs, TOP_LOGPROBS):
            if listed is None:
                raise AutocompError(f"the chat server at {client.base_url} returned no "
                                    f"log-probabilities for '{self.model}' (vqascore needs "
                                    "logprobs=true and top_logprobs)")
            if VQA_ANSWER in listed:
                out.append(math.exp(listed[VQA_ANSWER]))
            else:  # below the 20 likeliest: scored 0, counted
                self.stats["yes_unlisted"] += 1
                out.append(0.0)
        return out


@contract_example("visualgpt:{tiny:gemma_vlm}")
class VisualGPTScore(Likelihood):
    family = "visualgpt"

    def row(self, caption):
        return CAPTION_PROMPT, caption

    def reduce(self, logprobs):
        return float(np.mean(logprobs)) if logprobs else -math.inf

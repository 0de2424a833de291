"""`openai` caption writer: the paper's prompts sent to any OpenAI-compatible chat server.
Sampling as in the paper (temperature 0.7, top_p 0.9, max_tokens 150); each request carries
a seed from the concept and the attempt, which servers that honour `seed` (vLLM) use."""

from __future__ import annotations

from collections.abc import Sequence

from autocomp.captions.chat import clean_caption, messages
from autocomp.core.backend import Backend
from autocomp.core.errors import AutocompError
from autocomp.core.families import contract_example
from autocomp.models.chat import ChatClient


@contract_example(model="m", base_url="{openai}")
class OpenAIWriter(Backend):
    gpu_cost = "served"  # a model in its own server (core/backend.Backend.gpu_cost)
    extra = "openai"
    forwards_options_to = ChatClient.__init__
    run_options = ("timeout", "max_retries", "concurrency")

    def __init__(self, model: str = "google/gemma-3-12b-it", temperature: float = 0.7,
                 top_p: float = 0.9, max_tokens: int = 150, **client):
        self.chat = ChatClient(model, **client)
        self.params = {"temperature": float(temperature), "top_p": float(top_p),
                       "max_tokens": max_tokens}

    @classmethod
    def validate_options(cls, out: dict, *, file=None, field="options") -> None:
        if out.get("concurrency", 1) < 1 or out.get("max_retries", 0) < 0:
            raise AutocompError("concurrency must be >= 1 and max_retries >= 0", file=file,
                                field=field)

    def write(self, requests: Sequence) -> list[str]:
        convs = [messages(r.system, r.user) for r in requests]
        params = [{**self.params, "seed": (int(r.seed) + 7919 * r.attempt) % 2**31}
                  for r in requests]
        return [clean_caption(t) for t in self.chat.complete_many(convs, params)]

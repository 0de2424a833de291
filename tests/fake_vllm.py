"""A stand-in for the vllm package, which needs a GPU: vllm.LLM's surface as autocomp's vllm
backends use it (get_tokenizer, generate with token-id prompts, llm_engine.shutdown). It
records what it was given and answers deterministically from each prompt's tokens and
sampling settings, so the backend contracts (same batch, same answers; a batch answers as
one by one) run on the CPU. The real engine runs in tests/test_gpu_real.py."""

import os
import sys
import types


class FakeEngine:
    made: list = []

    def __init__(self, **kwargs):
        self.kwargs, self.visible = kwargs, os.environ.get("CUDA_VISIBLE_DEVICES")
        self.invariant = os.environ.get("VLLM_BATCH_INVARIANT")
        self.calls, self.stopped = [], False
        self.llm_engine = types.SimpleNamespace(shutdown=self._stop)
        FakeEngine.made.append(self)

    def _stop(self):
        self.stopped = True

    def get_tokenizer(self):
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(self.kwargs["model"])

    def generate(self, prompts, params, use_tqdm=True):
        self.calls.append((prompts, params))
        each = params if isinstance(params, list) else [params] * len(prompts)
        return [types.SimpleNamespace(
            outputs=[types.SimpleNamespace(text=f'Caption: "answer {_digest(p, s)}"')],
            prompt_token_ids=p["prompt_token_ids"], prompt_logprobs=None)
            for p, s in zip(prompts, each, strict=True)]


def _digest(prompt: dict, params: dict) -> int:
    return (sum(prompt["prompt_token_ids"]) + int(params.get("seed") or 0)) % 9973


def install(monkeypatch) -> types.ModuleType:
    module = types.ModuleType("vllm")
    module.LLM = FakeEngine
    module.SamplingParams = lambda **kw: kw
    monkeypatch.setitem(sys.modules, "vllm", module)
    FakeEngine.made = []
    return module

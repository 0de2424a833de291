"""`vllm` caption writer: the transformers writer's model, prompts and sampling settings
(temperature 0.7, top_p 0.9, max_new_tokens 150) through vLLM's offline engine
(models/vllm_engine.py), every request of a batch handed over at once.

The prompts are the same tokens as the transformers writer's (its chat template, no added
special tokens, no padding). Each caption is drawn with vLLM's sampler seeded from the
concept and the attempt (captions/llm.row_seed), so a caption never depends on its batch
and a re-run on the same GPU type and vLLM version repeats it; its tokens are not those of
the transformers writer's RowSampler (another random stream over the same nucleus).
"""

from __future__ import annotations

from collections.abc import Sequence

from autocomp.captions.chat import clean_caption
from autocomp.captions.llm import DEFAULT_MODEL, chat_texts, row_seed
from autocomp.core.backend import Backend
from autocomp.core.errors import AutocompError
from autocomp.core.families import contract_example
from autocomp.models.vllm_engine import EngineUser


@contract_example(model="{tiny:gemma_lm}")
class VLLMWriter(EngineUser, Backend):
    extra = "vllm"
    run_options = ("device", "gpu_memory_utilization")

    def __init__(self, model: str = DEFAULT_MODEL, temperature: float = 0.7, top_p: float = 0.9,
                 max_new_tokens: int = 150, dtype: str = "auto", device: str | None = None,
                 gpu_memory_utilization: float = 0.85, max_model_len: int = 4096,
                 trust_remote_code: bool = False, batch_invariant: bool = True):
        self.model_ref, self.temperature, self.top_p = model, float(temperature), float(top_p)
        self.batch_invariant = bool(batch_invariant)
        self.max_new_tokens, self.dtype, self.device = max_new_tokens, dtype, device
        self.gpu_memory_utilization, self.max_model_len = gpu_memory_utilization, max_model_len
        self.trust_remote_code = trust_remote_code

    @classmethod
    def validate_options(cls, out: dict, *, file=None, field="options") -> None:
        if not 0 < out.get("top_p", 0.9) <= 1:
            raise AutocompError(f"expected (0, 1], got {out['top_p']}", file=file,
                                field=f"{field}.top_p")
        cls.check_share(out, file, field)

    def requests(self, tok, requests: Sequence) -> tuple[list[dict], list[dict]]:
        """(prompts as token ids, sampling settings) per request, for vllm.LLM.generate."""
        prompts = [{"prompt_token_ids": ids} for ids in
                   tok(chat_texts(tok, requests), add_special_tokens=False)["input_ids"]]
        params = [{"temperature": self.temperature, "top_p": self.top_p,
                   "max_tokens": self.max_new_tokens,
                   "seed": row_seed(r.id, r.seed, r.attempt)} for r in requests]
        return prompts, params

    def write(self, requests: Sequence) -> list[str]:
        if not requests:
            return []
        from autocomp.core.backend import require
        from autocomp.models.vllm_engine import sampling_params, texts

        require("vllm", "vllm", "a vllm backend")  # one line, before the engine loads
        engine = self.engine()
        prompts, params = self.requests(engine.get_tokenizer(), requests)
        outputs = engine.generate(prompts, [sampling_params(**p) for p in params],
                                  use_tqdm=False)
        return [clean_caption(t) for t in texts(outputs)]

"""`vllm` answerer and the likelihood scorers' vLLM path: the transformers answerer's model
and questions through vLLM's offline engine (models/vllm_engine.py).

Every prompt is the transformers path's chat (the image, then the text, then the generation
prompt) through the model's own chat template, tokenized by its tokenizer with no added
special tokens: the one image placeholder stays a placeholder, which vLLM expands into the
image's tokens as the transformers processor does. A scored continuation (VQAScore's "Yes",
VisualGPTScore's caption) is appended as its tokens alone, as models/likelihood.py appends
them, and read back from vLLM's prompt_logprobs. Answers decode greedily (temperature 0).
"""

from __future__ import annotations

from collections.abc import Sequence

from autocomp.core.backend import Backend
from autocomp.core.errors import AutocompError
from autocomp.core.families import contract_example
from autocomp.models.vllm_engine import EngineUser
from autocomp.validators.vqa import DEFAULT_MODEL, Asking, Likely


def image_prompts(proc, pairs: Sequence[tuple], continuations: Sequence[str] | None = None):
    """(vllm prompts, continuation token counts) for (PIL image, text) pairs: token ids of
    the chat template's text plus each continuation's own tokens, with the image."""
    tok = getattr(proc, "tokenizer", proc)
    texts = [proc.apply_chat_template(
        [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": text}]}],
        tokenize=False, add_generation_prompt=True) for _, text in pairs]
    prompts, counts = [], []
    for i, ((pil, _), text) in enumerate(zip(pairs, texts, strict=True)):
        ids = list(tok(text, add_special_tokens=False)["input_ids"])
        extra = ([] if continuations is None else
                 list(tok(continuations[i], add_special_tokens=False)["input_ids"]))
        prompts.append({"prompt_token_ids": ids + extra, "multi_modal_data": {"image": pil}})
        counts.append(len(extra))
    return prompts, counts


@contract_example(model="{tiny:gemma_vlm}")
class VLLMAnswerer(Likely, Asking, EngineUser, Backend):
    extra = "vllm"
    run_options = ("device", "gpu_memory_utilization")
    batch_size = 256  # questions handed to the engine at once (it schedules them)
    images = True

    def __init__(self, model: str = DEFAULT_MODEL, max_new_tokens: int = 12, dtype: str = "auto",
                 device: str | None = None, gpu_memory_utilization: float = 0.85,
                 max_model_len: int = 4096, trust_remote_code: bool = False,
                 batch_invariant: bool = True):
        self.model_ref, self.max_new_tokens, self.dtype = model, max_new_tokens, dtype
        self.batch_invariant = bool(batch_invariant)
        self.device, self.trust_remote_code = device, trust_remote_code
        self.gpu_memory_utilization, self.max_model_len = gpu_memory_utilization, max_model_len
        self._proc = None

    @classmethod
    def validate_options(cls, out: dict, *, file=None, field="options") -> None:
        if out.get("max_new_tokens", 1) < 1:
            raise AutocompError("expected >= 1", file=file, field=f"{field}.max_new_tokens")
        cls.check_share(out, file, field)

    def engine(self):
        if self._proc is None:  # the chat template the prompts are built with
            from autocomp.models.loading import load_processor

            self._proc = load_processor(self.model_ref, self.trust_remote_code)
        return super().engine()

    def evidence(self) -> dict:
        return {"model": self.model_ref, "engine": "vllm",
                "dtype": "bfloat16" if self.dtype == "auto" else self.dtype}

    def ask(self, pairs: Sequence[tuple]) -> list[str]:
        if not pairs:
            return []
        from autocomp.models.vllm_engine import sampling_params, texts

        params = sampling_params(temperature=0.0, max_tokens=self.max_new_tokens)
        engine = self.engine()
        prompts, _ = image_prompts(self._proc, pairs)
        return texts(engine.generate(prompts, params, use_tqdm=False))

    def reply_logprobs(self, rows: Sequence[tuple]) -> list[list[float]]:
        """Per (PIL image, prompt, continuation) row, its continuation tokens'
        log-probabilities (the likelihood scorers' vllm path; soft answers)."""
        from autocomp.models.vllm_engine import continuation_logprobs, sampling_params

        params = sampling_params(max_tokens=1, temperature=0.0, prompt_logprobs=1)
        engine = self.engine()
        prompts, counts = image_prompts(self._proc, [(p, q) for p, q, _ in rows],
                                        [c for _, _, c in rows])
        outs = engine.generate(prompts, params, use_tqdm=False)
        return [continuation_logprobs(o, n) for o, n in zip(outs, counts, strict=True)]

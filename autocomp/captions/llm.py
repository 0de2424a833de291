"""`transformers` caption writer: any chat LLM (hub id or local folder), default
google/gemma-3-12b-it, with the paper's prompt and sampling (temperature 0.7, top_p 0.9,
max_new_tokens 150). Batched, left-padded generation; only the generated tokens are
decoded. Retries sample again (a greedy retry would repeat the same failing caption) with
the more insistent prompt, which the write/check/retry loop supplies.

Sampling is seeded per batch (from the batch's concept ids and the attempt): a re-run with
the same batches gives the same captions.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from autocomp.captions.chat import clean_caption, messages
from autocomp.core.backend import Backend
from autocomp.core.errors import AutocompError
from autocomp.models.devices import OnDevice

DEFAULT_MODEL = "google/gemma-3-12b-it"


class TransformersWriter(OnDevice, Backend):
    extra = "gen"

    def __init__(self, model: str = DEFAULT_MODEL, temperature: float = 0.7, top_p: float = 0.9,
                 max_new_tokens: int = 150, batch_size: int = 16, dtype: str = "auto",
                 device: str | None = None, trust_remote_code: bool = False):
        self.model_ref, self.temperature, self.top_p = model, float(temperature), float(top_p)
        self.max_new_tokens, self.batch_size = max_new_tokens, batch_size
        self.dtype, self.device, self.trust_remote_code = dtype, device, trust_remote_code
        self._tok = self._model = None

    @classmethod
    def validate_options(cls, out: dict, *, file=None, field="options") -> None:
        if not 0 < out.get("top_p", 0.9) <= 1:
            raise AutocompError(f"expected (0, 1], got {out['top_p']}", file=file,
                                field=f"{field}.top_p")


    def _load(self):
        if self._model is None:
            from autocomp.models.loading import load_causal_lm

            self.bind_device("auto")
            self._tok, self._model = load_causal_lm(self.model_ref, self.device, self.dtype,
                                                    self.trust_remote_code)
        return self._tok, self._model

    def write(self, requests: Sequence) -> list[str]:
        out = []
        for i in range(0, len(requests), self.batch_size):
            out += self._batch(requests[i:i + self.batch_size])
        return out

    def _batch(self, requests) -> list[str]:
        import torch

        tok, model = self._load()
        prompts = [tok.apply_chat_template(messages(r.system, r.user), tokenize=False,
                                           add_generation_prompt=True) for r in requests]
        enc = tok(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
        enc = {k: v.to(model.device) for k, v in enc.items()}
        key = "|".join(f"{r.id}:{r.attempt}" for r in requests)
        torch.manual_seed(int(hashlib.sha256(key.encode()).hexdigest()[:8], 16))
        with torch.inference_mode():
            generated = model.generate(**enc, do_sample=True, temperature=self.temperature,
                                       top_p=self.top_p, max_new_tokens=self.max_new_tokens,
                                       pad_token_id=tok.pad_token_id)
        new = generated[:, enc["input_ids"].shape[1]:]  # the generated tokens only
        return [clean_caption(t) for t in tok.batch_decode(new, skip_special_tokens=True)]

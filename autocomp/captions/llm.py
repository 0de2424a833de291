"""`transformers` caption writer: any chat LLM (hub id or local folder), default
google/gemma-3-12b-it, with the paper's prompt and sampling (temperature 0.7, top_p 0.9,
max_new_tokens 150). Batched, left-padded generation; only the generated tokens are
decoded. Retries sample again (a greedy retry would repeat the same failing caption) with
the more insistent prompt, which the write/check/retry loop supplies.

Sampling is seeded per caption (from the concept's seed and the attempt), not per batch:
each row draws its tokens with its own generator (RowSampler), so a concept's caption does
not depend on which concepts share its batch or on the batch size. What remains is
numeric: bf16 kernels and padding give slightly different logits in different batches,
which can change a draw that falls on a boundary.
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
        from transformers import LogitsProcessorList

        sampler = RowSampler([row_seed(r.id, r.seed, r.attempt) for r in requests],
                             self.temperature, self.top_p)
        with torch.inference_mode():  # greedy over the sampler's one-hot choice per row
            generated = model.generate(**enc, do_sample=False, temperature=None, top_p=None,
                                       top_k=None, logits_processor=LogitsProcessorList(
                                           [sampler]), max_new_tokens=self.max_new_tokens,
                                       pad_token_id=tok.pad_token_id)
        new = generated[:, enc["input_ids"].shape[1]:]  # the generated tokens only
        return [clean_caption(t) for t in tok.batch_decode(new, skip_special_tokens=True)]


def row_seed(concept_id: str, seed: int, attempt: int) -> int:
    key = f"{concept_id}:{seed}:{attempt}"
    return int(hashlib.sha256(key.encode()).hexdigest()[:15], 16)


class RowSampler:
    """A logits processor that samples each row's next token (temperature, then nucleus
    top_p) with that row's own torch.Generator and leaves only that token possible, so
    greedy decoding emits it: the draw of one caption never depends on its batch."""

    def __init__(self, seeds, temperature: float, top_p: float):
        import torch

        self.generators = [torch.Generator().manual_seed(s) for s in seeds]
        self.temperature, self.top_p = temperature, top_p

    def __call__(self, input_ids, scores):
        import torch

        logits = scores.float().cpu() / max(self.temperature, 1e-6)
        probs = torch.softmax(logits, dim=-1)
        ordered, order = torch.sort(probs, descending=True, dim=-1)
        keep = ordered.cumsum(-1) - ordered < self.top_p  # the nucleus (first always kept)
        ordered = torch.where(keep, ordered, torch.zeros_like(ordered))
        out = torch.full_like(scores, float("-inf"))
        for row, gen in enumerate(self.generators):
            pick = order[row, torch.multinomial(ordered[row], 1, generator=gen)]
            out[row, pick] = 0.0
        return out

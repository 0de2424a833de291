"""`transformers` caption writer: any chat LLM (hub id or local folder), default
google/gemma-3-12b-it, with the paper's prompt and sampling (temperature 0.7, top_p 0.9,
max_new_tokens 150). Batched, left-padded generation; only the generated tokens are
decoded. Retries sample again (a greedy retry would repeat the same failing caption) with
the more insistent prompt, which the write/check/retry loop supplies.

Sampling is seeded per caption (from the concept's seed and the attempt) and decoding
step, not per batch, and runs on the model's device (RowSampler: the nucleus among the top
1,024 tokens, never a host-side sort of the 262k-word vocabulary; docs/methods.md section
2), so a concept's caption does not depend on which concepts share its batch or on the
batch size. What remains is numeric: bf16 kernels and padding give slightly different
logits in different batches, which can change a draw that falls on a boundary.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from autocomp.captions.chat import clean_caption, messages
from autocomp.core.backend import Backend
from autocomp.core.errors import AutocompError
from autocomp.core.families import contract_example
from autocomp.core.log import package_logger
from autocomp.models.devices import OnDevice

log = package_logger(__name__)

DEFAULT_MODEL = "google/gemma-3-12b-it"


@contract_example(model="{tiny:gemma_lm}", max_new_tokens=4, device="cpu")
class TransformersWriter(OnDevice, Backend):
    extra = "gen"

    def __init__(self, model: str = DEFAULT_MODEL, temperature: float = 0.7, top_p: float = 0.9,
                 max_new_tokens: int = 150, batch_size: int = 16, dtype: str = "auto",
                 device: str | None = None, trust_remote_code: bool = False):
        self.model_ref, self.temperature, self.top_p = model, float(temperature), float(top_p)
        self.max_new_tokens, self.batch_size = max_new_tokens, batch_size
        self.dtype, self.device, self.trust_remote_code = dtype, device, trust_remote_code
        self._tok = self._model = None
        self.draws = self.wide = 0  # tokens drawn, and drawn past the top k (sorted whole)

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
        wide = self.wide
        for i in range(0, len(requests), self.batch_size):
            out += self._batch(requests[i:i + self.batch_size])
        if self.wide > wide:
            log.info(f"sampler: {self.wide:,} of {self.draws:,} tokens so far had a nucleus "
                     f"wider than the top {TOP_K:,} (their rows sorted whole)")
        return out

    def _batch(self, requests) -> list[str]:
        import torch

        tok, model = self._load()
        enc = tok(chat_texts(tok, requests), return_tensors="pt", padding=True,
                  add_special_tokens=False)
        enc = {k: v.to(model.device) for k, v in enc.items()}
        from transformers import LogitsProcessorList

        sampler = RowSampler([row_seed(r.id, r.seed, r.attempt) for r in requests],
                             self.temperature, self.top_p)
        with torch.inference_mode():  # greedy over the sampler's one-hot choice per row
            generated = model.generate(**enc, do_sample=False, temperature=None, top_p=None,
                                       top_k=None, logits_processor=LogitsProcessorList(
                                           [sampler]), max_new_tokens=self.max_new_tokens,
                                       pad_token_id=tok.pad_token_id)
        self.draws, self.wide = self.draws + sampler.draws, self.wide + sampler.wide
        new = generated[:, enc["input_ids"].shape[1]:]  # the generated tokens only
        return [clean_caption(t) for t in tok.batch_decode(new, skip_special_tokens=True)]


def chat_texts(tok, requests) -> list[str]:
    """Each request's chat (system, user) through the model's chat template, ending with the
    generation prompt: the text every LLM writer tokenizes (no special tokens added: the
    template has them)."""
    return [tok.apply_chat_template(messages(r.system, r.user), tokenize=False,
                                    add_generation_prompt=True) for r in requests]


def row_seed(concept_id: str, seed: int, attempt: int) -> int:
    key = f"{concept_id}:{seed}:{attempt}"
    return int(hashlib.sha256(key.encode()).hexdigest()[:15], 16)


def step_seed(seed: int, step: int) -> int:
    """The seed of one row's draw at one decoding step."""
    return int(hashlib.sha256(f"{seed}:{step}".encode()).hexdigest()[:15], 16)


TOP_K = 1024  # candidates the nucleus is looked for among (rows that need more: full sort)


class RowSampler:
    """A logits processor that samples each row's next token (temperature, then nucleus
    top_p) on the logits' device and leaves only that token possible, so greedy decoding
    emits it.

    At decoding step t row r draws with a generator seeded from (its seed, t): the draw of
    one caption never depends on its batch, nor on what earlier draws consumed. The
    nucleus is found among the `top_k` most likely tokens (torch.topk on the device, ties
    in token order); a row whose nucleus is wider falls back to a stable sort of its whole
    row (counted in `wide`). torch.multinomial's one draw reads one exponential per
    candidate in order, so the first `top_k` it reads are the same either way and the
    token equals the full sort's wherever the nucleus fits (`top_k=None`: always sort, the
    reference). Nothing leaves the device but the row count of wide rows."""

    def __init__(self, seeds, temperature: float, top_p: float, top_k: int | None = TOP_K):
        self.seeds = list(seeds)
        self.temperature, self.top_p, self.top_k = temperature, top_p, top_k
        self.step = self.draws = self.wide = 0
        self._generators: dict = {}

    def _generator(self, device, seed: int):
        import torch

        gen = self._generators.get(str(device))
        if gen is None:
            gen = self._generators[str(device)] = torch.Generator(device=device)
        return gen.manual_seed(seed)

    def __call__(self, input_ids, scores):
        import torch

        # the row's probabilities times its total: exp((x - max) / T), the top one 1 (in
        # place: one copy of the logits; multinomial and the nucleus need no normalising)
        probs = scores.to(torch.float32, copy=True)
        probs.sub_(probs.max(dim=-1, keepdim=True).values)
        probs.mul_(1.0 / max(self.temperature, 1e-6)).exp_()
        nucleus = self.top_p * probs.sum(dim=-1, keepdim=True)
        rows, vocab = probs.shape
        k = vocab if self.top_k is None else min(self.top_k, vocab)
        if k < vocab:
            _, top = torch.topk(probs, k, dim=-1, sorted=False)
            top = top.sort(dim=-1).values  # in token order, so ties order as a stable sort
            ordered, at = torch.sort(probs.gather(1, top), descending=True, stable=True,
                                     dim=-1)
            order = top.gather(1, at)
        else:
            ordered, order = torch.sort(probs, descending=True, stable=True, dim=-1)
        before = ordered.cumsum(-1) - ordered
        keep = before < nucleus  # the nucleus (the first always kept)
        # the nucleus fits when the k-th candidate is out of it and less likely than every
        # token in it: then the top k hold every token at least as likely, in sort order
        last = ordered.gather(1, keep.sum(-1, keepdim=True) - 1)[:, 0]
        fits = (before[:, -1] >= nucleus[:, 0]) & (ordered[:, -1] < last)
        ordered = torch.where(keep, ordered, torch.zeros_like(ordered))
        wide = [] if k == vocab else (~fits).nonzero().flatten().tolist()
        picks = []
        for row in range(rows):
            gen = self._generator(probs.device, step_seed(self.seeds[row], self.step))
            if row in wide:  # the nucleus reaches past the top k: this row sorted whole
                full, full_order = torch.sort(probs[row], descending=True, stable=True)
                full = torch.where(full.cumsum(-1) - full < nucleus[row], full,
                                   torch.zeros_like(full))
                picks.append(full_order[torch.multinomial(full, 1, generator=gen)])
            else:
                picks.append(order[row, torch.multinomial(ordered[row], 1, generator=gen)])
        self.step += 1
        self.draws += rows
        self.wide += len(wide)
        out = torch.full_like(scores, float("-inf"))
        out[torch.arange(rows, device=scores.device), torch.cat(picks)] = 0.0
        return out

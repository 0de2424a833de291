"""Log-likelihoods of texts under a causal language model (blind baseline, perplexity audit)."""

from __future__ import annotations

import math
from collections.abc import Sequence


def sequence_logprobs(tok, model, texts: Sequence[str], batch_size: int = 32,
                      max_tokens: int | None = None) -> list[tuple[float, int]]:
    """(sum of token log-probabilities, number of tokens) of each text after a BOS token,
    cut to the model's window."""
    import torch

    bos = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    if max_tokens is None:
        cfg = model.config
        max_tokens = (getattr(cfg, "n_positions", None)
                      or getattr(cfg, "max_position_embeddings", None) or 1024) - 1
    out = []
    for i in range(0, len(texts), batch_size):
        enc = tok(list(texts[i:i + batch_size]), add_special_tokens=False)["input_ids"]
        seqs = [[bos, *ids[:max_tokens]] for ids in enc]
        width = max(len(s) for s in seqs)
        ids = torch.tensor([s + [pad] * (width - len(s)) for s in seqs])
        mask = torch.tensor([[1] * len(s) + [0] * (width - len(s)) for s in seqs])
        with torch.inference_mode():
            logits = model(input_ids=ids.to(model.device),
                           attention_mask=mask.to(model.device)).logits.float()
        logp = torch.log_softmax(logits[:, :-1], dim=-1)
        picked = logp.gather(-1, ids[:, 1:, None].to(logp.device))[..., 0].cpu()
        m = mask[:, 1:].float()
        out += [(float((p * mm).sum()), int(mm.sum())) for p, mm in zip(picked, m, strict=True)]
    return out


def token_nlls(tok, model, text: str) -> list[float]:
    """The negative log-likelihood of each token of `text` after the first, given the
    tokens before it, as the tokenizer encodes the text by default (GPT-2 adds no BOS);
    one forward pass (a causal model reads each prefix alike in any window)."""
    import torch

    ids = tok(text, return_tensors="pt")["input_ids"][:, :_window(model)]
    if ids.shape[1] < 2:
        return []
    with torch.inference_mode():
        logits = model(input_ids=ids.to(model.device)).logits.float()
    logp = torch.log_softmax(logits[0, :-1], dim=-1)
    picked = logp.gather(-1, ids[0, 1:, None].to(logp.device))[:, 0]
    return [float(-x) for x in picked.cpu()]


def _window(model) -> int:
    cfg = model.config
    return getattr(cfg, "n_positions", None) or getattr(cfg, "max_position_embeddings",
                                                        None) or 1024


def strided_perplexity(nlls: list[float], stride: int = 3) -> float:
    """VALSE's unimodal baseline (Parcalabescu et al. 2022, their unimodal evaluation
    script): windows ending every `stride` tokens, each adding `stride` x the mean NLL of
    its last `stride` tokens (the first token is never predicted), the sum divided by the
    last window's start. A text of `stride` tokens or fewer divides by 0: infinite, as
    there. `nlls[t - 1]` is token t's (token_nlls)."""
    n = len(nlls) + 1  # tokens
    total, start = 0.0, 0
    for start in range(0, n, stride):
        end = min(start + stride, n)
        window = nlls[max(end - stride, 1) - 1:end - 1]
        total += stride * (sum(window) / len(window)) if window else math.nan
    return math.exp(total / start) if start else math.inf

"""Log-probabilities a transformers VLM gives a continuation after an image and a prompt.

The likelihood scorers (VQAScore: P("Yes" | image, question); VisualGPTScore: the caption's
mean token log-probability) need one forward pass per (image, prompt, continuation) row,
no generation. Rows are built from the processor's chat template (the user turn holds
the image and the prompt, then the generation prompt) with the continuation's tokens
appended, as the tokenizer gives them for the continuation alone, so a caption is scored
on the same tokens whatever it is batched with.

Batches are right-padded: every row keeps positions 0..L-1 and, attention being causal,
the padding after a row changes none of its logits, so a batch scores each row exactly as
alone (tested). An image's rows share one pass of the vision tower (encode_once).
"""

from __future__ import annotations

from collections.abc import Sequence


def _continuation_ids(tokenizer, texts: Sequence[str]) -> list[list[int]]:
    return [list(tokenizer(t, add_special_tokens=False)["input_ids"]) for t in texts]


def _per_token_keys(enc: dict, shape) -> list[str]:
    """The processor's outputs with one value per token (input_ids, attention_mask, Gemma
    3's token_type_ids, ...): these are extended by the continuation and re-padded."""
    return [k for k, v in enc.items() if hasattr(v, "shape") and tuple(v.shape) == shape]


def _batch(proc, rows: Sequence[tuple]):
    """(model inputs, each row's continuation token ids, each row's (first continuation
    position, length))."""
    import torch

    from autocomp.models.loading import chat_padding

    convs = [[{"role": "user", "content": [{"type": "image", "image": pil},
                                           {"type": "text", "text": prompt}]}]
             for pil, prompt, _ in rows]
    enc = proc.apply_chat_template(convs, tokenize=True, return_dict=True, return_tensors="pt",
                                   add_generation_prompt=True, **chat_padding(proc))
    tokenizer = getattr(proc, "tokenizer", proc)
    tails = _continuation_ids(tokenizer, [c for _, _, c in rows])
    keys = _per_token_keys(enc, tuple(enc["input_ids"].shape))
    mask = enc["attention_mask"].bool()
    lengths = [int(m.sum()) + len(t) for m, t in zip(mask, tails, strict=True)]
    width = max(lengths)
    pad = getattr(tokenizer, "pad_token_id", None) or 0
    out = {k: v for k, v in enc.items() if k not in keys}
    for key in keys:
        value = enc[key]
        fill = pad if key == "input_ids" else 0
        made = torch.full((len(rows), width), fill, dtype=value.dtype)
        for i, tail in enumerate(tails):
            kept = value[i][mask[i]]
            extra = (torch.tensor(tail, dtype=value.dtype) if key == "input_ids"
                     else torch.full((len(tail),), 1 if key == "attention_mask" else 0,
                                     dtype=value.dtype))
            whole = torch.cat([kept, extra])
            made[i, :len(whole)] = whole
        out[key] = made
    spans = [(n - len(t), len(t)) for n, t in zip(lengths, tails, strict=True)]
    return out, tails, spans


def continuation_logprobs(proc, model, rows: Sequence[tuple], firsts: list[int] | None = None
                          ) -> list[list[float]]:
    """The log-probability of each continuation token, per (PIL image, prompt,
    continuation) row; `firsts` (encode_once.groups) says which rows show the same image."""
    if not rows:
        return []
    import torch

    from autocomp.models.encode_once import encode_once, groups

    inputs, tails, spans = _batch(proc, rows)
    inputs = {k: (v.to(model.device, dtype=model.dtype) if k == "pixel_values" else
                  v.to(model.device)) for k, v in inputs.items()}
    firsts = firsts if firsts is not None else groups([id(p) for p, _, _ in rows])
    with torch.inference_mode(), encode_once(model, firsts):
        logits = model(**inputs).logits
    out = []
    for i, ((start, n), tail) in enumerate(zip(spans, tails, strict=True)):
        if not n:
            out.append([])
            continue
        # the logits at position p predict token p + 1
        step = torch.log_softmax(logits[i, start - 1:start - 1 + n].float(), dim=-1)
        picked = step.gather(1, torch.tensor(tail, device=step.device)[:, None])[:, 0]
        out.append(picked.cpu().tolist())
    return out

"""Perplexity audit (COMPASS appendix B): can a text-only model tell positives from
negatives by fluency? Per caption, the hardest negative is the one whose perplexity is
closest to the positive's; the effect size is the rank-biserial r = 1 - 2U / (n1 n2) of the
Mann-Whitney U between positive and hardest-negative perplexities (scipy).
|r| < 0.1 negligible, < 0.3 small, else medium or large."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from autocomp.records import read_jsonl


def rank_biserial(a: Sequence[float], b: Sequence[float]) -> float:
    from scipy.stats import mannwhitneyu

    u = mannwhitneyu(a, b, alternative="two-sided").statistic  # U of the first sample
    return 1.0 - 2.0 * float(u) / (len(a) * len(b))


def band(r: float) -> str:
    r = abs(r)
    return "negligible" if r < 0.1 else "small" if r < 0.3 else "medium or large"


class Perplexity:
    """Token perplexity under a causal LM (any transformers id or folder)."""

    def __init__(self, model: str, device: str = "cpu", batch_size: int = 32):
        from autocomp.captions.loading import load_causal_lm

        self.tok, self.model = load_causal_lm(model, device)
        self.tok.padding_side = "right"
        self.batch_size, self.cache = batch_size, {}
        cfg = self.model.config
        self.max_tokens = (getattr(cfg, "n_positions", None)
                           or getattr(cfg, "max_position_embeddings", None) or 1024) - 1

    def __call__(self, texts: Sequence[str]) -> list[float]:
        import torch

        todo = [t for t in dict.fromkeys(texts) if t not in self.cache]
        bos = self.tok.bos_token_id if self.tok.bos_token_id is not None else \
            self.tok.eos_token_id
        for i in range(0, len(todo), self.batch_size):
            batch = todo[i:i + self.batch_size]
            enc = self.tok(batch, add_special_tokens=False)["input_ids"]
            seqs = [[bos, *ids[:self.max_tokens]] for ids in enc]  # the model's window
            width = max(len(s) for s in seqs)
            ids = torch.tensor([s + [0] * (width - len(s)) for s in seqs])
            mask = torch.tensor([[1] * len(s) + [0] * (width - len(s)) for s in seqs])
            with torch.inference_mode():
                logits = self.model(input_ids=ids.to(self.model.device),
                                    attention_mask=mask.to(self.model.device)).logits.float()
            logp = torch.log_softmax(logits[:, :-1], -1).gather(
                -1, ids[:, 1:, None].to(logits.device))[..., 0].cpu()
            m = mask[:, 1:].float()
            for text, lp, mm in zip(batch, logp, m, strict=True):
                self.cache[text] = math.exp(-float((lp * mm).sum() / mm.sum()))
        return [self.cache[t] for t in texts]


def audit(compass_dir: Path, ppl, files=("skill-O", "skill-A", "skill-R", "composed")) -> list:
    """Rows (file, level, captions, r, band) on the hardest negatives."""
    rows = []
    for name in files:
        groups: dict[str, tuple[list, list]] = defaultdict(lambda: ([], []))
        for item in read_jsonl(Path(compass_dir) / f"{name}.jsonl"):
            scores = ppl([item["positive"], *[n["caption"] for n in item["negatives"]]])
            pos, negs = scores[0], scores[1:]
            hardest = min(negs, key=lambda v: abs(v - pos))
            groups[item["level"]][0].append(pos)
            groups[item["level"]][1].append(hardest)
        for level, (pos, neg) in sorted(groups.items()):
            r = rank_biserial(pos, neg)
            rows.append({"file": name, "level": level, "captions": len(pos), "r": r,
                         "band": band(r)})
    return rows

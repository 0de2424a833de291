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

from autocomp.core.records import read_jsonl


def rank_biserial(a: Sequence[float], b: Sequence[float]) -> float:
    from scipy.stats import mannwhitneyu

    u = mannwhitneyu(a, b, alternative="two-sided").statistic  # U of the first sample
    return 1.0 - 2.0 * float(u) / (len(a) * len(b))


def band(r: float) -> str:
    r = abs(r)
    return "negligible" if r < 0.1 else "small" if r < 0.3 else "medium or large"


class Perplexity:
    """Token perplexity under a causal LM (any transformers id or folder)."""

    def __init__(self, model: str, device: str = "cpu", batch_size: int = 32,
                 how: str = "--lm DIR"):
        from autocomp.models.devices import resolve_device
        from autocomp.models.loading import load_causal_lm

        self.tok, self.model = load_causal_lm(model, resolve_device(device), how=how)
        self.batch_size, self.cache = batch_size, {}

    def __call__(self, texts: Sequence[str]) -> list[float]:
        from autocomp.models.lm import sequence_logprobs

        todo = [t for t in dict.fromkeys(texts) if t not in self.cache]
        for text, (total, n) in zip(todo, sequence_logprobs(self.tok, self.model, todo,
                                                             self.batch_size), strict=True):
            self.cache[text] = math.exp(-total / max(n, 1))
        return [self.cache[t] for t in texts]


def audit(compass_dir: Path, ppl, files=("skill-O", "skill-A", "skill-R", "composed")
          ) -> list:
    """Rows (file, level, captions, r, band) on the hardest negatives; a progress line (or
    bar) as the items are scored."""
    from autocomp.compass.sets import check_set
    from autocomp.core.progress import Progress

    counts = check_set(compass_dir).get("counts", {})
    rows = []
    for name in files:
        groups: dict[str, tuple[list, list]] = defaultdict(lambda: ([], []))
        with Progress(f"compass perplexity {name}", counts.get(name), "item") as done:
            for item in read_jsonl(Path(compass_dir) / f"{name}.jsonl"):
                done.update()
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

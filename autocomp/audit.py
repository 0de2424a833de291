"""How much of a benchmark a text-only model solves, and what in its captions gives it away.

For every benchmark of a suite (an autocomp run, SugarCrepe, CREPE, a column-mapped table):

  blind scorers  unigram (word frequency), distinct (distinct words), length (words), and
                 where given a causal LM (blind:lm@MODEL) and the multiple-choice LLM
                 (blind:choice@MODEL): tie-aware accuracy beside chance. A scorer is
                 flagged when it is more than 3 standard errors (binomial, at chance) and
                 more than 5 points away from chance: the captions carry an artifact.
  structure      share of (positive, negative) pairs with the same multiset of words (a
                 bag-of-words model cannot tell them apart); items whose captions have
                 leading, trailing or repeated whitespace or newlines (read before any
                 normalisation); negatives equal to the positive up to letter case;
                 positives repeated among their own negatives; duplicate items (same image
                 and positive)
"""

from __future__ import annotations

import math
import re
from collections import Counter

from autocomp.eval.harness import Harness, image_ref

BLIND = ("blind:unigram", "blind:distinct", "blind:length")
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def _bag(text: str) -> Counter:
    return Counter(_WORD.findall(text.lower()))


def _odd_space(text: str) -> bool:
    return text != text.strip() or "  " in text or "\n" in text or "\t" in text


def structure(items) -> dict:
    """Structural counts over a benchmark's items."""
    n = pairs = same_bag = spaces = case_only = repeated = 0
    seen: Counter = Counter()
    for item in items:
        n += 1
        pos = item["positive"]
        raw = item.get("raw", {})
        negs = [x["caption"] for x in item["negatives"]]
        texts = [raw.get("positive", pos), raw.get("negative", negs[0] if negs else ""), *negs]
        spaces += any(_odd_space(t) for t in texts if t)
        bag = _bag(pos)
        for neg in negs:
            pairs += 1
            same_bag += _bag(neg) == bag
        case_only += any(neg != pos and neg.lower() == pos.lower() for neg in negs)
        repeated += pos in negs
        seen[(image_ref(item), pos)] += 1
    duplicates = sum(c - 1 for c in seen.values() if c > 1)
    return {"items": n, "pairs": pairs,
            "same_words": round(100.0 * same_bag / pairs, 2) if pairs else None,
            "whitespace": spaces, "case_only": case_only, "positive_repeated": repeated,
            "duplicates": duplicates}


def far_from_chance(accuracy: float | None, chance: float | None, n: int) -> bool:
    if accuracy is None or chance is None or n == 0:
        return False
    p = chance / 100.0
    se = 100.0 * math.sqrt(max(p * (1 - p), 1e-12) / n)
    return abs(accuracy - chance) > max(3 * se, 5.0)


def audit(suite, extra_models=(), device: str = "cpu", batch_size: int | None = None,
          echo=None) -> list[dict]:
    """One row per benchmark: structure and each blind scorer's tie-aware accuracy; a bar,
    or a progress line every ~10 s (core/progress.py)."""
    import tempfile
    from pathlib import Path

    from autocomp.core.progress import Progress
    from autocomp.eval.scorers import load_scorer

    models = [*BLIND, *extra_models]
    rows = []
    scorers = {m: load_scorer(m, device=device, batch_size=batch_size) for m in models}
    cells = Progress("audit", len(suite.benchmarks) * len(scorers), "cell", echo)
    with tempfile.TemporaryDirectory(prefix="autocomp-audit-") as tmp, cells:
        for bench in suite.benchmarks:
            row = {"benchmark": bench.name, **structure(bench.items()), "blind": {}}
            for m, scorer in scorers.items():
                harness = Harness(scorer, suite.root, suite.tasks, None)
                got = harness.run(bench, Path(tmp) / f"{len(rows)}-{len(row['blind'])}.jsonl",
                                  lambda state, at=f"{bench.name} {m}": cells.update(
                                      0, f"{at}: {state['items']:,} items"))
                harness.close()
                cells.update(1, f"{bench.name} {m}")
                metrics = got["metrics"]
                acc, chance = metrics["accuracy_tie_aware"], metrics["chance"]
                row["chance"] = chance
                row["blind"][m] = {"accuracy_tie_aware": acc, "chance": chance,
                                   "flag": far_from_chance(acc, chance, got["n_items"])}
            rows.append(row)
    return rows


def format_audit(rows: list[dict]) -> str:
    from autocomp.report.tables import Table, r1

    models = list(dict.fromkeys(m for r in rows for m in r["blind"]))
    out = []
    for r in rows:
        cells = []
        for m in models:
            b = r["blind"].get(m)
            cells.append("-" if b is None else r1(b["accuracy_tie_aware"])
                         + (" !" if b["flag"] else ""))
        out.append([r["benchmark"], str(r["items"]), r1(r.get("chance")), *cells,
                    "-" if r["same_words"] is None else f"{r['same_words']:.1f}",
                    str(r["whitespace"]), str(r["case_only"]), str(r["positive_repeated"]),
                    str(r["duplicates"])])
    table = Table("Audit: blind scorers' tie-aware accuracy (%) beside chance; ! = more than "
                  "3 SE and 5 points from chance (the captions give the answer away); "
                  "same words: % of (positive, negative) pairs with identical word multisets",
                  ["Benchmark", "Items", "Chance", *[m.split(":", 1)[1] for m in models],
                   "Same words %", "Whitespace", "Case-only", "Positive repeated",
                   "Duplicates"], out)
    return table.render("md")

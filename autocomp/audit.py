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
                 positives repeated among their own negatives (a Winoground item whose two
                 captions are one text); duplicate items (same image names and captions);
                 items whose id another item of the benchmark has; items with a negative
                 identical to the positive in its first 75 words (CLIP's 77-token context
                 holds at most 75 words, so any encoder with that context sees the two
                 alike and ties them)
  images         only with --images (the rest reads text alone, no image needed): image
                 files that cannot be read, and different names with the same bytes

Items of several images (Winoground's 2 x 2) are audited on their (true, false) caption
pairs per image; a blind scorer cannot beat chance on them by design (each caption is true
of one image and false of the other), so it is flagged only above chance.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path

from autocomp.eval.harness import Harness
from autocomp.eval.items import captions_of, image_refs, is_text_only
from autocomp.eval.matrix import is_matrix, truth_of
from autocomp.eval.read_once import ReadOnce

BLIND = ("blind:unigram", "blind:distinct", "blind:length")
CONTEXT_WORDS = 75  # CLIP's 77 tokens less start and end: at most 75 words fit
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def _bag(text: str) -> Counter:
    return Counter(_WORD.findall(text.lower()))


def _odd_space(text: str) -> bool:
    return text != text.strip() or "  " in text or "\n" in text or "\t" in text


def _pairs(item: dict):
    """(true caption, false caption) pairs of an item, as read before any normalisation
    where the format kept the raw text."""
    if is_text_only(item):  # the positive pair first, then each pair with the negative
        texts = item["texts"]
        for a, b in item["text_pairs"][1:]:
            yield texts[a], texts[b]
        return
    if is_matrix(item):
        truth, caps = truth_of(item), item["captions"]
        for row in truth:
            for j in row.nonzero()[0]:
                for k in (~row).nonzero()[0]:
                    yield caps[j], caps[k]
        return
    for neg in item["negatives"]:
        yield item["positive"], neg["caption"]


def _head(text: str) -> list[str]:
    """The first CONTEXT_WORDS words (the only ones a 77-token text tower can see)."""
    words = text.split()
    return words[:CONTEXT_WORDS] if len(words) > CONTEXT_WORDS else [text]


def structure(items, tick=None) -> dict:
    """Structural counts over a benchmark's items, from their text alone (image names are
    text: two items with the same image name and captions are duplicates); `tick(n)` after
    each item read (progress)."""
    n = pairs = same_bag = spaces = case_only = repeated = truncated = 0
    seen: Counter = Counter()
    ids: Counter = Counter()
    for item in items:
        n += 1
        raw = item.get("raw", {})
        texts = [raw.get("positive"), raw.get("negative"), *captions_of(item)]
        spaces += bool(item.get("raw_spaces")) or any(_odd_space(t) for t in texts if t)
        item_pairs = list(_pairs(item))
        for pos, neg in item_pairs:
            pairs += 1
            same_bag += _bag(neg) == _bag(pos)
        case_only += any(neg != pos and neg.lower() == pos.lower() for pos, neg in item_pairs)
        truncated += any(neg != pos and _head(neg) == _head(pos) for pos, neg in item_pairs)
        repeated += any(neg == pos for pos, neg in item_pairs)
        seen[(tuple(image_refs(item)), tuple(captions_of(item)))] += 1
        ids[item.get("repeats_id", item.get("id", n))] += 1  # a loader kept it apart as ID~2
        if tick is not None:
            tick(n)
    duplicates = sum(c - 1 for c in seen.values() if c > 1)
    return {"items": n, "pairs": pairs,
            "same_words": round(100.0 * same_bag / pairs, 2) if pairs else None,
            "whitespace": spaces, "case_only": case_only, "positive_repeated": repeated,
            "duplicates": duplicates, "same_in_context": truncated,
            "duplicate_ids": sum(c - 1 for c in ids.values() if c > 1)}


def image_checks(items, root) -> dict:
    """What only the image files can tell (run with --images): files that cannot be read
    as images, and different file names with the same bytes."""
    from PIL import Image

    from autocomp.eval.cache import file_key
    from autocomp.eval.items import split_ref

    unreadable, by_content, names = 0, {}, set()
    for item in items:
        for ref in image_refs(item):
            name = split_ref(ref)[0]
            if name in names:
                continue
            names.add(name)
            path = Path(root) / name
            try:
                with Image.open(path) as im:
                    im.verify()
                key = file_key(path)
            except Exception:  # missing, truncated, not an image: counted
                unreadable += 1
                continue
            by_content.setdefault(key, set()).add(name)
    return {"unreadable_images": unreadable,
            "duplicate_images": sum(len(v) - 1 for v in by_content.values() if len(v) > 1)}


def far_from_chance(accuracy: float | None, chance: float | None, n: int,
                    above_only: bool = False) -> bool:
    if accuracy is None or chance is None or n == 0:
        return False
    p = chance / 100.0
    se = 100.0 * math.sqrt(max(p * (1 - p), 1e-12) / n)
    gap = accuracy - chance if above_only else abs(accuracy - chance)
    return gap > max(3 * se, 5.0)


def audit(suite, extra_models=(), device: str = "cpu", batch_size: int | None = None,
          check_images: bool = False) -> list[dict]:
    """One row per benchmark: structure and each blind scorer's tie-aware accuracy (and,
    with `check_images`, what the image files show); a bar, or a progress line every ~10 s
    (core/progress.py)."""
    import tempfile

    from autocomp.core.progress import Progress
    from autocomp.eval.scorers import load_scorer

    models = [*BLIND, *extra_models]
    rows = []
    scorers = {m: load_scorer(m, device=device, batch_size=batch_size) for m in models}
    cells = Progress("audit", len(suite.benchmarks) * len(scorers), "cell")
    with tempfile.TemporaryDirectory(prefix="autocomp-audit-") as tmp, cells:
        for bench in suite.benchmarks:
            bench = ReadOnce(bench)  # its negatives enumerated once for every scorer
            row = {"benchmark": bench.name, "blind": {},
                   **structure(bench.items(), lambda k, at=bench.name: cells.update(
                       0, f"{at} structure: {k:,} items read"))}
            if check_images:
                row.update(image_checks(bench.items(), suite.root))
            for m, scorer in scorers.items():
                harness = Harness(scorer, suite.root, suite.tasks, None, also=suite.also)
                got = harness.run(bench, Path(tmp) / f"{len(rows)}-{len(row['blind'])}.jsonl",
                                  lambda state, at=f"{bench.name} {m}": cells.update(
                                      0, f"{at}: {state['items']:,} items scored, "
                                         f"{state['encoded']['captions']:,} captions read"))
                harness.close()
                cells.update(1, f"{bench.name} {m}")
                metrics = got["metrics"]
                acc, chance = metrics["accuracy_tie_aware"], metrics["chance"]
                row["chance"] = chance
                row["blind"][m] = {"accuracy_tie_aware": acc, "chance": chance,
                                   "flag": far_from_chance(acc, chance, got["n_items"],
                                                           "text_score" in metrics)}
                if metrics.get("accuracy_matched_tie_aware") is not None:
                    # Confusion on its shortcut-matched negatives (negatives/shortcut.py)
                    macc, mchance = (metrics["accuracy_matched_tie_aware"],
                                     metrics["chance_matched"])
                    row["chance_matched"] = mchance
                    row["blind"][m].update(
                        matched_tie_aware=macc, matched_flag=far_from_chance(
                            macc, mchance, metrics["matched_items"], False))
            rows.append(row)
    return rows


def format_audit(rows: list[dict]) -> str:
    from autocomp.report.tables import Table, r1

    models = list(dict.fromkeys(m for r in rows for m in r["blind"]))
    names = [r["benchmark"] for r in rows]
    sources = len(names) != len(set(names))  # two sources with one benchmark name
    out = []
    for r in rows:
        cells = []
        for m in models:
            b = r["blind"].get(m)
            cells.append("-" if b is None else r1(b["accuracy_tie_aware"])
                         + (" !" if b["flag"] else "")
                         + (f" ({r1(b['matched_tie_aware'])}"
                            + (" !" if b["matched_flag"] else "") + ")"
                            if "matched_tie_aware" in b else ""))
        out.append([*([r.get("source", "-")] if sources else []),
                    r["benchmark"], str(r["items"]),
                    r1(r.get("chance")) + (f" ({r1(r['chance_matched'])})"
                                           if r.get("chance_matched") is not None else ""),
                    *cells,
                    "-" if r["same_words"] is None else f"{r['same_words']:.1f}",
                    str(r["whitespace"]), str(r["case_only"]), str(r["positive_repeated"]),
                    str(r["duplicates"]), str(r.get("duplicate_ids", 0)),
                    str(r.get("same_in_context", 0)),
                    str(r.get("unreadable_images", "-")),
                    str(r.get("duplicate_images", "-"))])
    table = Table("Audit: blind scorers' tie-aware accuracy (%) beside chance; ! = more than "
                  "3 SE and 5 points from chance (the captions give the answer away); in "
                  "parentheses, a Confusion benchmark on its shortcut-matched negatives "
                  "(negatives keeping the positive's distinct objects and values) and their "
                  "chance; "
                  "same words: % of (positive, negative) pairs with identical word multisets; "
                  "same in 75 words: items a 77-token text encoder cannot tell apart; "
                  "image columns need --images (- = not checked)",
                  [*(["Source"] if sources else []),
                   "Benchmark", "Items", "Chance", *[m.split(":", 1)[1] for m in models],
                   "Same words %", "Whitespace", "Case-only", "Positive repeated",
                   "Duplicates", "Duplicate ids", "Same in 75 words", "Unreadable images",
                   "Duplicate images"], out)
    return table.render("md")

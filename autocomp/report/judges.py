"""Judges and validators against exact truth (`autocomp judges`): how often an answerer, a
detector, the validation cascade they make, or human annotators say what the image shows,
per skill (the aspect a question asks about: object, color, count, material, spatial, ...)
and N, where the embedded generator recorded what it drew (injected faults included).

A verdict is "the binding holds" (a question answered with the expected value; an image
passing the cascade; a human's yes); the truth says whether it does. A flaw is a binding
that does not hold. Per cell:

  disagree   the share of verdicts that differ from the truth (a scripted judge that errs
             on 20% of colors shows 20 here)
  precision  of the flaws the judge flagged, the share that are flaws
  recall     of the flaws, the share the judge flagged
  kappa      Cohen's kappa of judge and truth (statsmodels' value)

Intervals are 95%: precision, recall and disagreement resample whole images (an image's
questions are not independent; Clopper-Pearson where each image gives one); kappa's is a
percentile bootstrap over images, resamples where it is undefined counted and left out.
Two judge versions on the same images (drift): the difference of their disagreement,
paired by question, its interval resampling images, McNemar's p Holm-adjusted.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from autocomp.eval.intervals import LEVEL, RESAMPLES, proportion
from autocomp.report.table_format import INTERVAL_NOTE, Table, ci, r1

WHOLE = "whole image"  # the aspect of image verdicts (every binding holds)
CASCADE = "validation cascade"
HUMANS = "humans"  # the annotators of `autocomp review` as one judge (their majority)


def verdicts(records: list[dict], judge: str) -> tuple[list[dict], int]:
    """(one verdict per question with a known truth, and per image the whole-image verdict
    of the answers and of the validation cascade; how many questions had no truth) from
    the scored records of `autocomp t2i` on a run's own images."""
    out, unknown = [], 0
    for r in records:
        probes = r.get("probes") or []
        for p in probes:
            if p.get("truth") is None:
                unknown += 1
                continue
            out.append({"judge": judge, "unit": r["prompt"], "key": f"{r['id']}:{p['id']}",
                        "aspect": p["aspect"], "n": r["n"], "truth": bool(p["truth"]),
                        "said": bool(p["right"])})
        if r.get("faithful") is None or not probes:
            continue
        image = {"judge": judge, "unit": r["prompt"], "n": r["n"], "truth": bool(r["faithful"])}
        out.append({**image, "key": f"{r['id']}:all", "aspect": WHOLE,
                    "said": all(p["right"] for p in probes)})
        if r.get("survived") is not None:
            out.append({**image, "key": f"{r['id']}:cascade", "aspect": CASCADE,
                        "said": bool(r["survived"])})
    return out, unknown


def kappa_of(tp, fp, fn, tn):
    """Cohen's kappa from the 2 x 2 counts (arrays: one kappa each), NaN where undefined
    (both raters gave one label throughout); statsmodels' cohens_kappa, vectorised."""
    tp, fp, fn, tn = (np.asarray(x, dtype=np.float64) for x in (tp, fp, fn, tn))
    n = tp + fp + fn + tn
    with np.errstate(invalid="ignore", divide="ignore"):
        po = (tp + tn) / n
        pe = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / (n * n)
        return np.where(pe < 1, (po - pe) / np.where(pe < 1, 1 - pe, 1), np.nan)


def cell(rows: list[dict], resamples: int = RESAMPLES, level: float = LEVEL) -> dict:
    """The statistics of one judge on one (aspect, N): counts, disagreement, precision,
    recall and kappa, each with its interval."""
    from autocomp.eval.intervals import resampled_sums

    units = defaultdict(lambda: np.zeros(4))  # per image: tp fp fn tn (a flaw is positive)
    for r in rows:
        flagged, flaw = not r["said"], not r["truth"]
        units[r["unit"]][(0 if flaw else 1) if flagged else (2 if flaw else 3)] += 1
    counts = np.array(list(units.values()))
    tp, fp, fn, tn = counts.sum(0)
    out = {"questions": len(rows), "images": len(units), "flaws": int(tp + fn),
           "flagged": int(tp + fp), "tp": int(tp), "fp": int(fp), "fn": int(fn), "tn": int(tn)}
    out["disagree"] = _share({u: (c.sum(), c[1] + c[2]) for u, c in units.items()})
    out["precision"] = _share({u: (c[0] + c[1], c[0]) for u, c in units.items()})
    out["recall"] = _share({u: (c[0] + c[2], c[0]) for u, c in units.items()})
    value = float(kappa_of(tp, fp, fn, tn))
    out["kappa"] = None
    if not np.isnan(value):
        boot = kappa_of(*resampled_sums(counts, resamples).T)
        ok = boot[~np.isnan(boot)]
        tail = 100.0 * (1 - level) / 2
        interval = [float(x) for x in np.percentile(ok, [tail, 100 - tail])] if len(ok) \
            else None
        out["kappa"] = {"value": value, "interval": interval,
                        "undefined_resamples": int(len(boot) - len(ok))}
    return out


def _share(units: dict) -> dict | None:
    """{image: (count, hits)} -> the share of hits in percent with its interval (images
    resampled; Clopper-Pearson where each image gives one); None without a count."""
    units = {u: [float(c), float(h)] for u, (c, h) in units.items() if c}
    if not units:
        return None
    k, n = sum(u[1] for u in units.values()), sum(u[0] for u in units.values())
    lo, hi = proportion(units)
    return {"value": 100.0 * k / n, "k": int(k), "n": int(n), "interval": [lo, hi]}


def judge_cells(rows: list[dict]) -> dict:
    """(judge, aspect, N) -> cell statistics, in the order first seen."""
    grouped: dict = defaultdict(list)
    for r in rows:
        grouped[(r["judge"], r["aspect"], r["n"])].append(r)
    return {key: cell(got) for key, got in grouped.items()}


def drift(rows: list[dict], base: str, other: str) -> dict:
    """(aspect, N) -> the other judge's disagreement minus the base's, on the questions
    both answered (paired by question; images resampled), with McNemar's p."""
    from autocomp.eval.intervals import paired_clustered

    mine = {(r["aspect"], r["n"], r["key"]): r for r in rows if r["judge"] == base}
    grouped: dict = defaultdict(lambda: ([], [], []))
    for r in rows:
        if r["judge"] != other:
            continue
        b = mine.get((r["aspect"], r["n"], r["key"]))
        if b is None:
            continue
        a_right, b_right, units = grouped[(r["aspect"], r["n"])]
        a_right.append(float(b["said"] == b["truth"]))
        b_right.append(float(r["said"] == r["truth"]))
        units.append(r["unit"])
    # agreement base - other = disagreement other - base
    return {key: paired_clustered(a, b, u) for key, (a, b, u) in grouped.items()}


def _pct(got: dict | None) -> str:
    return "-" if got is None else ci(got["value"], got["interval"])


def _kappa(got: dict | None) -> str:
    if got is None:
        return "-"
    iv = got["interval"]
    return f"{got['value']:.2f}" + (f" [{iv[0]:.2f}, {iv[1]:.2f}]" if iv else "")


def _order(key: tuple) -> tuple:
    judge, aspect, n = key
    return (aspect in (WHOLE, CASCADE), aspect == CASCADE, aspect, n)


def judge_tables(rows: list[dict], judges: list[str], notes: list[str] | None = None):
    """The table of every judge per aspect and N, and one drift table per judge after the
    first (against the first)."""
    from autocomp.eval.intervals import holm

    cells = judge_cells(rows)
    body = []
    for key in sorted(cells, key=lambda k: (_order(k), judges.index(k[0]))):
        judge, aspect, n = key
        c = cells[key]
        body.append([judge, aspect, str(n), f"{c['questions']:,} ({c['images']:,})",
                     f"{c['flaws']:,}", _pct(c["disagree"]), _pct(c["precision"]),
                     _pct(c["recall"]), _kappa(c["kappa"])])
    text = ["A flaw is a binding the image does not hold (exact truth from the embedded "
            "generator, injected faults included); precision and recall are of flagging "
            "flaws; disagree: verdicts unlike the truth. Intervals resample whole images; "
            "kappa's is a percentile bootstrap over images.",
            f"'{WHOLE}': every question of the image answered as expected vs every binding "
            f"holding; '{CASCADE}': the image passing the run's validation cascade with "
            "this judge's answerer and detector (a background the caption does not state "
            "is not a flaw here)."]
    undefined = sum((c["kappa"] or {}).get("undefined_resamples", 0) for c in cells.values())
    if undefined:
        text.append(f"{undefined:,} resamples left kappa undefined (one label throughout) "
                    "and were left out of its intervals")
    out = [Table(f"Judges against exact truth per aspect and N (%; {INTERVAL_NOTE})",
                 ["Judge", "Aspect", "N", "Questions (images)", "Flaws", "Disagree",
                  "Precision", "Recall", "Kappa"], body, text + list(notes or []))]
    for other in judges[1:]:
        if other == HUMANS:  # people are not a version of the judge
            continue
        got = drift(rows, judges[0], other)
        if not got:
            continue
        keys = sorted(got, key=lambda k: _order(("", *k)))
        adjusted = holm([got[k]["p"] for k in keys])
        drift_rows = [[aspect, str(n), f"{got[(aspect, n)]['n']:,}",
                       r1(100 - got[(aspect, n)]["a"]), r1(100 - got[(aspect, n)]["b"]),
                       ci(got[(aspect, n)]["delta"], (got[(aspect, n)]["low"],
                                                      got[(aspect, n)]["high"])),
                       _p(p)] for (aspect, n), p in zip(keys, adjusted, strict=True)]
        out.append(Table(f"Drift from {judges[0]} to {other}: disagreement with the truth "
                         f"(%), the difference in points ({INTERVAL_NOTE})",
                         ["Aspect", "N", "Questions", f"{judges[0]}", f"{other}",
                          f"{other} - {judges[0]}", "p (Holm)"], drift_rows,
                         ["Paired by question: the same images and questions; the "
                          "difference's interval resamples whole images (Newcombe's where "
                          "each image gives one); McNemar's exact p, Holm-adjusted over "
                          "the table's rows."]))
    return out


def _p(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3f}"

"""Scores split by what training saw (CREPE's systematicity splits, its Table 15):
seen compounds (SC), unseen compounds (UC), unseen atoms (UA).

A result whose items carry a seen label (a run with splits, bench/splits.py; CREPE's
systematicity files) has metrics["by"]["seen"]: per label its n, accuracy, chance and 95%
interval. Two tables come of them:
  Seen / unseen   every model x benchmark: SC, UC, UA [interval] and UC - SC with
                  Newcombe's interval for two independent proportions (statsmodels)
  Table 4 per label  the Auto-Comp layout on the items of one label only
"""

from __future__ import annotations

from autocomp.bench.splits import SEEN as ORDER
from autocomp.bench.splits import SEEN_SHORT as SHORT
from autocomp.report.table_format import Table, ci, r1, signed


def _seen(result: dict) -> dict:
    return ((result.get("metrics") or {}).get("by") or {}).get("seen") or {}


def _labels_of(results) -> list[str]:
    got = {k for r in results for k in _seen(r)}
    return [k for k in ORDER if k in got] + sorted(got - set(ORDER))


def difference(a: dict, b: dict) -> str:
    """a - b in points with Newcombe's interval (independent items), "-" if either is
    empty."""
    if not a or not b or not a.get("n") or not b.get("n"):
        return "-"
    from statsmodels.stats.proportion import confint_proportions_2indep

    ka, kb = a["accuracy"] * a["n"] / 100.0, b["accuracy"] * b["n"] / 100.0
    lo, hi = confint_proportions_2indep(ka, a["n"], kb, b["n"], method="newcomb",
                                        compare="diff")
    return f"{signed(a['accuracy'] - b['accuracy'])} [{r1(100 * lo)}, {r1(100 * hi)}]"


def against_text(against) -> str:
    if not against:
        return "the source's own labels"
    if "corpus" in against:
        long = against.get("too_long_lines") or 0
        return (f"corpus {against['corpus']} ({against.get('rows', 0):,} captions read"
                + (f"; {long:,} lines over 64 KiB skipped, no caption" if long else "") + ")")
    if "train" in against:
        return f"the run's {against['train']:,} train concepts"
    return str(against)


def seen_table(results, labels=None) -> Table | None:
    """Per benchmark: its items and chance per label, then a row per model."""
    labels = labels or {}
    have = [r for r in results if _seen(r)]
    if not have:
        return None
    groups = _labels_of(have)
    models = list(dict.fromkeys(r["model"] for r in have))
    idx = {(r["model"], r["benchmark"]): r for r in have}
    diff = "seen compounds" in groups and "unseen compounds" in groups
    header = ["Benchmark", "Row", *[SHORT.get(g, g) for g in groups],
              *(["UC - SC"] if diff else [])]
    rows = []
    for b in dict.fromkeys(r["benchmark"] for r in have):
        scored = {m: _seen(idx[(m, b)]) for m in models if (m, b) in idx}
        rows += _bench_rows(b, scored, groups, diff, labels)
    return Table("Seen / unseen: accuracy (%) by what training saw (CREPE Table 15 "
                 "layout); 95% interval in brackets", header, rows, _seen_notes(have))


def _bench_rows(bench: str, scored: dict, groups: list, diff: bool, labels: dict) -> list:
    """A benchmark's rows: its items and chance per label (as the first model's result
    counts them), then each model's accuracy per label (and UC - SC)."""
    first = next(iter(scored.values()))
    blank = ["-"] if diff else []
    rows = [[bench, "Items (n)", *[str(first[g]["n"]) if g in first else "-"
                                   for g in groups], *blank],
            [bench, "Random Chance", *[r1(first[g]["chance"]) if first.get(g) and
                                       first[g].get("chance") is not None else "-"
                                       for g in groups], *blank]]
    for m, s in scored.items():
        row = [bench, labels.get(m, m), *[ci(s[g]["accuracy"], s[g].get("interval"))
                                          if g in s else "-" for g in groups]]
        if diff:
            row.append(difference(s.get("unseen compounds"), s.get("seen compounds")))
        rows.append(row)
    return rows


def _seen_notes(have: list) -> list[str]:
    against = sorted({against_text((r.get("selection") or {}).get("seen_against"))
                      for r in have})
    notes = ["SC: every compound of the caption seen in training; UC: every atom seen, a "
             "compound not; UA: an atom never seen (CREPE's splits). UC - SC: Newcombe's "
             "95% interval for two independent proportions.",
             f"Seen against: {'; '.join(against)}."]
    splits = sorted({(r.get("selection") or {}).get("split") for r in have} - {None})
    if splits:
        notes.append(f"Items of the {', '.join(splits)} split only; the others left out "
                     "(each result's `selection` counts them).")
    return notes


def per_label_results(results, label: str) -> list[dict]:
    """The results as if their benchmarks held only the items labelled `label` (for the
    Auto-Comp tables, one label at a time)."""
    out = []
    for r in results:
        s = _seen(r).get(label)
        if not s:
            continue
        metrics = {"accuracy": s["accuracy"], "chance": s.get("chance"),
                   "ties": r["metrics"].get("ties"),
                   "intervals": {"accuracy": s["interval"]} if s.get("interval") else {}}
        out.append({**r, "metrics": metrics, "n_items": s["n"], "chance": s.get("chance")})
    return out

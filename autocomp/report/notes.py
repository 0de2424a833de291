"""Table footnotes: what an interval is, and what a column's benchmark lost after its
concepts were drawn (the build's ledger, bench/ledger.py) or never got."""

from __future__ import annotations

from autocomp.report.table_format import KIND_SHORT, TRACK_SHORT

INTERVALS_FOOTNOTE = ("Intervals: Clopper-Pearson (exact) over the cell's items (a bootstrap "
                      "over concepts where items share a concept); a model differs from "
                      "chance, or from another model, only where the intervals say so "
                      "(`autocomp report --compare A B` tests two models item by item).")


EXACT_NOTE = ("Intervals: Clopper-Pearson (exact) over the items (a bootstrap over concepts "
              "where items share one; a micro-average's over the pooled items).")


TIE_RULES = {"strict": "strict: a positive tied with a negative counts wrong (the papers' rule)",
             "aware": "tie-aware: 1/k of an item for a k-way tie at the top",
             "argmax": "argmax: a tie counts as the first of the tied, the positive "
                       "(what CLIP_benchmark's and MIEB's argmax intend; on an exact tie "
                       "their float rounding decides)"}


def rule_word(results) -> str:
    """The tie rule the results were scored under (`autocomp eval --ties`)."""
    rules = {r.get("ties", "strict") for r in results}
    return rules.pop() if len(rules) == 1 else "mixed tie rules"


def ties_note(results) -> str:
    from collections import Counter

    rules = Counter(r.get("ties", "strict") for r in results)
    if len(rules) <= 1:
        return f"Ties: {TIE_RULES[next(iter(rules), 'strict')]}."
    return ("Ties: cells scored under different rules (" + ", ".join(
        f"{rule}: {n}" for rule, n in sorted(rules.items())) + "); compare like with like.")


def subset_notes(results, cols) -> list[str]:
    """A footnote per column whose benchmark lost items after concepts were drawn (how
    many and why, as the build recorded them and eval copied them into each result)."""
    from autocomp.bench.ledger import subset_text

    notes = {}

    def label(r) -> str:
        return (f"{r['task']} N={r['n']} {TRACK_SHORT.get(r['track'], r['track'])} "
                f"{KIND_SHORT.get(r['kind'], r['kind'])}")

    for r in results:
        col = (r["task"], r["n"], r["track"], r["kind"])
        if col in cols and r.get("dropped"):
            notes[col] = (f"{label(r)}: {subset_text(r['benchmark'], r['dropped'])}; a subset, "
                          "not the whole benchmark")
    for r in results:  # ties a model's context made: its text tower saw the same words
        col = (r["task"], r["n"], r["track"], r["kind"])
        if col in cols and r.get("identical_text_ties"):
            notes.setdefault(col, label(r))
            notes[col] += (f"; {r['model']}: {r['identical_text_ties']:,} items tie a negative "
                           "exactly (identical within its context)")
    return [notes[c] for c in cols if c in notes]


def missing_notes(results) -> list[str]:
    """The benchmarks the scored runs' configs asked for that were never built, and why."""
    from autocomp.bench.ledger import read_ledger

    out = []
    for run in dict.fromkeys(r.get("run") for r in results if r.get("format", "run") == "run"):
        for name, why in (read_ledger(run).get("missing") or {}).items():
            out.append(f"{name} not built ({why})")
    return out


def selection_notes(results) -> list[str]:
    """What a run with splits scored: one split's items, the others left out (counted in
    each result's `selection`)."""
    from collections import Counter

    picked = [r["selection"] for r in results if r.get("selection")]
    if not picked:
        return []
    splits = sorted({p["split"] for p in picked})
    left: Counter = Counter()
    for p in picked:
        left.update(p.get("left_out") or {})
    out = ", ".join(f"{n:,} {s}" for s, n in sorted(left.items())) or "none"
    return [f"Items of the {' and '.join(splits)} split only (items left out over these "
            f"cells: {out}); by seen / unseen compounds in the Seen / unseen table."]

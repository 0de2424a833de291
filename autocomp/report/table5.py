"""Table 5: the paired set, Min vs Ctx (Auto-Comp's layout): each model's accuracy on the
concepts scored in both tracks, the difference with Newcombe's paired interval, the exact
McNemar p and Holm's adjustment (models and baselines in families of their own)."""

from __future__ import annotations

from autocomp.report.categories import BASELINES, model_type
from autocomp.report.notes import ties_note
from autocomp.report.table_format import (
    INTERVAL_NOTE,
    KIND_SHORT,
    Table,
    index_results,
    scored,
    signed,
)


def table5(results, labels=None) -> Table | None:
    """Min vs Ctx on the paired set: a row per model, task, N and benchmark kind, each
    accuracy with its interval, the delta with its paired interval and McNemar p, all
    under the tie rule each result was scored with. Holm's family is the rows of the
    models under test; baselines (reference and blind scorers) are adjusted in a family of
    their own, so adding a baseline never moves a model's adjusted p."""
    from autocomp.eval.intervals import holm
    from autocomp.report.paired import min_vs_ctx, p_text

    labels = labels or {}
    idx, models = index_results(results)
    groups = sorted({(r["task"], r["n"], r["kind"]) for r in results
                     if r["kind"] in ("swap", "confusion")},
                    key=lambda g: (g[0], g[1], g[2] != "swap"))
    rows, tests, used, disagree = [], {False: [], True: []}, [], []
    for m in models:
        for t, n, kind in groups:
            mini, ctx = (idx.get((m, t, n, tr, kind)) for tr in ("minimal", "contextual"))
            if not any(c and c["metrics"].get("accuracy_paired") is not None
                       for c in (mini, ctx)):
                continue
            used += [c for c in (mini, ctx) if c]
            d = min_vs_ctx(idx, m, t, n, kind)
            paired_n = d["n"] if d else (mini or ctx)["metrics"].get("paired_items")
            row = [labels.get(m, m), t, str(n), KIND_SHORT[kind], str(paired_n),
                   scored(mini, "accuracy_paired"), scored(ctx, "accuracy_paired")]
            if d is None:
                row += [delta_text(*(c["metrics"].get("accuracy_paired") if c else None
                                     for c in (ctx, mini))), "-", "-"]
            else:
                row += [f"{delta_text(d['delta'], 0.0)} [{delta_text(d['low'], 0.0)}, "
                        f"{delta_text(d['high'], 0.0)}]", p_text(d["p"]), None]
                baseline = model_type(mini or ctx) in BASELINES
                tests[baseline].append((len(rows), d["p"]))
                if (d["low"] > 0 or d["high"] < 0) != (d["p"] < 0.05):  # two methods
                    disagree.append(f"{labels.get(m, m)} {t} N={n} {KIND_SHORT[kind]}")
            rows.append(row)
    if not rows:
        return None
    for family in tests.values():
        for (i, _), adjusted in zip(family, holm([p for _, p in family]), strict=True):
            rows[i][-1] = p_text(adjusted)
    for row in rows:
        row[-1] = row[-1] or "-"
    families = {False: "the models' rows", True: "the baselines' rows (reference and blind "
                "scorers: a family of their own)"}
    family_text = " and ".join(f"{families[k]} ({len(v)})" for k, v in tests.items() if v)
    return Table("Table 5: paired set, Min vs Ctx accuracy (%) and Ctx - Min in points; "
                 + INTERVAL_NOTE,
                 ["Model", "Task", "N", "Benchmark", "Paired items", "Min", "Ctx",
                  "Δ (Ctx − Min)", "p", "p (Holm)"], rows,
                 ["Min and Ctx: Clopper-Pearson intervals over the paired items. Δ: Newcombe's "
                  "score interval for a paired difference, over the concepts scored in "
                  "both tracks; p: exact McNemar test of the concepts only one track got "
                  f"right; p (Holm): adjusted within {family_text or 'no family'} "
                  "(family-wise error 5%). Judge a difference by p (Holm): the interval is "
                  "per row.", ties_note(used) + " Δ and p follow each result's rule, as Min "
                  "and Ctx do (tie credits: the 2 x 2 table holds expected counts; p is the "
                  "paired sign-flip test of the credit differences)."
                  if any(c.get("ties") == "aware" for c in used) else
                  ties_note(used) + " Δ and p follow each result's rule, as Min and Ctx do.",
                  *([f"Δ's interval and p disagree in {len(disagree)} row(s) ("
                     + "; ".join(disagree[:5]) + (" ..." if len(disagree) > 5 else "")
                     + "): Newcombe's interval is approximate and the McNemar test exact; "
                       "with few discordant concepts (an exact p cannot fall below 0.0625 "
                       "with four) they can part. Trust p there."] if disagree else [])])


def delta_text(a, b) -> str:
    """a - b in points, signed ("+11.7", "-2.6", "0.0"); "-" where either is missing."""
    if a is None or b is None:
        return "-"
    return signed(float(a) - float(b))

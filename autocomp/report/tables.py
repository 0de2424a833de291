"""Result tables in the Auto-Comp layouts, from a folder of eval results.

  Table 4   accuracy per task x N x track x (swap, confusion), a Random Chance row first
  Table 5   paired set: Min vs Ctx (swap / confusion) and the deltas (report/table5.py)
  Table 6   error categories of confusion mistakes (attribute tasks), averaged per family
            (report/categories.py)
  Table 7   generative VLMs (vlm family) choosing among the captions, their own chance row
  Table 8   N = 1: vary value / vary object, per track
  Table 9   text-only (blind) scorers, tie-aware: where the captions give the answer away
  Table 13  per-relation accuracy on relation tasks, N = 2 swap
Numbers are rounded half up to one decimal, as the paper prints them.
"""

from __future__ import annotations

from pathlib import Path

from autocomp.core.errors import AutocompError
from autocomp.eval.scorers.choice import MAX_OPTIONS
from autocomp.report.categories import table6
from autocomp.report.external import EXTERNAL, external_tables
from autocomp.report.notes import (
    INTERVALS_FOOTNOTE,
    TIE_RULES,
    missing_notes,
    rule_word,
    selection_notes,
    subset_notes,
    ties_note,
)
from autocomp.report.shortcut import matched_table
from autocomp.report.table5 import table5
from autocomp.report.table_format import (
    INTERVAL_NOTE,
    KIND_SHORT,
    TRACK_SHORT,
    Table,
    ci,
    index_results,
    r1,
    scored,
)


def load_results(folder: Path, skipped: list | None = None) -> list[dict]:
    """Every result cell of a results folder; the files left out (unreadable, or not where
    eval writes them) are warned about, and added to `skipped` as (file, why) if given."""
    folder = Path(folder)
    if not folder.is_dir():
        raise AutocompError("no results folder (run `autocomp eval` first)", file=folder)
    from autocomp.eval.summary import read_cells

    out, left = read_cells(folder)
    if skipped is not None:
        skipped.extend(left)
    elif left:
        import warnings

        warnings.warn(f"{len(left)} result file(s) left out (first: {left[0][0]}: "
                      f"{left[0][1]}); `autocomp results check` lists them", stacklevel=2)
    if not out:
        raise AutocompError("no result files (*.json from `autocomp eval`)", file=folder)
    return out


def table4(results, labels=None, metric="accuracy", only=None, title=None) -> Table | None:
    labels = labels or {}
    if only is not None:
        results = [r for r in results if only(r["model"])]
    idx, models = index_results(results)
    cols = sorted({(r["task"], r["n"], r["track"], r["kind"]) for r in results
                   if r["kind"] in ("swap", "confusion")},
                  key=lambda c: (c[0], c[1], c[2] != "minimal", c[3] != "swap"))
    if not cols:
        return None
    header = ["Model", *[f"{t} N={n} {TRACK_SHORT.get(tr, tr)} {KIND_SHORT[k]}"
                         for t, n, tr, k in cols]]
    # a multiple-choice scorer shown 50 of a confusion item's captions has its own chance:
    # a second row where the table mixes it with scorers that see every caption
    full = _chance([r for r in results if not _subsampled(r)])
    part = _chance([r for r in results if _subsampled(r)])
    rows = [["Random Chance", *[r1(full.get(c, part.get(c))) if c in full or c in part
                                else "-" for c in cols]]]
    if any(c in full and c in part for c in cols):
        rows.append([f"Random Chance ({MAX_OPTIONS} options)",
                     *[r1(part[c]) if c in part else "-" for c in cols]])
    rows.append(["Items (n)", *[str(_items(idx, models, c)) for c in cols]])
    for m in models:
        rows.append([labels.get(m, m), *[scored(idx.get((m, *c)), metric) for c in cols]])
    if metric == "accuracy_tie_aware":  # recomputed tie-aware, whatever each result's rule
        ties = (f"Ties: {TIE_RULES['aware']} (every result carries it, whatever rule it was "
                "scored under).")
    else:
        ties = ties_note(results)
    return Table(f"{title or 'Table 4: accuracy (%), ' + TABLE4_RULE[rule_word(results)]}"
                 f"; {INTERVAL_NOTE}", header, rows,
                 [INTERVALS_FOOTNOTE, ties, *subset_notes(results, cols),
                  *selection_notes(results), *missing_notes(results)])


# Table 4's title under the rule its cells were scored with (issue 69: one fixed string)
TABLE4_RULE = {"strict": "positive strictly above every negative",
               "aware": "tie-aware: a positive tied with k-1 negatives at the top earns 1/k",
               "argmax": "argmax: a positive tied at the top counts right",
               "mixed tie rules": "cells under different tie rules (footnote)"}


def _items(idx, models, col) -> str | int:
    """The items of a column (the same for every model: they scored one benchmark)."""
    got = {idx[(m, *col)]["n_items"] for m in models if (m, *col) in idx}
    return "-" if not got else "/".join(str(n) for n in sorted(got))


def _subsampled(result: dict) -> bool:
    return bool((result.get("scorer_stats") or {}).get("subsampled"))


def _chance(results) -> dict:
    by_col = {}
    for r in results:
        by_col.setdefault((r["task"], r["n"], r["track"], r["kind"]), r["chance"])
    return by_col


def table7(results, labels=None) -> Table | None:
    """Generative VLMs choosing among the captions (vlm family)."""
    return table4(results, labels, only=_is_vlm,
                  title="Table 7: generative VLMs choosing among the captions, accuracy (%); "
                        f"confusion shows the positive + {MAX_OPTIONS - 1} negatives")


def place_bias_table(results, labels=None) -> Table | None:
    """Where multiple-choice test takers put their answers: per model, the answers pooled
    over its cells, the share naming the first option against the share an even spread
    over the places shown gives, the most picked place, and scipy's chi-square test."""
    from autocomp.eval.intervals import exact

    labels = labels or {}
    pooled: dict[str, dict] = {}
    for r in results:
        bias = r.get("position_bias")
        if not bias:
            continue
        got = pooled.setdefault(r["model"], {"obs": [], "exp": [], "names": [], "cells": 0})
        got["cells"] += 1
        got["obs"] = _add(got["obs"], bias["observed"])
        got["exp"] = _add(got["exp"], bias["expected"])
        if len(bias["labels"]) > len(got["names"]):
            got["names"] = bias["labels"]
    if not pooled:
        return None
    from scipy.stats import chisquare

    rows = []
    for model, got in sorted(pooled.items()):
        n = sum(got["obs"])
        top = max(range(len(got["obs"])), key=lambda i: got["obs"][i])
        fit = chisquare(got["obs"], got["exp"]) if len(got["obs"]) > 1 else None
        rows.append([labels.get(model, model), f"{n:,}", str(got["cells"]),
                     f"{ci(100 * got['obs'][0] / n, exact(got['obs'][0], n))} "
                     f"({100 * got['exp'][0] / n:.1f})",
                     f"{got['names'][top]} ({100 * got['obs'][top] / n:.1f})",
                     "-" if fit is None else f"{fit.statistic:.1f}",
                     "-" if fit is None else f"{fit.pvalue:.2g}"])
    return Table("Option-place bias of the multiple-choice test takers: answers (n) pooled "
                 f"over their cells; {INTERVAL_NOTE}", ["Model", "Answers (n)", "Cells",
                                                        "First option % (even spread)",
                                                        "Most picked (%)", "chi2", "p"], rows,
                 ["An even spread puts 1/K of a question's answer on each of its K places; "
                  "with @circular every place holds the right caption equally often, so a "
                  "small p means the model prefers a place, not that the places differ."])


def _add(a: list, b: list) -> list:
    """Two count lists added place by place (the shorter one padded with zeros)."""
    width = max(len(a), len(b))
    return [(a[i] if i < len(a) else 0) + (b[i] if i < len(b) else 0) for i in range(width)]


def _is_vlm(model: str) -> bool:
    return model.startswith("vlm:")


def table9(results, labels=None) -> Table | None:
    """Blind (text-only) scorers, tie-aware: a tie at the top is a random pick, so a scorer
    that cannot tell the captions apart sits exactly at chance."""
    return table4(results, labels, "accuracy_tie_aware",
                  only=lambda m: m.startswith(("blind:", "reference:random")),
                  title="Table 9: text-only scorers, tie-aware accuracy (%): chance means "
                        "the captions give nothing away")


def table8(results, labels=None) -> Table | None:
    labels = labels or {}
    idx, models = index_results(results)
    cols = sorted({(r["task"], r["track"], r["kind"]) for r in results if r["n"] == 1},
                  key=lambda c: (c[0], c[1] != "minimal", c[2]))
    if not cols:
        return None
    header = ["Model", *[f"{t} {TRACK_SHORT.get(tr, tr)} {KIND_SHORT[k]}" for t, tr, k in cols]]
    rows = [["Items (n)", *[str(_items(idx, models, (t, 1, tr, k))) for t, tr, k in cols]]]
    rows += [[labels.get(m, m), *[scored(idx.get((m, t, 1, tr, k))) for t, tr, k in cols]]
             for m in models]
    return Table(f"Table 8: N=1 accuracy (%); {INTERVAL_NOTE}", header, rows,
                 [INTERVALS_FOOTNOTE, ties_note(results)])


def table13(results, labels=None) -> Table | None:
    labels = labels or {}
    cells = [r for r in results if r["kind"] == "swap" and r["n"] == 2
             and r["metrics"].get("by_relation")]
    if not cells:
        return None
    rels = sorted({k for r in cells for k in r["metrics"]["by_relation"]})
    header = ["Model", "Task", "Track", *rels]
    rows = [[labels.get(r["model"], r["model"]), r["task"], TRACK_SHORT.get(r["track"]),
             *[_relation(r["metrics"]["by_relation"].get(k)) for k in rels]]
            for r in cells]
    return Table(f"Table 13: per-relation accuracy (%), N=2 swap; {INTERVAL_NOTE}, items "
                 "after n=", header, rows,
                 ["Intervals: Clopper-Pearson over the relation's items."])


def _relation(cell: dict | None) -> str:
    from autocomp.eval.intervals import exact

    if not cell or cell.get("accuracy") is None:
        return "-"
    right = round(cell["accuracy"] * cell["n"] / 100.0)
    return f"{ci(cell['accuracy'], exact(right, cell['n']))} n={cell['n']}"


def all_tables(results, labels=None, exclude_relations=None) -> list[Table]:
    return report_tables(results, labels, exclude_relations)[0]


def report_tables(results, labels=None, exclude_relations=None) -> tuple[list[Table],
                                                                          list[str]]:
    """(the Auto-Comp tables for results on autocomp runs, then the external formats' own;
    the tables left out and why)."""
    from autocomp.report.matrix_tables import synthetic_winoground_table

    ours = [r for r in results if r.get("format", "run") not in EXTERNAL]
    tables, skipped = [], []
    if ours:
        plain = [r for r in ours if r.get("kind") != "winoground"]  # its own table
        for name, made, why in (
                ("Table 4", table4(plain, labels, only=lambda m: not _is_vlm(m)),
                 "no swap or confusion results of contrastive scorers"),
                ("Table 5", table5(plain, labels), "no paired-set results"),
                ("Table 6", table6(plain) or None,
                 "no confusion errors on attribute tasks to break down"),
                ("Table 7", table7(plain, labels), "no generative VLM (vlm:) results"),
                ("Option-place bias", place_bias_table(ours, labels),
                 "no multiple-choice (vlm:, blind:choice) results"),
                ("Table 8", table8(plain, labels), "no N = 1 (vary value / object) results"),
                ("Table 9", table9(plain, labels), "no text-only (blind:) scorer results"),
                ("Confusion without the shortcut", matched_table(plain, labels),
                 "no confusion results with shortcut-matched negatives"),
                ("Table 13", table13(plain, labels), "no N = 2 swap results by relation"),
                ("Synthetic Winoground", synthetic_winoground_table(ours, labels),
                 "no winoground benchmarks in the runs")):
            if made is None:
                skipped.append(f"{name} ({why})")
            else:
                tables += made if isinstance(made, list) else [made]
    tables += _seen_tables(results, labels)  # runs with splits, CREPE systematicity
    return tables + external_tables(results, labels, exclude_relations), skipped


def _seen_tables(results, labels) -> list[Table]:
    """The seen / unseen table and Table 4 on each label's items (report/seen.py)."""
    from autocomp.report.seen import ORDER, per_label_results, seen_table

    got = seen_table(results, labels)
    if got is None:
        return []
    out = [got]
    plain = [r for r in results if r.get("kind") != "winoground"]
    for label in ORDER:
        part = per_label_results(plain, label)
        made = table4(part, labels, only=lambda m: not _is_vlm(m),
                      title=f"Table 4, {label} only: accuracy (%), positive strictly above "
                            "every negative") if part else None
        if made is not None:
            out.append(made)
    return out

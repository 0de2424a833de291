"""Result tables in the Auto-Comp layouts, from a folder of eval results.

  Table 4   accuracy per task x N x track x (swap, confusion), a Random Chance row first
  Table 5   paired set: Min vs Ctx (swap / confusion) and the deltas
  Table 6   error categories of confusion mistakes (attribute tasks), averaged per family
  Table 7   generative VLMs (vlm family) choosing among the captions, their own chance row
  Table 8   N = 1: vary value / vary object, per track
  Table 9   text-only (blind) scorers, tie-aware: where the captions give the answer away
  Table 13  per-relation accuracy on relation tasks, N = 2 swap
Numbers are rounded half up to one decimal, as the paper prints them.
"""

from __future__ import annotations

from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from autocomp.core.errors import AutocompError
from autocomp.eval.scorers.choice import MAX_OPTIONS
from autocomp.report.external import EXTERNAL, external_tables
from autocomp.report.table import INTERVAL_NOTE, TRACK_SHORT, Table, ci, r1, scored

KIND_SHORT = {"swap": "Swap", "confusion": "Conf.", "vary_value": "Vary value",
              "vary_object": "Vary obj."}
ATTRIBUTE_CATEGORIES = ("swapped values", "same value / different objects",
                        "same value / same object", "same object / different values")
BASELINES = ("reference", "blind")  # scorer types that are not models under test


def load_results(folder: Path) -> list[dict]:
    folder = Path(folder)
    if not folder.is_dir():
        raise AutocompError("no results folder (run `autocomp eval` first)", file=folder)
    from autocomp.eval.summary import read_cells

    out, unreadable = read_cells(folder)
    if unreadable:
        import warnings

        warnings.warn(f"{len(unreadable)} result file(s) could not be read and are left out "
                      f"(first: {unreadable[0]}); `autocomp eval --skip_existing` does them "
                      "again", stacklevel=2)
    if not out:
        raise AutocompError("no result files (*.json from `autocomp eval`)", file=folder)
    return out


def model_type(result: dict) -> str:
    """The type the scorer declared (results written before it did: read off the spec)."""
    if "model_type" in result:
        return result["model_type"]
    fam = result["model"].split(":", 1)[0]
    if fam in ("reference", "blind"):
        return fam
    return "SigLIP" if "siglip" in result["model"].lower() else "CLIP"


def index_results(results):
    """(model, task, N, track, kind) -> result, and the models in the order first seen."""
    idx = {}
    for r in results:
        idx[(r["model"], r["task"], r["n"], r["track"], r["kind"])] = r
    models = list(dict.fromkeys(r["model"] for r in results))
    return idx, models


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
    return Table(f"{title or 'Table 4: accuracy (%), positive strictly above every negative'}"
                 f"; {INTERVAL_NOTE}", header, rows,
                 [INTERVALS_FOOTNOTE, *subset_notes(results, cols), *missing_notes(results)])


INTERVALS_FOOTNOTE = ("Intervals: Clopper-Pearson (exact) over the cell's items (a bootstrap "
                      "over concepts where items share a concept); a model differs from "
                      "chance, or from another model, only where the intervals say so "
                      "(`autocomp report --compare A B` tests two models item by item).")


def _items(idx, models, col) -> str | int:
    """The items of a column (the same for every model: they scored one benchmark)."""
    got = {idx[(m, *col)]["n_items"] for m in models if (m, *col) in idx}
    return "-" if not got else "/".join(str(n) for n in sorted(got))


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


def _is_vlm(model: str) -> bool:
    return model.startswith("vlm:")


def table9(results, labels=None) -> Table | None:
    """Blind (text-only) scorers, tie-aware: a tie at the top is a random pick, so a scorer
    that cannot tell the captions apart sits exactly at chance."""
    return table4(results, labels, "accuracy_tie_aware",
                  only=lambda m: m.startswith(("blind:", "reference:random")),
                  title="Table 9: text-only scorers, tie-aware accuracy (%): chance means "
                        "the captions give nothing away")


def table5(results, labels=None) -> Table | None:
    """Min vs Ctx on the paired set: a row per model, task, N and benchmark kind, each
    accuracy with its interval, the delta with its paired interval and McNemar p."""
    from autocomp.eval.intervals import holm
    from autocomp.report.paired import min_vs_ctx, p_text

    labels = labels or {}
    idx, models = index_results(results)
    groups = sorted({(r["task"], r["n"], r["kind"]) for r in results
                     if r["kind"] in ("swap", "confusion")},
                    key=lambda g: (g[0], g[1], g[2] != "swap"))
    rows, tests = [], []
    for m in models:
        for t, n, kind in groups:
            mini, ctx = (idx.get((m, t, n, tr, kind)) for tr in ("minimal", "contextual"))
            if not any(c and c["metrics"].get("accuracy_paired") is not None
                       for c in (mini, ctx)):
                continue
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
                tests.append((len(rows), d["p"]))
            rows.append(row)
    if not rows:
        return None
    for (i, _), adjusted in zip(tests, holm([p for _, p in tests]), strict=True):
        rows[i][-1] = p_text(adjusted)
    for row in rows:
        row[-1] = row[-1] or "-"
    return Table("Table 5: paired set, Min vs Ctx accuracy (%) and Ctx - Min in points; "
                 + INTERVAL_NOTE,
                 ["Model", "Task", "N", "Benchmark", "Paired items", "Min", "Ctx",
                  "Δ (Ctx − Min)", "p", "p (Holm)"], rows,
                 ["Min and Ctx: Clopper-Pearson intervals over the paired items. Δ: Newcombe's "
                  "score interval for a paired difference, over the concepts scored in "
                  "both tracks; p: exact McNemar test of the concepts only one track got "
                  "right; p (Holm): adjusted over every row of this table (family-wise "
                  "error 5%). Judge a difference by p (Holm): the interval is per row."])


def delta_text(a, b) -> str:
    if a is None or b is None:
        return "-"
    d = Decimal(repr(float(a) - float(b))).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)
    return f"+{d}" if d > 0 else str(d)


def table6(results) -> list[Table]:
    """Per attribute task: the share of confusion errors by the chosen negative's category,
    a row per model type (the mean over its cells, with an interval), "Total" over the
    encoders' cells only, and the baselines (reference, blind scorers) in rows of their
    own, never in Total. A pick of a negative that means what the positive means is its own
    category, not "swapped values"."""
    from autocomp.eval.metrics import SAME_MEANING, TIED

    categories = (*ATTRIBUTE_CATEGORIES, SAME_MEANING, TIED)
    out = []
    tasks = sorted({r["task"] for r in results if r["kind"] == "confusion"
                    and any(k in ATTRIBUTE_CATEGORIES for k in
                            r["metrics"].get("errors_by_category", {}))})
    for task in tasks:
        ns = sorted({r["n"] for r in results if r["task"] == task and r["kind"] == "confusion"})
        per_family: dict[str, list[dict]] = defaultdict(list)
        for r in results:
            if r["task"] != task or r["kind"] != "confusion":
                continue
            errs = r["metrics"].get("errors_by_category", {})
            if sum(errs.get(c, 0) for c in categories):
                per_family[model_type(r)].append(
                    {"n": r["n"], "counts": [errs.get(c, 0) for c in categories]})
        aspect = next((r["aspect"] for r in results if r["task"] == task and r.get("aspect")),
                      None)
        header = ["Model type", *[h for n in ns for h in (
            f"N={n} errors (cells)", *[f"N={n} {category_label(c, aspect)}"
                                       for c in categories])]]
        encoders = sorted(f for f in per_family if f not in BASELINES)
        baselines = sorted(f for f in per_family if f in BASELINES)
        total = [x for f in encoders for x in per_family[f]]
        rows = [_share_row(f, per_family[f], ns) for f in encoders]
        if encoders:
            rows.append(_share_row("Total (encoders)", total, ns))
        rows += [_share_row(f"{f} (baseline)", per_family[f], ns) for f in baselines]
        pooled = ", ".join(encoders) or "none: no encoder results here"
        out.append(Table(f"Table 6: {task}, share (%) of confusion errors by the chosen "
                         f"negative's category, mean over the cells of each model type; "
                         f"{INTERVAL_NOTE}", header, rows,
                         [f"Total (encoders) pools the cells of: {pooled}. Baseline rows "
                          "(reference and blind scorers) are shown apart and pooled into no "
                          "total.",
                          f"'{SAME_MEANING}': the negative chosen says what the positive "
                          "says (an edit that changed nothing the caption asserts); such a "
                          "pick is counted here, not as swapped values. "
                          f"'{TIED}': the positive tied with negatives for the top score "
                          "(wrong under the strict rule, but no negative was preferred).",
                          "Intervals: Clopper-Pearson for one cell; for several, a "
                          "bootstrap of each cell's errors, stratified by cell."]))
    return out


def _share_row(name: str, cells: list[dict], ns: list[int]) -> list[str]:
    from autocomp.eval.intervals import mean_shares

    row = [name]
    for n in ns:
        mine = [c["counts"] for c in cells if c["n"] == n]
        if not mine:
            row += ["-"] * (1 + len(ATTRIBUTE_CATEGORIES) + 2)
            continue
        row.append(f"{sum(map(sum, mine)):,} ({len(mine)})")
        row += [ci(mean, interval) for mean, interval in mean_shares(mine)]
    return row


def category_label(category: str, aspect: dict | None) -> str:
    """A Table 6 category in the task's own words ("same material / different objects")."""
    if not aspect:
        return category
    return (category.replace("values", aspect["plural"])
            .replace("value", aspect["name"]))


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
                 [INTERVALS_FOOTNOTE])


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
                ("Table 8", table8(plain, labels), "no N = 1 (vary value / object) results"),
                ("Table 9", table9(plain, labels), "no text-only (blind:) scorer results"),
                ("Table 13", table13(plain, labels), "no N = 2 swap results by relation"),
                ("Synthetic Winoground", synthetic_winoground_table(ours, labels),
                 "no winoground benchmarks in the runs")):
            if made is None:
                skipped.append(f"{name} ({why})")
            else:
                tables += made if isinstance(made, list) else [made]
    return tables + external_tables(results, labels, exclude_relations), skipped

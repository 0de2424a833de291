"""Table 6: which negative a model picked when it got a confusion item wrong (attribute
tasks), by the negative's edit category, averaged over the cells of each model type;
encoders are totalled, baselines (reference and blind scorers) shown apart."""

from __future__ import annotations

from collections import defaultdict

from autocomp.report.table_format import INTERVAL_NOTE, Table, ci

ATTRIBUTE_CATEGORIES = ("swapped values", "same value / different objects",
                        "same value / same object", "same object / different values")
BASELINES = ("reference", "blind")  # scorer types that are not models under test


def baseline_of(result: dict) -> str | None:
    """"blind", "reference" or None, as the scorer declared it (results written before it
    did: read off the spec's family)."""
    if "baseline" in result:
        got = result["baseline"]
        return got if got in BASELINES else None
    fam = str(result.get("family") or result["model"].split(":", 1)[0])
    return fam if fam in BASELINES else None


def model_type(result: dict) -> str:
    """The type the scorer declared (results written before it did: read off the spec)."""
    if "model_type" in result:
        return result["model_type"]
    fam = result["model"].split(":", 1)[0]
    if fam in ("reference", "blind"):
        return fam
    return "SigLIP" if "siglip" in result["model"].lower() else "CLIP"


def table6(results) -> list[Table]:
    """Per attribute task: the share of confusion errors by the chosen negative's category,
    a row per model type (the mean over its cells, with an interval), "Total" over the
    encoders' cells only, and each baseline (reference, blind scorer) in a row of its own,
    never pooled. A pick of a negative that means what the positive means is its own
    category, not "swapped values"."""
    tasks = sorted({r["task"] for r in results if r["kind"] == "confusion"
                    and any(k in ATTRIBUTE_CATEGORIES for k in
                            r["metrics"].get("errors_by_category", {}))})
    return [_task_table(task, [r for r in results if r["task"] == task
                               and r["kind"] == "confusion"],
                        next((r["aspect"] for r in results
                              if r["task"] == task and r.get("aspect")), None))
            for task in tasks]


def _categories() -> tuple[str, ...]:
    from autocomp.eval.metrics import SAME_MEANING, TIED

    return (*ATTRIBUTE_CATEGORIES, SAME_MEANING, TIED)


def _cells(mine: list[dict]) -> tuple[dict[str, list[dict]], set[str]]:
    """The task's confusion cells with errors, by model type (a baseline: by its own
    scorer), and which of those keys are baselines."""
    categories = _categories()
    per_family: dict[str, list[dict]] = defaultdict(list)
    baselines: set[str] = set()  # keys of per_family that are one baseline scorer
    for r in mine:
        errs = r["metrics"].get("errors_by_category", {})
        family = model_type(r)
        # a baseline is a row of its own scorer: bag-of-concepts (every swap a tie) and
        # random (no ties) pooled would mean nothing
        if sum(errs.get(c, 0) for c in categories):
            key = r["model"] if family in BASELINES else family
            if family in BASELINES:
                baselines.add(key)
            per_family[key].append({"n": r["n"], "counts": [errs.get(c, 0)
                                                            for c in categories]})
    return per_family, baselines


def _task_table(task: str, mine: list[dict], aspect: dict | None) -> Table:
    """Table 6 of one task, from its confusion results (`aspect`: the task's words)."""
    from autocomp.eval.metrics import SAME_MEANING, TIED

    ns = sorted({r["n"] for r in mine})
    per_family, baselines = _cells(mine)
    header = ["Model type", *[h for n in ns for h in (
        f"N={n} errors (cells)", *[f"N={n} {category_label(c, aspect)}"
                                   for c in _categories()])]]
    encoders = sorted(f for f in per_family if f not in baselines)
    rows = [_share_row(f, per_family[f], ns) for f in encoders]
    if encoders:
        rows.append(_share_row("Total (encoders)",
                               [x for f in encoders for x in per_family[f]], ns))
    rows += [_share_row(f"{f} (baseline)", per_family[f], ns) for f in sorted(baselines)]
    pooled = ", ".join(encoders) or "none: no encoder results here"
    return Table(f"Table 6: {task}, share (%) of confusion errors by the chosen negative's "
                 f"category, mean over the cells of each model type; {INTERVAL_NOTE}",
                 header, rows,
                 [f"Total (encoders) pools the cells of: {pooled}. Baseline rows "
                  "(reference and blind scorers) are shown apart, one per scorer, and "
                  "pooled into no total.",
                  f"'{SAME_MEANING}': the negative chosen says what the positive says (an "
                  "edit that changed nothing the caption asserts); such a pick is counted "
                  f"here, not as swapped values. '{TIED}': the positive tied with "
                  "negatives for the top score (wrong under the strict rule, but no "
                  "negative was preferred).",
                  "Intervals: Clopper-Pearson for one cell; for several, a bootstrap of "
                  "each cell's errors, stratified by cell."])


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

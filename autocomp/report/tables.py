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
from autocomp.report.table import TRACK_SHORT, Table, r1

KIND_SHORT = {"swap": "Swap", "confusion": "Conf.", "vary_value": "Vary value",
              "vary_object": "Vary obj."}
ATTRIBUTE_CATEGORIES = ("swapped values", "same value / different objects",
                        "same value / same object", "same object / different values")


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
    for m in models:
        rows.append([labels.get(m, m), *[
            r1(idx[(m, *c)]["metrics"][metric]) if (m, *c) in idx else "-" for c in cols]])
    return Table(title or "Table 4: accuracy (%), positive strictly above every negative",
                 header, rows)


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
    labels = labels or {}
    idx, models = index_results(results)
    groups = sorted({(r["task"], r["n"]) for r in results if r["kind"] in ("swap", "confusion")})
    header, rows = ["Model"], []
    for t, n in groups:
        header += [f"{t} N={n} Min", f"{t} N={n} Ctx", f"{t} N={n} ΔS", f"{t} N={n} ΔC"]
    any_value = False
    for m in models:
        row = [labels.get(m, m)]
        for t, n in groups:
            acc = {(tr, k): (idx.get((m, t, n, tr, k)) or {}).get("metrics", {}).get(
                "accuracy_paired") for tr in ("minimal", "contextual")
                for k in ("swap", "confusion")}
            any_value |= any(v is not None for v in acc.values())
            row += [f"{r1(acc['minimal', 'swap'])}/{r1(acc['minimal', 'confusion'])}",
                    f"{r1(acc['contextual', 'swap'])}/{r1(acc['contextual', 'confusion'])}",
                    delta_text(acc["contextual", "swap"], acc["minimal", "swap"]),
                    delta_text(acc["contextual", "confusion"], acc["minimal", "confusion"])]
        rows.append(row)
    if not groups or not any_value:
        return None
    return Table("Table 5: paired set, Min vs Ctx accuracy (%) swap/confusion, deltas in "
                 "points", header, rows)


def delta_text(a, b) -> str:
    if a is None or b is None:
        return "-"
    d = Decimal(repr(float(a) - float(b))).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)
    return f"+{d}" if d > 0 else str(d)


def table6(results) -> list[Table]:
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
            total = sum(errs.values())
            if total:
                share = {c: 100.0 * errs.get(c, 0) / total for c in ATTRIBUTE_CATEGORIES}
                per_family[model_type(r)].append({"n": r["n"], **share})
        aspect = next((r["aspect"] for r in results if r["task"] == task and r.get("aspect")),
                      None)
        header = ["Model type", *[f"N={n} {category_label(c, aspect)}" for n in ns
                                  for c in ATTRIBUTE_CATEGORIES]]
        rows = []
        everyone = [x for xs in per_family.values() for x in xs]
        for fam, shares in [*sorted(per_family.items()), ("Total", everyone)]:
            row = [fam]
            for n in ns:
                mine = [s for s in shares if s["n"] == n]
                for c in ATTRIBUTE_CATEGORIES:
                    row.append(f"{sum(s[c] for s in mine) / len(mine):.2f}" if mine else "-")
            rows.append(row)
        out.append(Table(f"Table 6: {task}, share (%) of confusion errors by the chosen "
                         "negative's category, averaged over the cells of each family",
                         header, rows))
    return out


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
    rows = [[labels.get(m, m), *[r1(idx[(m, t, 1, tr, k)]["metrics"]["accuracy"])
                                 if (m, t, 1, tr, k) in idx else "-" for t, tr, k in cols]]
            for m in models]
    return Table("Table 8: N=1 accuracy (%)", header, rows)


def table13(results, labels=None) -> Table | None:
    labels = labels or {}
    cells = [r for r in results if r["kind"] == "swap" and r["n"] == 2
             and r["metrics"].get("by_relation")]
    if not cells:
        return None
    rels = sorted({k for r in cells for k in r["metrics"]["by_relation"]})
    header = ["Model", "Task", "Track", *rels]
    rows = [[labels.get(r["model"], r["model"]), r["task"], TRACK_SHORT.get(r["track"]),
             *[r1(r["metrics"]["by_relation"].get(k, {}).get("accuracy")) for k in rels]]
            for r in cells]
    return Table("Table 13: per-relation accuracy (%), N=2 swap", header, rows)


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

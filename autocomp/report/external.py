"""Tables for benchmarks in other formats, in their authors' layouts.

  SugarCrepe  accuracy per subset (strict: a tie is wrong, as the authors' script) and
              tie-aware, with the micro-average over subsets (items pooled)
  CREPE       Recall@1/3/5 and mean rank of the positive per type and complexity
  columns     accuracy (strict, tie-aware) and chance per subset (text, image and group
              scores for items of several images)
  winoground, colorswap, aro: report/matrix_tables.py
"""

from __future__ import annotations

from collections import defaultdict

from autocomp.report.notes import EXACT_NOTE
from autocomp.report.table_format import INTERVAL_NOTE, Table, ci, r1, scored

EXTERNAL = ("sugarcrepe", "crepe", "columns", "winoground", "colorswap", "aro",
            "vl-checklist", "valse", "sugarcrepe++")


def _label(labels, model):
    return (labels or {}).get(model, model)


def _pair(r: dict) -> str:
    return f"{scored(r)} ({r1(r['metrics']['accuracy_tie_aware'])})"


def sugarcrepe_table(results, labels=None) -> Table | None:
    rows = [r for r in results if r.get("format") == "sugarcrepe"]
    if not rows:
        return None
    subsets = sorted({r["kind"] for r in rows})
    by_model = defaultdict(dict)
    for r in rows:
        by_model[r["model"]][r["kind"]] = r
    out = []
    for model, cells in by_model.items():
        n = sum(c["n_items"] for c in cells.values())
        strict = sum(c["metrics"]["accuracy"] * c["n_items"] for c in cells.values()) / n
        tie = sum(c["metrics"]["accuracy_tie_aware"] * c["n_items"]
                  for c in cells.values()) / n
        from autocomp.eval.intervals import exact

        out.append([_label(labels, model),
                    *[_pair(cells[s]) if s in cells else "-" for s in subsets],
                    f"{ci(strict, exact(round(strict * n / 100.0), n))} ({r1(tie)})", str(n)])
    return Table("SugarCrepe: accuracy (%) per subset, strict with its "
                 f"{INTERVAL_NOTE} (tie-aware); micro-average over the subsets' items; "
                 "captions whitespace-normalised",
                 ["Model", *subsets, "Micro avg", "Items"], out, [EXACT_NOTE])


def crepe_table(results, labels=None) -> Table | None:
    rows = [r for r in results if r.get("format") == "crepe"]
    if not rows:
        return None
    out = []
    for r in sorted(rows, key=lambda r: (r["model"], r["kind"], r["n"])):
        m = r["metrics"]
        flagged = sum(v for k, v in (r.get("source_info", {}).get("flagged") or {}).items()
                      if k.startswith(f"{r['benchmark']}:"))
        out.append([_label(labels, r["model"]), r["kind"],
                    str(r["n"]) if r["n"] else r["track"], scored(r),
                    r1(m.get("recall@3")), r1(m.get("recall@5")),
                    "-" if m.get("mean_rank") is None else f"{m['mean_rank']:.2f}",
                    r1(m["chance"]), str(r["n_items"]), str(flagged)])
    return Table("CREPE: Recall@1/3/5 (%) and mean rank of the positive (ties "
                 f"against it), R@1 with its {INTERVAL_NOTE}; flagged: rows whose positive is "
                 "among its negatives",
                 ["Model", "Type", "N / trained on", "R@1", "R@3", "R@5", "Mean rank",
                  "Chance R@1", "Items", "Flagged"], out,
                 [EXACT_NOTE, "Systematicity (syst-*): the seen / unseen compounds split of "
                  "each is in the Seen / unseen table."])


def columns_table(results, labels=None) -> Table | None:
    rows = [r for r in results if r.get("format") == "columns"]
    if not rows:
        return None
    out = [[_label(labels, r["model"]), r["benchmark"], scored(r),
            scored(r, "accuracy_tie_aware"), r1(r["metrics"]["chance"]),
            scored(r, "image_score"), scored(r, "group_score"),
            str(r["n_items"])] for r in sorted(rows, key=lambda r: (r["model"],
                                                                     r["benchmark"]))]
    return Table("Column-mapped benchmarks: accuracy (%; the text score for items of "
                 "several images), strict and tie-aware; image and group scores where items "
                 f"have several images; {INTERVAL_NOTE}",
                 ["Model", "Benchmark", "Accuracy", "Tie-aware", "Chance", "Image", "Group",
                  "Items"], out, [EXACT_NOTE])


PEERS = {"vl-checklist": "VL-CheckList: first POS above first NEG (its itc task)",
         "valse": "VALSE: caption above foil on the valid set (pairwise acc_r)",
         "sugarcrepe++": "SugarCrepe++: <subset> both positives above the negative on the "
                         "image (ITT), <subset>-tot the positives closer to each other than "
                         "to the negative (TOT); side metrics Image-P1-Neg and Image-P2-Neg: "
                         "each positive alone above the negative, as the authors report"}


def peers_table(results, labels=None) -> Table | None:
    """VL-CheckList, VALSE and SugarCrepe++, each scored as its authors define it."""
    rows = [r for r in results if r.get("format") in PEERS]
    if not rows:
        return None
    out = []
    for r in sorted(rows, key=lambda r: (r["benchmark"], r["model"])):
        left = sum((r.get("skipped_items") or {}).values()) + sum(
            v for k, v in ((r.get("source_info") or {}).get("left_out") or {}).items()
            if k.startswith(f"{r['benchmark']}: "))
        side = "; ".join(f"{name} {ci(m['accuracy'], m['interval'])}"
                         for name, m in (r["metrics"].get("side") or {}).items())
        out.append([_label(labels, r["model"]), r["benchmark"], scored(r),
                    r1(r["metrics"]["chance"]), side or "-", str(r["n_items"]), str(left)])
    formats = [f for f in PEERS if any(r.get("format") == f for r in rows)]
    header = ["Model", "Benchmark", "Accuracy", "Chance", "Side metrics (chance 50.0)",
              "Items", "Left out"]
    if all(row[4] == "-" for row in out):  # only SugarCrepe++'s ITT has side metrics
        header.pop(4)
        out = [row[:4] + row[5:] for row in out]
    return Table(f"Peer benchmarks: accuracy (%) as each defines it; {INTERVAL_NOTE}",
                 header, out,
                 [EXACT_NOTE, *[PEERS[f] for f in formats],
                  "Left out: the source's own exclusions (VALSE's foils outside the "
                  "annotators' valid set, in each result's source_info.left_out) and items "
                  "the model cannot score (the text-only task needs caption vectors; a text "
                  "embedding model sees no image: skipped_items)."])


def external_tables(results, labels=None, exclude_relations=None) -> list[Table]:
    from autocomp.report.matrix_tables import aro_table, pairs_table
    from autocomp.report.vlchecklist import vlchecklist_types_table

    tables = [sugarcrepe_table(results, labels), crepe_table(results, labels),
              columns_table(results, labels), peers_table(results, labels),
              vlchecklist_types_table(results, labels),
              *pairs_table(results, labels),
              aro_table(results, labels, exclude_relations)]
    return [t for t in tables if t is not None]

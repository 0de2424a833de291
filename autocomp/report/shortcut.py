"""Confusion without its text-only shortcut: every Confusion cell's accuracy on all its
negatives beside its accuracy on the shortcut-matched negatives (those keeping the
positive's distinct objects and values, none saying what the positive says:
negatives/shortcut.py), each with its chance and
interval. Where the two differ far more than their chances do, part of the full accuracy
can come from a caption repeating a word (blind:distinct reaches it without the image)."""

from __future__ import annotations

from autocomp.report.table_format import INTERVAL_NOTE, TRACK_SHORT, Table, r1, scored


def matched_table(results, labels=None) -> Table | None:
    labels = labels or {}
    cells = [r for r in results if r.get("kind") == "confusion"
             and r["metrics"].get("accuracy_matched") is not None]
    if not cells:
        return None
    order = {m: i for i, m in enumerate(dict.fromkeys(r["model"] for r in cells))}
    rows = []
    for r in sorted(cells, key=lambda r: (order[r["model"]], r["task"], r["n"],
                                          r["track"] != "minimal")):
        m = r["metrics"]
        rows.append([labels.get(r["model"], r["model"]), r["task"], str(r["n"]),
                     TRACK_SHORT.get(r["track"], r["track"]), str(r["n_items"]),
                     scored(r, "accuracy"), r1(m.get("chance")),
                     str(m["matched_items"]), scored(r, "accuracy_matched"),
                     r1(m.get("chance_matched")),
                     scored(r, "accuracy_tie_aware"), scored(r, "accuracy_matched_tie_aware")])
    rule = {r.get("ties", "strict") for r in cells}
    return Table("Confusion with and without its text-only shortcut: accuracy (%) on all "
                 "negatives and on the shortcut-matched negatives, each with its chance; "
                 + INTERVAL_NOTE,
                 ["Model", "Task", "N", "Track", "Items", "All", "Chance", "Matched items",
                  "Matched", "Chance (matched)", "All, tie-aware", "Matched, tie-aware"],
                 rows,
                 ["Matched: each item scored against only its negatives that keep the "
                  "positive's count of distinct objects and of distinct values (its own, "
                  "rearranged) and do not say what the positive says (the positive "
                  "reordered is true of the image), so a caption never gives itself away "
                  "by repeating a word; our addition, not the paper's (docs/methods.md).",
                  "Every matched caption has the positive's bag of words: a bag-of-words "
                  "scorer ties them all by construction (strict 0, tie-aware exactly "
                  "chance), so a blind scorer at chance there is no evidence; a model above "
                  "the matched chance binds words to objects.",
                  "All and Matched follow the results' tie rule ("
                  + ", ".join(sorted(rule)) + "); the tie-aware columns are beside them."])


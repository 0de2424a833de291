"""Tables for items of several images and for ARO, in their authors' layouts.

  Winoground / ColorSwap  text, image and group scores (%) per model, strict with the
              tie-aware score in brackets, a Random Chance row (25 / 25 / 16.7); Winoground
              also per tag (Object, Relation, Both) and number of main predicates
  Synthetic Winoground    the same per task x N x track of an autocomp run (kind
              "winoground": each concept and its swapped concept, both generated)
  ARO         VG-Relation and VG-Attribution macro accuracy (the authors' rules), COCO- and
              Flickr30k-Order accuracy as the mean and standard deviation over seeds
"""

from __future__ import annotations

from collections import defaultdict

from autocomp.report.notes import EXACT_NOTE, rule_word, ties_note
from autocomp.report.table_format import INTERVAL_NOTE, TRACK_SHORT, Table, ci, r1, scored

PAIRS = ("winoground", "colorswap")


def _label(labels, model):
    return (labels or {}).get(model, model)


def _score(r: dict, key: str) -> str:
    """"62.5 [55.1, 69.4] (63.0)": strict with its interval, tie-aware in parentheses."""
    tie = r["metrics"].get(f"{key}_tie_aware")
    return f"{scored(r, key)} ({r1(tie)})"


def _chance_row(cells, width: int) -> list[str]:
    m = cells[0]["metrics"]
    return ["Random Chance", *[""] * width, r1(m.get("chance_text")),
            r1(m.get("chance_image")), r1(m.get("chance_group")), ""]


def pairs_table(results, labels=None) -> list[Table]:
    tables = []
    for fmt in PAIRS:
        rows = [r for r in results if r.get("format") == fmt]
        if not rows:
            continue
        out = [_chance_row(rows, 1)]
        for r in sorted(rows, key=lambda r: r["benchmark"]):
            out.append([_label(labels, r["model"]), r["benchmark"], _score(r, "text_score"),
                        _score(r, "image_score"), _score(r, "group_score"),
                        str(r["n_items"])])
        tables.append(Table(f"{fmt.capitalize()}: text, image and group scores (%), "
                            f"{rule_word(rows)} with its {INTERVAL_NOTE} (tie-aware)",
                            ["Model", "Benchmark", "Text", "Image", "Group", "Items"], out,
                            [EXACT_NOTE, ties_note(rows)]))
        by = [r for r in rows if (r["metrics"].get("by") or {})]
        if by:
            tables.append(_by_table(fmt, by, labels))
    return tables


def _by_table(fmt: str, rows, labels) -> Table:
    out = []
    for r in rows:
        for dim, values in sorted(r["metrics"]["by"].items()):
            for value, v in sorted(values.items()):
                out.append([_label(labels, r["model"]), dim, value,
                            *[_exact(v.get(k), v["n"]) for k in
                              ("text_score", "image_score", "group_score")], str(v["n"])])
    return Table(f"{fmt.capitalize()} by tag: text, image and group scores (%), "
                 f"{rule_word(rows)}; " + INTERVAL_NOTE,
                 ["Model", "Tag", "Value", "Text", "Image", "Group", "Items"],
                 out, [EXACT_NOTE, ties_note(rows)])


def _exact(value, n: int) -> str:
    """A score of n items with its Clopper-Pearson interval."""
    from autocomp.eval.intervals import exact

    if value is None:
        return "-"
    return ci(value, exact(round(value * n / 100.0), n))


def synthetic_winoground_table(results, labels=None) -> Table | None:
    rows = [r for r in results if r.get("format", "run") == "run"
            and r.get("kind") == "winoground"]
    if not rows:
        return None
    cols = sorted({(r["task"], r["n"], r["track"]) for r in rows},
                  key=lambda c: (c[0], c[1], c[2] != "minimal"))
    idx = {(r["model"], r["task"], r["n"], r["track"]): r for r in rows}
    models = list(dict.fromkeys(r["model"] for r in rows))
    head = [f"{t} N={n} {TRACK_SHORT.get(k, k)}" for t, n, k in cols]
    chance = []
    for c in cols:
        m = next(r for r in rows if (r["task"], r["n"], r["track"]) == c)["metrics"]
        chance.append(f"{r1(m['chance_text'])} / {r1(m['chance_image'])} / "
                      f"{r1(m['chance_group'])}")
    out = [["Random Chance", *chance]]
    for model in models:
        cells = []
        for c in cols:
            r = idx.get((model, *c))
            cells.append("-" if not r else " / ".join(
                scored(r, k) for k in ("text_score", "image_score", "group_score")))
        out.append([_label(labels, model), *cells])
    items = ["Items (n)", *[str(next(r["n_items"] for r in rows
                                     if (r["task"], r["n"], r["track"]) == c)) for c in cols]]
    from autocomp.bench.ledger import subset_text

    dropped = {r["benchmark"]: r["dropped"] for r in rows if r.get("dropped")}
    return Table("Synthetic Winoground (each concept and its swap, both generated): text / "
                 f"image / group scores (%), {rule_word(rows)}; {INTERVAL_NOTE}",
                 ["Model", *head], [out[0], items, *out[1:]],
                 [EXACT_NOTE, ties_note(rows), *[f"{name}: {subset_text(name, d)}; a subset"
                                for name, d in sorted(dropped.items())]])


def aro_table(results, labels=None, exclude: set | None = None) -> Table | None:
    """`exclude`: relations left out of VG-Relation's macro accuracy (the authors' notebook
    leaves out relations it judges symmetric; give that list to compare with the paper)."""
    rows = [r for r in results if r.get("format") == "aro"]
    if not rows:
        return None
    by_model: dict = defaultdict(dict)
    orders: dict = defaultdict(lambda: defaultdict(list))
    for r in rows:
        seed_group = (r.get("meta") or {}).get("seed_group")
        if seed_group:
            orders[r["model"]][seed_group].append(r["metrics"]["accuracy"])
        else:
            by_model[r["model"]][r["kind"]] = r
    out = []
    for model in dict.fromkeys(r["model"] for r in rows):
        cells = []
        for kind in ("vg-relation", "vg-attribution"):
            r = by_model[model].get(kind)
            cells.append("-" if r is None else r1(_macro(r, exclude)))
        for group in ("aro/coco-order", "aro/flickr-order"):
            values = orders[model].get(group)
            cells.append("-" if not values else _mean_sd(values))
        out.append([_label(labels, model), *cells])
    note = f"; {len(exclude)} relations left out of VG-Relation" if exclude else ""
    return Table("ARO: VG-Relation and VG-Attribution macro accuracy (%), COCO- and "
                 f"Flickr30k-Order accuracy (%, mean ± sd over seeds){note}",
                 ["Model", "VG-Relation", "VG-Attribution", "COCO-Order", "Flickr30k-Order"],
                 out, ["Macro accuracies are unweighted means over relations or attribute "
                       "pairs (the authors' rule); their per-relation scores, each with its "
                       "n, are in the result files (metrics.by). ± is the sd over seeds."])


def _macro(result: dict, exclude: set | None):
    """The result's macro accuracy; with `exclude`, VG-Relation's recomputed without those
    relations."""
    by = (result["metrics"].get("by") or {}).get("relation")
    if not exclude or not by:
        return result.get("macro_accuracy")
    keep = [v["accuracy"] for k, v in by.items() if k not in exclude]
    return sum(keep) / len(keep) if keep else None


def _mean_sd(values: list[float]) -> str:
    import statistics

    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{r1(statistics.fmean(values))} ± {r1(sd)} ({len(values)} seeds)"

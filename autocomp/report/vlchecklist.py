"""VL-CheckList as its authors group it: one row per TYPE (Attribute/color,
Object/Location/center, Relation/action, ...) with a column per corpus (vaw, vg, swig_agent,
hake, ...), and the means up the hierarchy (Object/Location, Object, ...). A result's TYPE
and corpus come from the checkout's corpus/ configs (formats/vlchecklist.py, in the
result's source_info.types); results without them stay in the peer table only."""

from __future__ import annotations

from collections import defaultdict
from statistics import mean

from autocomp.report.table import INTERVAL_NOTE, Table, r1, scored


def _label(labels, model):
    return (labels or {}).get(model, model)


def vlchecklist_types_table(results, labels=None) -> Table | None:
    cells: dict = defaultdict(lambda: defaultdict(dict))  # model -> TYPE -> corpus -> result
    first = set()
    for r in results:
        if r.get("format") != "vl-checklist":
            continue
        where = ((r.get("source_info") or {}).get("types") or {}).get(r["benchmark"])
        if where:
            cells[r["model"]][where["type"]][where["corpus"]] = r
            first.add((r.get("source_info") or {}).get("first_rows"))
    if not cells:
        return None
    out = []
    for model in sorted(cells):
        means: dict[str, float] = {}
        for kind in sorted(cells[model]):
            by_corpus = cells[model][kind]
            means[kind] = mean(c["metrics"]["accuracy"] for c in by_corpus.values())
            out.append([_label(labels, model), kind,
                        "; ".join(f"{name} {scored(c)} (n={c['n_items']:,})"
                                  for name, c in sorted(by_corpus.items())),
                        r1(means[kind]), str(sum(c["n_items"] for c in by_corpus.values()))])
        for prefix, value in _ancestors(means):
            out.append([_label(labels, model), f"{prefix} (mean of its types)", "-",
                        r1(value), "-"])
    cut = sorted(f for f in first if f)
    notes = ["Mean: unweighted over the corpora of a TYPE, then over the TYPEs under a "
             "heading (Object/Location: center, margin, mid); intervals are per corpus.",
             "Items: " + (f"the first {', '.join(map(str, cut))} rows of each file "
                          "(--first-rows; the authors' evaluate.py takes MAX_NUM / 2)"
                          if cut else "every row of each file (the authors' evaluate.py "
                          "takes the first MAX_NUM / 2: `autocomp eval --first-rows`)")]
    return Table("VL-CheckList per TYPE (its authors' grouping): accuracy (%) of the first POS "
                 f"above the first NEG per corpus, with its {INTERVAL_NOTE}, and the mean",
                 ["Model", "TYPE", "Corpora", "Mean", "Items"], out, notes)


def _ancestors(means: dict[str, float]) -> list[tuple[str, float]]:
    """Each heading above the TYPEs (Object/Location, Object, Attribute, ...) with the mean
    of its children's means, deepest first."""
    values = dict(means)
    depth = max(k.count("/") for k in values)
    out = []
    for level in range(depth, 0, -1):
        children: dict[str, list[float]] = defaultdict(list)
        for key, value in values.items():
            if key.count("/") == level:
                children[key.rsplit("/", 1)[0]].append(value)
        for parent in sorted(children):
            values[parent] = mean(children[parent])
            out.append((parent, values[parent]))
    return out

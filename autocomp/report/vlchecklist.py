"""VL-CheckList as its authors group it: one row per TYPE (Attribute/color,
Object/Location/center, Relation/action, ...) with a column per corpus (vaw, vg, swig_agent,
hake, ...), and the means up the hierarchy (Object/Location, Object, ...). A result's TYPE
and corpus come from the checkout's corpus/ configs (formats/vlchecklist.py, in the
result's source_info.types); results without them stay in the peer table only."""

from __future__ import annotations

from collections import defaultdict

from autocomp.eval.intervals import mean_shares
from autocomp.report.table_format import INTERVAL_NOTE, Table, ci, scored


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
        leaves = {(vtype, corpus): c for vtype, by in cells[model].items()
                  for corpus, c in by.items()}
        for vtype in sorted(cells[model]):
            by_corpus = cells[model][vtype]
            out.append([_label(labels, model), vtype,
                        "; ".join(f"{name} {scored(c)} (n={c['n_items']:,})"
                                  for name, c in sorted(by_corpus.items())),
                        _mean(leaves, vtype),
                        str(sum(c["n_items"] for c in by_corpus.values()))])
        for heading in _headings(cells[model]):
            under = [k for k in leaves if k[0].startswith(heading + "/")]
            out.append([_label(labels, model), f"{heading} (mean of its types)", "-",
                        _mean(leaves, heading),
                        str(sum(leaves[k]["n_items"] for k in under))])
    cut = sorted(f for f in first if f)
    notes = ["Mean: unweighted over the corpora of a TYPE, then over the TYPEs under a "
             "heading (Object/Location: center, margin, mid), with a percentile bootstrap "
             "interval resampling each corpus's items (Clopper-Pearson for one corpus).",
             "Items: " + (f"the first {', '.join(map(str, cut))} rows of each file "
                          "(--first-rows; the authors' evaluate.py takes MAX_NUM / 2)"
                          if cut else "every row of each file (the authors' evaluate.py "
                          "takes the first MAX_NUM / 2: `autocomp eval --first-rows`)")]
    return Table("VL-CheckList per TYPE (its authors' grouping): accuracy (%) of the first POS "
                 f"above the first NEG per corpus, with its {INTERVAL_NOTE}, and the mean",
                 ["Model", "TYPE", "Corpora", "Mean", "Items"], out, notes)


def _headings(types) -> list[str]:
    """The headings above the TYPEs (Object/Location, Object, Attribute, ...), deepest
    first."""
    found = {"/".join(k.split("/")[:i]) for k in types for i in range(1, k.count("/") + 1)}
    return sorted(found - set(types), key=lambda h: (-h.count("/"), h))


def _weights(keys: list[tuple[str, str]], top: str) -> list[float]:
    """Each (TYPE, corpus) cell's weight in the unweighted mean of means under `top` (a
    TYPE or a heading): split equally among the children at every level."""
    types = {k[0] for k in keys}

    def share(node: str) -> dict:
        if node in types:
            mine = [k for k in keys if k[0] == node]
            return {k: 1.0 / len(mine) for k in mine}
        depth = node.count("/") + 1
        kids = sorted({"/".join(k.split("/")[:depth + 1]) for k in types
                       if k.startswith(node + "/")})
        return {k: w / len(kids) for kid in kids for k, w in share(kid).items()}

    got = share(top)
    return [got[k] for k in keys]


def _mean(leaves: dict, top: str) -> str:
    """The unweighted mean of means under `top`, with its interval (eval/intervals.py's
    mean_shares: each corpus's items resampled within the corpus)."""
    keys = [k for k in sorted(leaves) if k[0] == top or k[0].startswith(top + "/")]
    counts = []
    for k in keys:
        m, n = leaves[k]["metrics"]["accuracy"], leaves[k]["n_items"]
        right = round(m * n / 100.0)
        counts.append([right, n - right])
    mean, interval = mean_shares(counts, weights=_weights(keys, top))[0]
    return ci(mean, interval)

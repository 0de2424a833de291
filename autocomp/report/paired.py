"""Paired comparisons from the per-item predictions eval writes beside each result:
Min vs Ctx on the paired set (the same concepts in both tracks; Table 5 and its figure)
and two models on the same items (`autocomp report --compare`). The statistics are in
eval/intervals.py: Newcombe's paired score interval of the difference and the exact McNemar
test, Holm-adjusted over a table's comparisons.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from autocomp.eval.intervals import paired
from autocomp.eval.result_files import recorded_outcome as outcome
from autocomp.report.table_format import Cell


def predictions_file(cell: dict) -> Path | None:
    """The predictions file beside a result cell (as read by the report: `folder` set)."""
    from autocomp.eval.cache import folder_name
    from autocomp.eval.cells import result_file

    if cell.get("_path"):  # the very file the cell was read from
        pred = Path(cell["_path"]).with_suffix(".predictions.jsonl")
        return pred if pred.is_file() else None
    if not cell.get("folder"):
        return None
    folder, spec = Path(cell["folder"]), cell.get("spec", cell["model"])
    for path in (result_file(folder, spec, cell["benchmark"]),
                 folder / folder_name(spec) / f"{cell['benchmark'].replace('/', '-')}.json"):
        pred = path.with_suffix(".predictions.jsonl")
        if pred.is_file():
            return pred
    return None


@lru_cache(maxsize=256)
def _read(path: Path, mtime: float, rule: str) -> tuple[dict, dict]:
    """(item id -> outcome, concept -> outcome of the paired items) of a predictions file,
    under the tie rule its result was scored with."""
    from autocomp.core.own_files import PREDICTIONS_LIMIT, bounded_lines, open_regular

    by_id, by_concept, concept_of = {}, {}, {}
    with open_regular(path, PREDICTIONS_LIMIT) as fh:
        for line in bounded_lines(fh, path):
            p = json.loads(line)
            by_id[p["id"]] = outcome(p, rule)
            concept_of[p["id"]] = str(p.get("concept", p["id"]))
            if p.get("paired") and p.get("concept") is not None:
                by_concept[p["concept"]] = by_id[p["id"]]
    return by_id, by_concept, concept_of


def outcomes(cell: dict | None, by: str = "id") -> dict | None:
    """Item id (or, with by="concept", the concept of each paired item) -> its outcome
    under the cell's tie rule (1.0 / 0.0; a tie credit under --ties aware); with
    by="item", item id -> (its concept, its outcome); None where the cell's predictions
    are not at hand."""
    path = predictions_file(cell) if cell else None
    if path is None:
        return None
    by_id, by_concept, concept_of = _read(path, path.stat().st_mtime,
                                          cell.get("ties") or "strict")
    if by == "item":
        return {i: (concept_of[i], o) for i, o in by_id.items()}
    return by_concept if by == "concept" else by_id


def compare(a: dict | None, b: dict | None, by: str = "id") -> dict | None:
    """a - b in points over the items both scored (matched by id, or by concept on the
    paired set), each under its result's tie rule, with its interval and McNemar p; None
    without both predictions."""
    oa, ob = outcomes(a, by), outcomes(b, by)
    if oa is None or ob is None:
        return None
    common = [k for k in oa if k in ob]
    return paired([oa[k] for k in common], [ob[k] for k in common])


def min_vs_ctx(idx: dict, model: str, task: str, n: int, kind: str) -> dict | None:
    """Ctx - Min on the paired set of one (model, task, N, benchmark kind)."""
    ctx = idx.get((model, task, n, "contextual", kind))
    mini = idx.get((model, task, n, "minimal", kind))
    if ctx is None or mini is None:
        return None
    return compare(ctx, mini, by="concept")


def compare_table(results: list[dict], a: str, b: str, labels: dict | None = None):
    """Model `a` against model `b` on every benchmark both scored, item by item: each
    accuracy with its interval, a - b with its paired interval, the exact McNemar p and
    Holm's adjustment over the benchmarks compared (family-wise error 5%)."""
    from autocomp.core.errors import AutocompError
    from autocomp.eval.intervals import exact, holm
    from autocomp.report.notes import ties_note
    from autocomp.report.table_format import INTERVAL_NOTE, Table, ci, signed

    labels = labels or {}
    cells: dict[str, dict] = {}
    for r in results:
        if r["model"] in (a, b):
            cells.setdefault(r["benchmark"], {})[r["model"]] = r
    known = list(dict.fromkeys(r["model"] for r in results))
    for m in (a, b):
        if m not in known:
            raise AutocompError(f"--compare: no results of '{m}' here; the models are: "
                                + ", ".join(known))
    rows, ps, missing, used, differ, partial = [], [], [], [], [], []
    for bench in sorted(cells):
        pair = cells[bench]
        if a not in pair or b not in pair:
            continue
        prints = {pair[m].get("benchmark_fingerprint") for m in (a, b)}
        if len(prints) > 1 and None not in prints:  # the same name, other items
            differ.append(bench)
            continue
        used += [pair[a], pair[b]]
        d = compare(pair[a], pair[b])
        if d is None or not d["n"]:
            missing.append(bench)
            continue
        n = d["n"]
        most = max(pair[m].get("n_items") or 0 for m in (a, b))
        if n < most:
            partial.append(f"{bench} ({n:,} of {most:,})")
        discordant = ("{:.1f}/{:.1f}" if d["credit"] else "{}/{}").format(d["a_only"],
                                                                         d["b_only"])
        rows.append([bench, str(n), *[ci(d[x], exact(d[x] * n / 100.0, n))
                                      for x in ("a", "b")],
                     f"{signed(d['delta'])} [{signed(d['low'])}, {signed(d['high'])}]",
                     discordant, p_text(d["p"]), None])
        ps.append(d["p"])
    if not rows:
        why = (f"; {len(differ)} benchmark(s) hold different items in the two results "
               f"(their fingerprints differ: {', '.join(differ[:3])})" if differ else "")
        raise AutocompError(f"--compare: '{a}' and '{b}' share no benchmark with predictions "
                            f"at hand (eval writes them beside each result){why}")
    for row, adjusted in zip(rows, holm(ps), strict=True):
        row[-1] = p_text(adjusted)
    name_a, name_b = labels.get(a, a), labels.get(b, b)
    notes = [f"Items matched by id; A = {name_a}, B = {name_b}. Accuracies: Clopper-Pearson "
             "intervals. A − B: Newcombe's paired score interval; p: exact McNemar test of the "
             "items only one model got right (A only / B only); p (Holm): adjusted over the "
             f"{len(rows)} benchmarks compared, family-wise error 5%.", ties_note(used)
             + " Each result's outcomes follow its own rule, as its accuracy does"
             + (" (tie credits: the 2 x 2 table holds expected counts, and p is the exact "
                "paired sign-flip test of the per-item credit differences, which equals the "
                "exact McNemar p on 0 / 1 outcomes)."
                if any(r.get("ties") == "aware" for r in used) else ".")]
    if missing:
        notes.append(f"Not compared ({len(missing)}: predictions not at hand): "
                     + ", ".join(missing))
    if differ:
        notes.append(f"Not compared ({len(differ)}: the two results scored different items "
                     "under the same benchmark name, their benchmark fingerprints differ; "
                     "score both on one copy): " + ", ".join(differ))
    if partial:
        notes.append(f"Items only one model scored are left out ({len(partial)} "
                     "benchmarks; items matched of the larger result): " + ", ".join(partial))
    return Table(f"{name_a} vs {name_b}, item by item: accuracy (%) and A − B in points; "
                 + INTERVAL_NOTE,
                 ["Benchmark", "Items", "A", "B", "A − B", "A only / B only", "p",
                  "p (Holm)"], rows, notes)


def p_text(p: float | None) -> str:
    if p is None:
        return "-"
    return Cell("<0.001" if p < 0.001 else f"{p:.3f}", float(p))

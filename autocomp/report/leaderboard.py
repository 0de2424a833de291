"""The leaderboard's data (`autocomp leaderboard`; report/board_site.py writes the page).

One tie rule per page: every cell is accuracy under the results' own rule, named in each
section's title. A section per benchmark kind of autocomp runs (Swap, Confusion, ...) and
per dataset of other formats (sugarcrepe, winoground, ...); in each, a row per model and
columns: all items, each skill (task) and N and track (autocomp runs) or each subset
(other formats). A cell pools the items of its benchmarks: accuracy in percent with its 95%
interval (concepts resampled where a concept gives several items, else Clopper-Pearson)
and its item count. "All" pools only the benchmarks every ranked model was scored on (a
model scored on 3 of 4 is not ranked beside one scored on 4 on different items); the
others show in their own columns. Pinned under the models: the chance accuracy of each
column and the baselines (scorers that declare themselves blind or reference). Rank: 1 +
the models whose All interval lies wholly above this one's (models with overlapping
intervals share a rank). "vs blind": the model's accuracy minus the best blind scorer's on
the items both scored, paired, under one rule for both (tie-aware by default: a text-only
scorer ties every Swap negative, so its strict accuracy is ~0 and a lead over it says
nothing); "vs chance": All minus chance, its interval shifted by the constant.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from autocomp.eval.intervals import proportion
from autocomp.report.categories import baseline_of
from autocomp.report.table_format import KIND_SHORT, TRACK_SHORT

RULE_NAMES = {"strict": "strict (a tie is wrong)", "aware": "tie-aware (1/k for k tied)",
              "argmax": "argmax (a tie at the top is right)"}


def section_of(result: dict) -> tuple[str, str]:
    """(section key, its title)."""
    if result.get("format") == "run":
        kind = result.get("kind") or "items"
        return f"run:{kind}", f"{KIND_SHORT.get(kind, kind)} (autocomp benchmarks)"
    dataset = result["benchmark"].split("/", 1)[0]
    return f"dataset:{dataset}", dataset


def columns_of(result: dict) -> list[str]:
    """The columns a result counts in: All, and its skill, N and track (autocomp runs) or
    its subset (other formats)."""
    if result.get("format") == "run":
        out = ["All", f"task: {result['task']}", f"N={result['n']}"]
        return out + [TRACK_SHORT.get(result["track"], result["track"])]
    _, _, subset = result["benchmark"].partition("/")
    return ["All", subset] if subset else ["All"]


def _column_order(name: str) -> tuple:
    """All, then skills, then N (numerically), then Min before Ctx, then subsets."""
    if name == "All":
        return (0, 0, "")
    if name.startswith("task: "):
        return (1, 0, name)
    if name.startswith("N=") and name[2:].isdigit():
        return (2, int(name[2:]), "")
    if name in TRACK_SHORT.values():
        return (3, list(TRACK_SHORT.values()).index(name), "")
    return (4, 0, name)


def items_of(result: dict, rule: str) -> list[tuple[str, str, float]]:
    """(item key, cluster, outcome) of each predicted item under `rule`, read from the
    predictions beside the very file the result was read from."""
    from autocomp.core.own_files import PREDICTIONS_LIMIT, bounded_lines, open_regular
    from autocomp.eval.result_files import recorded_outcome

    path = Path(result["_path"]).with_suffix(".predictions.jsonl")
    out = []
    with open_regular(path, PREDICTIONS_LIMIT) as fh:
        for line in bounded_lines(fh, path):
            if line.strip():
                p = json.loads(line)
                key = f"{result['benchmark']}:{p['id']}"
                # a concept's items (its tracks, its benchmarks) are one cluster
                out.append((key, str(p.get("concept") or key), recorded_outcome(p, rule)))
    return out


def pooled(items: list[tuple[str, str, float]]) -> dict | None:
    """Accuracy (%) of pooled items, its interval (clusters resampled) and n."""
    if not items:
        return None
    units: dict = {}
    for _, cluster, got in items:
        u = units.setdefault(cluster, [0, 0.0])
        u[0] += 1
        u[1] += got
    lo, hi = proportion(units)
    value = 100.0 * sum(u[1] for u in units.values()) / len(items)
    return {"value": round(value, 2), "interval": [round(lo, 2), round(hi, 2)],
            "n": len(items)}


def board(results: list[dict], labels: dict, marks: dict, versus: str = "aware") -> dict:
    """The leaderboard's data: sections with columns, ranked model rows, chance and
    baselines. `results` are under one tie rule (write_site refuses a mix); `marks`: result
    file -> {"verified", "claimed"} records (board_site._marks); `versus` is the rule "vs
    blind" compares under."""
    rules = {r.get("ties") or "strict" for r in results}
    if len(rules) > 1:
        raise ValueError(f"results under several tie rules: {sorted(rules)}")
    rule = rules.pop() if rules else "strict"
    grouped: dict = defaultdict(list)
    for r in results:
        grouped[section_of(r)].append(r)
    sections = [_section(key, title, rs, labels, marks, rule, versus)
                for (key, title), rs in grouped.items()]
    return {"sections": sections, "ties": rule, "versus_ties": versus}


def _mark(cells: list[dict], marks: dict, which: str) -> str | None:
    """"K/n" items re-scored over a row's results when every one has a `which` record
    that matched, else None."""
    records = [(marks.get(r["_path"]) or {}).get(which) for r in cells]
    if not records or not all(rec and rec.get("verified") for rec in records):
        return None
    return (f"{sum(int(v.get('items', 0)) for v in records)}/"
            f"{sum(int(v.get('of', 0)) for v in records)}")


def _section(key, title, rs, labels, marks, rule, versus) -> dict:
    columns = sorted(dict.fromkeys(c for r in rs for c in columns_of(r)), key=_column_order)
    by_model: dict = defaultdict(list)
    for r in rs:
        by_model[r["model"]].append(r)
    kinds = {m: baseline_of(cells[0]) for m, cells in by_model.items()}
    ranked = [m for m in by_model if kinds[m] is None]
    # All: only the benchmarks every ranked model has (every model, where none is ranked)
    have = [{r["benchmark"] for r in by_model[m]} for m in (ranked or by_model)]
    common = set.intersection(*have) if have else set()
    shown = {m: {id(r): items_of(r, rule) for r in cells} for m, cells in by_model.items()}
    rows = []
    for model, cells in by_model.items():
        row = {"model": model, "label": labels.get(model) or model,
               "baseline": kinds[model], "verified": _mark(cells, marks, "verified"),
               "benchmarks": len(cells), "cells": {}}
        row["claimed"] = None if row["verified"] else _mark(cells, marks, "claimed")
        for col in columns:
            row["cells"][col] = pooled([
                it for r in cells if col in columns_of(r)
                and (col != "All" or r["benchmark"] in common) for it in shown[model][id(r)]])
        rows.append(row)
    chance = _chance(rs, columns, common)
    _rank(rows, chance.get("All"))
    _versus_blind(rows, by_model, common, versus)
    every = sorted({r["benchmark"] for r in rs})
    return {"key": key, "title": f"{title} · ties: {RULE_NAMES.get(rule, rule)}",
            "ties": rule, "columns": columns, "chance": chance,
            "all_benchmarks": {"pooled": len(common), "of": len(every),
                               "left_out": sorted(set(every) - common)},
            "best_blind": next((row["label"] for row in rows if row.get("best_blind")), None),
            "rows": rows}


def _rank(rows: list[dict], chance: dict | None) -> None:
    """Rank (1 + the ranked models whose All interval lies wholly above) and vs chance."""
    ranked = [row for row in rows if row["baseline"] is None and row["cells"].get("All")]
    for row in rows:
        got = row["cells"].get("All")
        row["rank"] = None if row not in ranked else 1 + sum(
            other["cells"]["All"]["interval"][0] > got["interval"][1] for other in ranked)
        row["vs_chance"] = None if not got or not chance else {
            "value": round(got["value"] - chance["value"], 2),
            "interval": [round(x - chance["value"], 2) for x in got["interval"]],
            "n": got["n"]}


def _versus_blind(rows, by_model, common, versus) -> None:
    """Each model's All minus the best blind scorer's, both under `versus`, paired."""
    items = {m: [it for r in cells if r["benchmark"] in common for it in items_of(r, versus)]
             for m, cells in by_model.items()}
    blind = [row for row in rows if row["baseline"] == "blind" and items[row["model"]]]
    best = max(blind, key=lambda row: pooled(items[row["model"]])["value"], default=None)
    for row in rows:
        row["best_blind"] = row is best
        row["vs_blind"] = None if row["baseline"] or best is None else _versus(
            items[row["model"]], items[best["model"]])
        if row["vs_blind"]:
            row["vs_blind"]["ties"] = versus


def _versus(mine: list, theirs: list) -> dict | None:
    """All-items accuracy difference (points) on the items both scored, paired."""
    from autocomp.eval.intervals import paired_clustered

    a = {k: (c, o) for k, c, o in mine}
    b = {k: o for k, _, o in theirs}
    common = [k for k in a if k in b]
    if not common:
        return None
    got = paired_clustered([a[k][1] for k in common], [b[k] for k in common],
                           [a[k][0] for k in common])
    return {"value": round(got["delta"], 2), "interval": [round(got["low"], 2),
                                                          round(got["high"], 2)],
            "n": len(common)}


def _chance(results: list[dict], columns: list[str], common: set) -> dict:
    """Per column, the items-weighted chance accuracy of its benchmarks (each once; All
    over the pooled benchmarks)."""
    once = {r["benchmark"]: r for r in results}
    out = {}
    for col in columns:
        got = [r for r in once.values() if col in columns_of(r)
               and (col != "All" or r["benchmark"] in common)]
        n = sum(r["n_items"] for r in got)
        out[col] = {"value": round(sum(float(r["chance"]) * r["n_items"] for r in got) / n, 2),
                    "n": n} if n else None
    return out

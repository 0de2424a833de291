"""`autocomp leaderboard DIR... --output SITE`: one static page (SITE/index.html, no
network), its data (SITE/leaderboard.json) and every result with its per-item predictions
copied beside them (SITE/results/...), so anyone can re-score what the page shows.

Only results that pass the results schema (eval/schema.py) are shown; the others are listed
with their first problem. A section per benchmark kind of autocomp runs (Swap, Confusion,
...) and per dataset of other formats (sugarcrepe, winoground, ...); in each, a row per
model and columns: all items, each skill (task) and N and track (autocomp runs) or each
subset (other formats). A cell pools the items of its benchmarks: accuracy in percent with
its 95% interval (concepts resampled where a concept gives several items, else
Clopper-Pearson) and its item count. Pinned under the models: the chance accuracy of each
column (exact, from the candidates' counts) and the baselines (blind scorers, which read
no image, and reference scorers, checks of the harness). "vs blind": the model's accuracy
on all items minus the best blind scorer's, paired on the items both scored (interval
resampling concepts). A result with a `.verified.json` beside it whose re-scored sample
matched (`autocomp results verify`) is marked verified.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from autocomp.eval.intervals import proportion
from autocomp.report.gather import short_label
from autocomp.report.table import KIND_SHORT, TRACK_SHORT

BASELINES = ("blind", "reference")


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


def items_of(result: dict) -> list[tuple[str, str, float]]:
    """(item key, cluster, outcome) of each predicted item, under the result's tie rule."""
    from autocomp.core.records import PREDICTIONS_LIMIT, open_regular
    from autocomp.eval.result_files import recorded_outcome
    from autocomp.report.paired import predictions_file

    path = predictions_file(result)
    out = []
    with open_regular(path, PREDICTIONS_LIMIT) as fh:
        for line in fh:
            if line.strip():
                p = json.loads(line)
                key = f"{result['benchmark']}:{p['id']}"
                # a concept's items (its tracks, its benchmarks) are one cluster
                out.append((key, str(p.get("concept") or key),
                            recorded_outcome(p, result.get("ties") or "strict")))
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


def _verified(cells: list[dict], verified: dict) -> str | None:
    """"K/n" re-scored items over the model's results when every one is verified, else
    None."""
    records = [verified.get(r["_file"]) for r in cells]
    if not records or not all(records):
        return None
    return f"{sum(int(v.get('items', 0)) for v in records)}/" \
           f"{sum(int(v.get('of', 0)) for v in records)}"


def board(results: list[dict], labels: dict, verified: dict) -> dict:
    """The leaderboard's data: sections with columns, model rows, chance and baselines."""
    grouped: dict = defaultdict(list)
    for r in results:
        grouped[section_of(r)].append(r)
    sections = []
    for (key, title), rs in grouped.items():
        columns = sorted(dict.fromkeys(c for r in rs for c in columns_of(r)), key=_column_order)
        by_model: dict = defaultdict(list)
        for r in rs:
            by_model[r["model"]].append(r)
        items = {m: {id(r): items_of(r) for r in cells} for m, cells in by_model.items()}
        rows = []
        for model, cells in by_model.items():
            family = cells[0].get("family") or model.split(":", 1)[0]
            row = {"model": model, "label": labels.get(model) or short_label(model),
                   "baseline": family in BASELINES, "family": family,
                   "verified": _verified(cells, verified),
                   "benchmarks": len(cells), "cells": {}}
            for col in columns:
                got = [it for r in cells if col in columns_of(r) for it in items[model][id(r)]]
                row["cells"][col] = pooled(got)
            rows.append(row)
        blind = [row for row in rows if row["family"] == "blind" and row["cells"].get("All")]
        best = max(blind, key=lambda row: row["cells"]["All"]["value"], default=None)
        for row in rows:
            row["vs_blind"] = None if row["baseline"] or best is None else _versus(
                items[row["model"]], items[best["model"]])
        sections.append({"key": key, "title": title, "columns": columns,
                         "chance": _chance(rs, columns), "best_blind": best and best["label"],
                         "rows": rows})
    return {"sections": sections}


def _versus(mine: dict, theirs: dict) -> dict | None:
    """All-items accuracy difference (points) on the items both scored, paired."""
    from autocomp.eval.intervals import paired_clustered

    a = {k: (c, o) for got in mine.values() for k, c, o in got}
    b = {k: o for got in theirs.values() for k, _, o in got}
    common = [k for k in a if k in b]
    if not common:
        return None
    got = paired_clustered([a[k][1] for k in common], [b[k] for k in common],
                           [a[k][0] for k in common])
    return {"value": round(got["delta"], 2), "interval": [round(got["low"], 2),
                                                          round(got["high"], 2)],
            "n": len(common)}


def _chance(results: list[dict], columns: list[str]) -> dict:
    """Per column, the items-weighted chance accuracy of its benchmarks (each once)."""
    once = {r["benchmark"]: r for r in results}
    out = {}
    for col in columns:
        got = [r for r in once.values() if col in columns_of(r)]
        n = sum(r["n_items"] for r in got)
        out[col] = {"value": round(sum(float(r["chance"]) * r["n_items"] for r in got) / n, 2),
                    "n": n} if n else None
    return out


def write_site(folders: list[Path], out: Path, models_file: Path | None = None,
               title: str = "autocomp leaderboard") -> dict:
    """Check, gather and write the site; returns {"shown", "left_out", "path"}."""
    import shutil

    from autocomp.core.records import write_text
    from autocomp.eval.schema import check_file
    from autocomp.eval.verify import still_verified
    from autocomp.report.gather import gather
    from autocomp.report.html import inside

    results, labels = gather(folders, models_file)
    shown, left = [], []
    verified = {}
    for r in results:
        path = _result_path(r)
        problems = check_file(path) if path else ["its file is not found"]
        outside = [f.name for f in _files(path) if inside(f, Path(r["folder"])) is None] \
            if path else []
        if outside:  # the site would carry a file from elsewhere
            problems = [f"{outside[0]} leads out of its results folder"]
        if problems:
            left.append({"model": r["model"], "benchmark": r["benchmark"],
                         "why": problems[0]})
            continue
        r = {**r, "_file": str(path)}
        verified[str(path)] = still_verified(path)  # re-scored alike, unchanged since
        shown.append(r)
    data = board(shown, labels, verified)
    data.update(title=title, left_out=left, files=[])
    out = Path(out)
    (out / "results").mkdir(parents=True, exist_ok=True)
    # several folders: each under its number (one model scored in two folders, two seeds,
    # would otherwise write one file over the other)
    number = {str(f): f"{k + 1}/" if len(folders) > 1 else "" for k, f in enumerate(folders)}
    for r in shown:
        src = Path(r["_file"])
        rel = f"results/{number[r['folder']]}{src.parent.name}"
        (out / rel).mkdir(parents=True, exist_ok=True)
        for f in _files(src):
            shutil.copyfile(f, out / rel / f.name)
            data["files"].append({"model": r["model"], "benchmark": r["benchmark"],
                                  "path": f"{rel}/{f.name}"})
    write_text(out / "leaderboard.json", json.dumps(data, indent=1, sort_keys=True) + "\n")
    write_text(out / "index.html", page(data))
    return {"shown": len(shown), "left_out": left, "path": out / "index.html",
            "sections": len(data["sections"])}


def _files(result: Path) -> list[Path]:
    """The files of a result that go on the site: it, its predictions, its verification."""
    return [f for f in (result, result.with_suffix(".predictions.jsonl"),
                        result.with_suffix(".verified.json")) if f.is_file()]


def _result_path(r: dict) -> Path | None:
    from autocomp.report.paired import predictions_file

    pred = predictions_file(r)
    if pred is None:
        from autocomp.eval.cells import result_file

        path = result_file(Path(r["folder"]), r.get("spec", r["model"]), r["benchmark"])
        return path if path.is_file() else None
    return pred.with_name(pred.name[:-len(".predictions.jsonl")] + ".json")


def page(data: dict) -> str:
    """The page: the template with the data embedded (no network, no other file)."""
    import re
    from html import escape
    from importlib import resources

    from autocomp.report.html import json_block

    text = resources.files("autocomp.report").joinpath("board.html").read_text("utf-8")
    values = {"TITLE": escape(data["title"]), "DATA": json_block(data)}
    return re.sub(r"\{\{(TITLE|DATA)\}\}", lambda m: values[m.group(1)], text)

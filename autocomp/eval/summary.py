"""Per-dataset summaries of result cells, in CLIP_benchmark's conventions.

A cell is one (model, benchmark) result JSON. A dataset is the benchmarks sharing a name
before the first "/" (sugarcrepe/add_att ... sugarcrepe/swap_obj; aro/...; winoground/test;
an autocomp run's color-n2/...). After each eval, `RESULTS/summaries.jsonl` holds one line
per (model, dataset), rebuilt from every cell file in the folder (so --skip_existing runs
and several invocations add up, and no subset is lost; a JSONL, so globs of the cells'
*.json do not pick it up):

  subsets   each benchmark's items, accuracy (and text / image / group scores, the authors'
            macro accuracy where the benchmark defines one)
  micro     the items pooled over the subsets
  macro     the unweighted mean over the subsets
  seeds     benchmarks scored under several seeds (ARO's Order sets): mean, sample
            standard deviation and the seeds' values

`rows()` flattens cells and summaries into the CSV `autocomp report --csv` writes.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path

SCORES = ("accuracy", "accuracy_tie_aware", "text_score", "image_score", "group_score")
CSV_FIELDS = ("model", "label", "dataset", "benchmark", "row", "n_items", *SCORES,
              "accuracy_ci_low", "accuracy_ci_high", "macro_accuracy", "chance", "seed_std",
              "format")


def dataset_of(benchmark: str) -> str:
    return benchmark.split("/", 1)[0]


def _scores(result: dict) -> dict:
    m = result["metrics"]
    out = {k: m.get(k) for k in SCORES if m.get(k) is not None}
    if result.get("macro_accuracy") is not None:
        out["macro_accuracy"] = result["macro_accuracy"]
    return out


def summarise(results: list[dict]) -> list[dict]:
    """One summary per (model, dataset) of `results` (cells)."""
    groups: dict = defaultdict(list)
    for r in results:
        groups[(r["model"], dataset_of(r["benchmark"]))].append(r)
    out = []
    for (model, dataset), cells in groups.items():
        cells = sorted(cells, key=lambda r: r["benchmark"])
        subsets = {r["benchmark"]: {"n_items": r["n_items"], **_scores(r)} for r in cells}
        n = sum(r["n_items"] for r in cells)
        micro, macro = {}, {}
        for key in SCORES:
            have = [r for r in cells if r["metrics"].get(key) is not None]
            if have and n:
                weight = sum(r["n_items"] for r in have)
                micro[key] = round(sum(r["metrics"][key] * r["n_items"] for r in have)
                                   / weight, 4) if weight else None
                macro[key] = round(sum(r["metrics"][key] for r in have) / len(have), 4)
        summary = {"model": model, "dataset": dataset, "n_items": n, "subsets": subsets,
                   "micro": micro, "macro": macro}
        seeds = _seed_groups(cells)
        if seeds:
            summary["seeds"] = seeds
        out.append(summary)
    return out


def _seed_groups(cells: list[dict]) -> dict:
    groups: dict = defaultdict(list)
    for r in cells:
        meta = r.get("meta") or {}
        if "seed_group" in meta:
            groups[meta["seed_group"]].append(r)
    out = {}
    for name, rs in sorted(groups.items()):
        values = [r["metrics"]["accuracy"] for r in rs]
        out[name] = {"seeds": [r["meta"]["seed"] for r in rs], "accuracy": values,
                     "mean": round(statistics.fmean(values), 4),
                     "std": round(statistics.stdev(values), 4) if len(values) > 1 else None}
    return out


def read_cells(folder: Path) -> tuple[list[dict], list[tuple[Path, str]]]:
    """(every result cell under `folder` (a run: its results/ is where eval wrote), (file,
    why) for each *.json left out: unreadable, not named as eval names it, or a second
    file for one (model, benchmark): eval/result_files.misnamed and one_per_cell). Each
    cell carries `_path`, the file it was read from: its predictions are the ones beside
    it, never found again by the spec it claims."""
    from autocomp.core.fields import SAFE_NAME
    from autocomp.core.own_files import read_small_json
    from autocomp.core.run_paths import RunPaths
    from autocomp.eval.result_files import READER_KEYS, misnamed, one_per_cell

    folder = Path(folder)
    root = folder / "results" if RunPaths(folder).config.is_file() else folder
    found, skipped = [], []
    inside = folder.resolve()
    for path in sorted(folder.rglob("*.json")):
        if not path.resolve().is_relative_to(inside):  # as `results check` reads: its own
            skipped.append((path, "a link out of the folder: not read"))
            continue
        try:  # regular files of a bounded size only: a FIFO or /dev/zero would hang it
            data = read_small_json(path)
        except OSError as exc:  # its reason, never its content
            why = exc.strerror or str(exc).removeprefix(f"{path}: ")
            skipped.append((path, f"cannot be read ({why.lower()})"))
            continue
        except ValueError:
            skipped.append((path, "cannot be read (not valid JSON)"))
            continue
        if isinstance(data, dict) and {"benchmark", "model", "metrics"} <= set(data):
            label = data.get("generator")  # a compared generator's: a plain name, or none
            why = misnamed(path, data) or (
                None if label is None or isinstance(label, str) and SAFE_NAME.fullmatch(label)
                else "its field 'generator' is not a plain name")
            if why:
                skipped.append((path, why))
            else:
                found.append((path, data))
    kept, twice = one_per_cell(found, root)
    cells = [{**{k: v for k, v in data.items() if k not in READER_KEYS}, "_path": str(path)}
             for path, data in sorted(kept, key=lambda pd: str(pd[0]))]
    return cells, skipped + twice


def write_summaries(out: Path) -> Path:
    """Rewrite RESULTS/summaries.jsonl from every cell under `out`."""
    from autocomp.core.records import dumps, write_text

    cells = read_cells(out)[0]
    target = Path(out) / "summaries.jsonl"
    write_text(target, "".join(dumps(s) + "\n" for s in summarise(cells)))
    return target


def rows(results: list[dict], labels: dict | None = None) -> list[dict]:
    """CSV rows: every cell, then each (model, dataset)'s micro and macro averages and
    its seed groups' means."""
    labels = labels or {}
    out = []
    for r in sorted(results, key=lambda r: (r["model"], r["benchmark"])):
        out.append({"model": r["model"], "label": labels.get(r["model"], ""),
                    "dataset": dataset_of(r["benchmark"]), "benchmark": r["benchmark"],
                    "row": "cell", "n_items": r["n_items"], **_scores(r),
                    **_interval(r["metrics"], r["n_items"]),
                    "chance": r["metrics"].get("chance"), "format": r.get("format", "run")})
    for s in summarise(results):
        base = {"model": s["model"], "label": labels.get(s["model"], ""),
                "dataset": s["dataset"], "n_items": s["n_items"]}
        for kind in ("micro", "macro"):  # micro pools the items: its interval too
            out.append({**base, "benchmark": f"{s['dataset']}/{kind}", "row": kind,
                        **s[kind], **(_interval(s[kind], s["n_items"]) if kind == "micro"
                                      else {})})
        for name, g in (s.get("seeds") or {}).items():
            out.append({**base, "benchmark": f"{name}/seed-mean", "row": "seed mean",
                        "accuracy": g["mean"], "seed_std": g["std"]})
    return out


def _interval(metrics: dict, n: int) -> dict:
    """accuracy_ci_low / _high: the stored 95% interval, else Clopper-Pearson over n."""
    got = (metrics.get("intervals") or {}).get("accuracy")
    if not got and metrics.get("accuracy") is not None and n:
        from autocomp.eval.intervals import exact

        got = exact(round(metrics["accuracy"] * n / 100.0), n)
    return {"accuracy_ci_low": round(got[0], 4), "accuracy_ci_high": round(got[1], 4)} \
        if got else {}


def write_csv(path: Path, results: list[dict], labels: dict | None = None) -> Path:
    import csv
    import io

    from autocomp.core.records import write_text

    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_FIELDS, extrasaction="ignore")
    writer.writeheader()
    for row in rows(results, labels):
        writer.writerow(row)
    write_text(Path(path), buf.getvalue())
    return Path(path)

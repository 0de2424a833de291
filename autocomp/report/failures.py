"""The failures of each scored benchmark, for the report page's gallery: per (benchmark,
model) the items the model got wrong, each with its image, the positive caption, the
negative the model preferred and that negative's edit category.

Read from `results/<model>/<benchmark>.predictions.jsonl` (one line per item; `correct`,
`chosen`, `chosen_category`) and the run's bench file (the positive and the image). The
run is the results folder's parent, or the run the result names. Benchmarks of other
formats (SugarCrepe, CREPE, ...) are counted but not shown: their images are not in a run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from autocomp.core.layout import RunLayout
from autocomp.report.tables import category_label

GALLERY_SIZE = 24  # failures shown per model and benchmark (the first in item order)


@dataclass
class Cell:
    model: str
    label: str
    items: int
    failed: int
    shown: list[dict] = field(default_factory=list)  # id, positive, chosen, category, image


@dataclass
class Section:
    benchmark: str
    run: Path | None
    why: str = ""  # why its failures are counted but not shown
    cells: list[Cell] = field(default_factory=list)


def predictions_file(cell: dict) -> Path | None:
    from autocomp.eval.cache import folder_name
    from autocomp.eval.cells import result_file

    folder, spec = Path(cell["folder"]), cell.get("spec", cell["model"])
    for path in (result_file(folder, spec, cell["benchmark"]),
                 folder / folder_name(spec) / cell["benchmark"].replace("/", "-")):  # older
        pred = path.with_suffix(".predictions.jsonl")
        if pred.is_file():
            return pred
    return None


def run_of(cell: dict) -> Path | None:
    """The run a result scored: its results folder's parent, or the run it names."""
    for cand in [Path(cell["folder"]).parent, *([Path(cell["run"])] if cell.get("run")
                                                 else [])]:
        layout = RunLayout(cand)
        if layout.config.is_file() and layout.bench.is_dir():
            return cand
    return None


def _wrong(path: Path | None, limit: int) -> tuple[int, int, list[dict]]:
    """(items, failed, the first `limit` failures) of a predictions file."""
    items = failed = 0
    first = []
    if path is None:
        return 0, 0, []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            p = json.loads(line)
            items += 1
            if not p.get("correct"):
                failed += 1  # shown where one negative was preferred (not matrix items)
                if len(first) < limit and "chosen" in p:
                    first.append(p)
    return items, failed, first


def _items(run: Path, benchmark: str, ids: set[str]) -> dict[str, dict]:
    """id -> (positive, image) of the wanted items of one of the run's bench files."""
    found: dict[str, dict] = {}
    for f, path in RunLayout(run).benchmark_files():
        if f.name != benchmark or not ids:
            continue
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                if row.get("id") in ids:
                    found[row["id"]] = {"positive": row.get("positive", ""),
                                        "image": run / row["image"] if row.get("image")
                                        else None}
    return found


def gallery(results: list[dict], labels: dict, limit: int = GALLERY_SIZE) -> list[Section]:
    """A section per benchmark (in name order), a cell per model (in the report's order)."""
    sections: dict[str, Section] = {}
    for cell in results:
        name = cell["benchmark"]
        ours = cell.get("format", "run") == "run"
        run = run_of(cell) if ours else None
        why = ("" if run else "the run it scored is not found" if ours else
               "not an autocomp run: its images are not at hand")
        section = sections.setdefault(name, Section(name, run, why))
        items, failed, wrong = _wrong(predictions_file(cell), limit if run else 0)
        known = _items(run, name, {p["id"] for p in wrong}) if run else {}
        shown = [{"id": p["id"], "chosen": p["chosen"],
                  "category": category_label(p.get("chosen_category") or "uncategorised",
                                             cell.get("aspect")),
                  **known.get(p["id"], {"positive": "", "image": None})}
                 for p in wrong]
        section.cells.append(Cell(cell["model"], labels.get(cell["model"], cell["model"]),
                                  items, failed, shown))
    return [sections[k] for k in sorted(sections)]

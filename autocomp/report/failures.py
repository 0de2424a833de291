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

from autocomp.core.run_paths import RunPaths
from autocomp.eval.metrics import TIED
from autocomp.report.categories import category_label
from autocomp.report.paired import outcome, predictions_file

GALLERY_SIZE = 24  # failures shown per model and benchmark (the first in item order)


@dataclass
class Cell:
    model: str
    label: str
    items: int
    failed: int  # a negative scored above the positive (ties not counted)
    shown: list[dict] = field(default_factory=list)  # id, positive, chosen, category, image
    tied: int = 0  # the positive tied with negatives at the top: wrong, but no failure shown


@dataclass
class Section:
    benchmark: str
    run: Path | None
    why: str = ""  # why its failures are counted but not shown
    cells: list[Cell] = field(default_factory=list)


def run_of(cell: dict) -> Path | None:
    """The run a result scored: its results folder's parent, or the run it names."""
    for cand in [Path(cell["folder"]).parent, *([Path(cell["run"])] if cell.get("run")
                                                 else [])]:
        paths = RunPaths(cand)
        if paths.config.is_file() and paths.bench.is_dir():
            return cand
    return None


def _tied(p: dict) -> int:
    """Negatives tied with the positive at the top (0: not a tie)."""
    if p.get("correct"):
        return 0
    if "tied_with" in p:
        return int(p["tied_with"] or 0)
    credit = p.get("tie_credit") or 0  # predictions written before ties were recorded
    return round(1.0 / credit) - 1 if credit > 0 else 0


def _wrong(path: Path | None, limit: int,
           rule: str = "strict") -> tuple[int, int, int, list[dict]]:
    """(items, failed, tied, the first `limit` failures and ties) of a predictions file,
    an item right as its result's tie rule counts it (under argmax a tie at the top is
    right; under aware a tie is partly right, so shown among the ties)."""
    items = failed = tied = 0
    first = []
    if path is None:
        return 0, 0, 0, []
    from autocomp.core.own_files import PREDICTIONS_LIMIT, bounded_lines, open_regular

    with open_regular(path, PREDICTIONS_LIMIT) as fh:
        for line in bounded_lines(fh, path):
            p = json.loads(line)
            items += 1
            if outcome(p, rule) >= 1.0:
                continue
            k = _tied(p)
            if k:
                tied += 1
            else:
                failed += 1
            # shown where one negative was preferred, or tied (not matrix items)
            if len(first) < limit and "chosen" in p:
                first.append({**p, "tied_with": k})
    return items, failed, tied, first


def _items(run: Path, benchmark: str, ids: set[str]) -> dict[str, dict]:
    """id -> (positive, image) of the wanted items of one of the run's bench files."""
    found: dict[str, dict] = {}
    for f, path in RunPaths(run).benchmark_files():
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
    """A section per benchmark and run (in that order), a cell per model (in the report's
    order); each bench file is read once, for every model's failures together."""
    sections: dict[tuple, Section] = {}
    for cell in results:
        ours = cell.get("format", "run") == "run"
        run = run_of(cell) if ours else None
        why = ("" if run else "the run it scored is not found" if ours else
               "not an autocomp run: its images are not at hand")
        section = sections.setdefault((cell["benchmark"], str(run or "")),
                                      Section(cell["benchmark"], run, why))
        items, failed, tied, wrong = _wrong(predictions_file(cell), limit if run else 0,
                                            cell.get("ties") or "strict")
        shown = [{"id": p["id"], "chosen": p["chosen"], "tied_with": p["tied_with"],
                  "category": TIED if p["tied_with"] else category_label(
                      p.get("chosen_category") or "uncategorised", cell.get("aspect"))}
                 for p in wrong]
        section.cells.append(Cell(cell["model"], labels.get(cell["model"], cell["model"]),
                                  items, failed, shown, tied))
    for section in sections.values():
        wanted = {f["id"] for c in section.cells for f in c.shown}
        known = _items(section.run, section.benchmark, wanted) if section.run else {}
        for c in section.cells:
            for f in c.shown:
                f.update(known.get(f["id"], {"positive": "", "image": None}))
    return [sections[k] for k in sorted(sections)]

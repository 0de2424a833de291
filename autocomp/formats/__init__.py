"""Benchmarks in other projects' formats, read as the same items the harness scores.

A Suite is what `autocomp eval`, `autocomp audit` and `autocomp report` work on: a list of
benchmarks (name, task, N, track, kind, a stream of items), the folder image paths are
relative to, and what loading found (counts, normalised captions, flagged rows). An item
is {id, task, n, image, positive, negatives: [{caption, category, same_meaning}], ...}, the
layout of an autocomp run's bench files; an item may carry `crop` (x, y, w, h).

Formats (`--format`, detected when not given):
  run         an autocomp run directory (config.yaml + bench/)
  sugarcrepe  a folder with SugarCrepe's JSON files (add_att.json ... swap_obj.json)
  crepe       CREPE productivity CSVs (a folder of them, or one file)
  columns     any JSONL / JSON / CSV / parquet file with a column mapping
  autocomp-hf released Auto-Comp data or `autocomp export --format hf` folders (Hugging
              Face datasets; negatives rebuilt from the concept)
"""

from __future__ import annotations

from pathlib import Path

from autocomp.core import registry
from autocomp.core.errors import AutocompError
from autocomp.core.layout import RunLayout
from autocomp.formats.suite import Suite


def detect_format(source: Path) -> str:
    from autocomp.formats.sugarcrepe import SUBSETS

    if str(source).startswith("hf:"):
        return "autocomp-hf"
    source = Path(source)
    if not source.exists():
        raise AutocompError("does not exist", file=source)
    if source.is_dir():
        layout = RunLayout(source)
        if layout.config.is_file() and layout.bench.is_dir():
            return "run"
        if any((source / f).is_file() for f in ("dataset_dict.json", "state.json",
                                                 "dataset_info.json")):
            return "autocomp-hf"
        for folder in (source, source / "data"):
            if any((folder / f"{s}.json").is_file() for s in SUBSETS):
                return "sugarcrepe"
        if any(source.rglob("*.csv")):
            return "crepe"
    elif source.suffix.lower() == ".csv":
        return "crepe"
    elif source.suffix.lower() in (".jsonl", ".json", ".parquet"):
        return "columns"
    raise AutocompError("cannot tell its format: give --format "
                        f"({', '.join(registry.names('format'))})", file=source)


def open_suite(source, fmt: str | None = None, images=None, columns: dict | None = None,
               skip_missing: bool = False) -> Suite:
    """The benchmarks of `source` in format `fmt` (detected when None); `images` is the
    folder their image files are under (COCO val2017 for SugarCrepe, Visual Genome's
    images for CREPE). Each format is one registry entry: an opener taking
    (source, images, columns, skip_missing)."""
    fmt = fmt or detect_format(source)
    opener = registry.resolve("format", fmt)
    if not str(source).startswith("hf:"):
        source = Path(source)
        if not source.exists():
            raise AutocompError("no such file or folder", file=source)
    return opener(source, Path(images) if images else None, columns or {}, skip_missing)

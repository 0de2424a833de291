"""Benchmarks in other projects' formats, read as the same items the harness scores.

A Suite is what `autocomp eval`, `autocomp audit` and `autocomp report` work on: a list of
benchmarks (name, task, N, track, kind, a stream of items), the folder image paths are
relative to, and what loading found (counts, normalised captions, flagged rows). An item
is {id, task, n, image, positive, negatives: [{caption, category, same_meaning}], ...}, the
layout of an autocomp run's bench files; an item may carry `crop` (x, y, w, h).

Formats (`--source-format`, detected when not given):
  run         an autocomp run directory (config.yaml + bench/)
  sugarcrepe  a folder with SugarCrepe's JSON files (add_att.json ... swap_obj.json)
  crepe       CREPE productivity and systematicity CSVs (a folder of them, or one file)
  columns     any JSONL / JSON / CSV / parquet file with a column mapping
  autocomp-hf released Auto-Comp data or `autocomp export --export-format hf` folders
              (Hugging Face datasets; negatives rebuilt from the concept)
  autocomp-export  `autocomp export RUN` folders: every benchmark with its negatives as
              exported (formats/published.py)
  winoground  Winoground in its Hugging Face layout (2 images x 2 captions per item)
  colorswap   ColorSwap in its Hugging Face layout (the same shape)
  aro         ARO: VG-Relation, VG-Attribution, COCO-Order, Flickr30k-Order
  vl-checklist  VL-CheckList's data/{Attribute,Object,Relation} JSON files
  valse       VALSE's data/<instrument>.json files (the annotators' valid set)
  sugarcrepe++  SugarCrepe++'s five JSON files: image-text (both positives above the
              negative) and text-only tasks

An item of several images is {id, task, n, images: [...], captions: [...], truth: I x C
0/1, ...} (eval/matrix.py): scored by text, image and group scores.
"""

from __future__ import annotations

from pathlib import Path

from autocomp.core import registry
from autocomp.core.errors import AutocompError
from autocomp.core.run_paths import RunPaths
from autocomp.formats.suite import Suite


def detect_format(source: Path) -> str:
    """The format of `source`, from its layout as the authors ship it."""
    if str(source).startswith("hf:"):
        return "autocomp-hf"
    source = Path(source)
    if not source.exists():
        raise AutocompError("does not exist", file=source)
    found = _folder_format(source) if source.is_dir() else _file_format(source)
    if found is None:
        raise AutocompError("cannot tell its format: give --source-format "
                            f"({', '.join(registry.names('format'))})", file=source)
    return found


def _folder_format(source: Path) -> str | None:
    """A folder's format: the first of the layouts below it has (the order matters:
    SugarCrepe++ ships SugarCrepe's file names)."""
    for probe in (_autocomp_folder, _pair_folder, _author_folder, _table_folder):
        found = probe(source)
        if found is not None:
            return found
    return None


def _autocomp_folder(source: Path) -> str | None:
    """A run, an autocomp export, or a `datasets` folder (Auto-Comp's or a pair table)."""
    from autocomp.formats.published import is_published

    paths = RunPaths(source)
    if paths.config.is_file() and paths.bench.is_dir():
        return "run"
    if is_published(source):
        return "autocomp-export"
    if any((source / f).is_file() for f in ("dataset_dict.json", "state.json",
                                             "dataset_info.json")):
        return _table_format(source) or "autocomp-hf"
    return None


def _pair_folder(source: Path) -> str | None:
    """Winoground's or ColorSwap's files as their authors ship them."""
    from autocomp.formats.pairs import LAYOUTS

    for name, spec in LAYOUTS.items():
        if any((source / rel).is_file() for rel in spec["jsonl"]):
            return name
        lists = [source / rel for rel in spec.get("json", ()) if (source / rel).is_file()]
        if lists and _table_format(lists[0]) == name:  # ColorSwap's GitHub release
            return name
    return None


def _author_folder(source: Path) -> str | None:
    """SugarCrepe++, SugarCrepe, VL-CheckList, VALSE, ARO or CREPE, in that order."""
    from autocomp.formats.aro import aro_files
    from autocomp.formats.sugarcrepe import data_folder
    from autocomp.formats.sugarcrepe_pp import data_folder as pp_folder
    from autocomp.formats.valse import valse_files
    from autocomp.formats.vlchecklist import data_folder as vlc_folder

    probes = (("sugarcrepe++", lambda: pp_folder(source) is not None),
              ("sugarcrepe", lambda: data_folder(source) is not None),
              ("vl-checklist", lambda: vlc_folder(source) is not None),
              ("valse", lambda: bool(valse_files(source))),
              ("aro", lambda: bool(aro_files(source))),
              ("crepe", lambda: any(p.is_dir() for p in source.rglob("prod_hard_negatives"))
               or any(source.rglob("*.csv"))))
    return next((name for name, found in probes if found()), None)


def _table_folder(source: Path) -> str | None:
    """A folder of parquet shards of a pair table (Winoground, ColorSwap)."""
    parquet = next(iter(sorted(source.rglob("*.parquet"))), None)
    return _table_format(parquet) if parquet is not None else None


def _file_format(source: Path) -> str | None:
    """A single file's format: CREPE's CSV, ARO's JSON, VALSE's JSON, or a table."""
    from autocomp.formats.aro import aro_files

    suffix = source.suffix.lower()
    if suffix == ".csv":
        return "crepe"
    if aro_files(source):
        return "aro"
    if suffix == ".json" and _valse_file(source):
        return "valse"
    if suffix in (".jsonl", ".json", ".parquet"):
        return _table_format(source) or "columns"
    return None


def _valse_file(source: Path) -> bool:
    from autocomp.formats.valse import valse_files

    return bool(valse_files(source))


def _table_format(source: Path) -> str | None:
    """winoground or colorswap when a table's columns are theirs (read from a datasets
    folder's features, a parquet schema or a JSONL's first row), else None."""
    import json

    from autocomp.formats.pairs import layout_of

    columns: set = set()
    try:
        if source.is_dir():
            for info in [source / "dataset_info.json", *source.glob("*/dataset_info.json")]:
                if info.is_file():
                    features = json.loads(info.read_text(encoding="utf-8")).get("features")
                    columns |= set(features or {})
        elif source.suffix.lower() == ".parquet":
            import pyarrow.parquet as pq

            columns = set(pq.read_schema(source).names)
        elif source.suffix.lower() == ".jsonl":
            with open(source, encoding="utf-8-sig") as fh:
                first = next((line for line in fh if line.strip()), "{}")
            row = json.loads(first)
            columns = set(row) if isinstance(row, dict) else set()
        elif source.suffix.lower() == ".json":  # a JSON list (ColorSwap's GitHub release)
            rows = json.loads(source.read_text(encoding="utf-8-sig"))
            row = rows[0] if isinstance(rows, list) and rows else None
            columns = set(row) if isinstance(row, dict) else set()
    except (OSError, ValueError, ImportError, AttributeError):
        return None
    return layout_of(columns) or ("autocomp-hf" if _autocomp_columns(columns) else None)


def _autocomp_columns(columns: set) -> bool:
    """Auto-Comp's columns: objects, its values, and an image/caption pair (an autocomp
    export's train.parquet, a released set's parquet shard)."""
    from autocomp.formats.autocomp_hf import tracks_of

    return ("objects" in columns and bool({"colors", "attributes", "relations"} & columns)
            and bool(tracks_of(columns, None)))


def open_suite(source, fmt: str | None = None, images=None, columns: dict | None = None,
               skip_missing: bool = False, text_only: bool = False) -> Suite:
    """The benchmarks of `source` in format `fmt` (detected when None); `images` is the
    folder their image files are under (COCO val2017 for SugarCrepe, Visual Genome's
    images for CREPE). `text_only`: the captions are what is wanted (`autocomp audit`), so
    no image folder is needed and image names are kept as written. Each format is one
    registry entry: an opener taking (source, images, columns, skip_missing, text_only)."""
    fmt = fmt or detect_format(source)
    opener = registry.resolve("format", fmt)
    if not str(source).startswith("hf:"):
        source = Path(source)
        if not source.exists():
            raise AutocompError("no such file or folder", file=source)
    images = Path(images) if images else None
    from autocomp.core.plugins import made, plugin_code

    with plugin_code("format", fmt, f"opening {source}"):
        if _takes(opener, "text_only"):
            suite = opener(source, images, columns or {}, skip_missing, text_only=text_only)
        else:  # a plugin written before text_only
            suite = opener(source, images, columns or {}, skip_missing)
    return made("format", fmt, suite, file=source)


def _takes(opener, name: str) -> bool:
    import inspect

    params = inspect.signature(opener).parameters
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())

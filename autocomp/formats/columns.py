"""Any table of (image, positive, negatives) rows: a JSONL, JSON (a list of objects), CSV or
parquet file, or a folder written by `datasets.save_to_disk`, with a column mapping:

  image       the image file name (under --images, or the file's folder); a datasets
              Image column is read from the file path it records
  positive    the true caption
  negatives   one column holding a list (a JSON/Python list literal in CSV) or several
              columns, each one negative ("neg1+neg2" on the command line)
  id          optional: the item id (default: the row number)
  subset      optional: rows are split into one benchmark per value

or, for items of several images (Winoground-style: caption k describes image k, scored
by text, image and group scores):

  images      two or more image columns ("img0+img1")
  captions    as many caption columns, in the same order

Given as `--columns image=file,positive=caption,negatives=neg1+neg2` or as a YAML file
with the same keys. Captions are whitespace-normalised. A hub dataset is named
`hf:ORG/NAME` (split train; HF_HUB_OFFLINE respected).
"""

from __future__ import annotations

import ast
import json
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from autocomp.core.backend import require
from autocomp.core.errors import AutocompError
from autocomp.core.families import contract_example
from autocomp.formats.images import ImageCells, ImageRoot
from autocomp.formats.suite import (
    LoadedBenchmark,
    Suite,
    jsonl_rows,
    normalise_space,
    parquet_rows,
    undecoded,
)

KEYS = ("image", "positive", "negatives", "id", "subset", "images", "captions")
LISTS = ("negatives", "images", "captions")  # keys that take several columns


def parse_mapping(text: str | None) -> dict:
    """`image=a,positive=b,negatives=c+d` or a YAML file path -> {key: column or [columns]}."""
    if not text:
        return {}
    path = Path(text)
    if path.suffix.lower() in (".yaml", ".yml") and path.is_file():
        from autocomp.core.yamlio import read_yaml

        data = read_yaml(path)
        if not isinstance(data, dict):
            raise AutocompError("expected a mapping {image, positive, negatives, ...}",
                                file=path)
        return _check({k: v for k, v in data.items()}, path)
    out = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if not sep or not value.strip():
            raise AutocompError(f"--columns expects KEY=COLUMN pairs, got '{part}'")
        value = value.strip()
        out[key.strip()] = value.split("+") if key.strip() in LISTS else value
    return _check(out, None)


def _check(mapping: dict, where) -> dict:
    unknown = sorted(set(mapping) - set(KEYS))
    if unknown:
        raise AutocompError(f"unknown column key(s) {', '.join(unknown)} (known: "
                            f"{', '.join(KEYS)})", file=where)
    several = "images" in mapping or "captions" in mapping
    needed = ("images", "captions") if several else ("image", "positive", "negatives")
    lacking = [k for k in needed if k not in mapping]
    if lacking:
        raise AutocompError(f"the column mapping needs {', '.join(lacking)} (e.g. --columns "
                            + ("images=img0+img1,captions=cap0+cap1)" if several else
                               "image=file,positive=caption,negatives=negs)"), file=where)
    if several:
        clash = [k for k in ("image", "positive", "negatives") if k in mapping]
        counts = [len(v) if isinstance(v, list) else 1 for v in (mapping["images"],
                                                                   mapping["captions"])]
        if clash or counts[0] != counts[1] or counts[0] < 2:
            raise AutocompError("images and captions take two or more columns each, as many "
                                f"captions as images (got {counts[0]} and {counts[1]}), "
                                "without image/positive/negatives", file=where)
    for key, value in mapping.items():
        names = value if key in LISTS and isinstance(value, list) else [value]
        if not names or not all(isinstance(v, str) and v.strip() for v in names):
            want = ("a column name or a list of column names" if key in LISTS
                    else "one column name")
            raise AutocompError(f"expected {want}, got {value!r}"[:160], file=where,
                                field=key)
        twice = sorted({n for n in names if names.count(n) > 1})
        if key in LISTS and twice:  # "images=a+a": one image scored as two
            raise AutocompError(f"column {twice[0]!r} is named twice", file=where, field=key)
    return mapping


def _rows(source: Path) -> Iterator[dict]:
    if str(source).startswith("hf:"):  # a hub dataset (or a cached one, offline)
        from autocomp.formats.autocomp_hf import open_dataset

        yield from undecoded(open_dataset(source))
        return
    suffix = source.suffix.lower()
    if source.is_dir():
        ds = require("datasets", "formats", "a datasets folder").load_from_disk(str(source))
        if hasattr(ds, "keys"):  # a DatasetDict: its "train" split or its only one
            ds = ds["train"] if "train" in ds else ds[next(iter(ds.keys()))]
        yield from undecoded(ds)
    elif suffix == ".jsonl":
        yield from jsonl_rows(source)
    elif suffix == ".json":
        try:
            data = json.loads(source.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise AutocompError(f"not valid JSON: {exc}", file=source) from None
        if not isinstance(data, list):
            raise AutocompError("expected a list of objects", file=source)
        yield from data
    elif suffix == ".csv":
        import csv

        with open(source, newline="", encoding="utf-8") as fh:
            yield from csv.DictReader(fh)
    elif suffix == ".parquet":
        yield from parquet_rows(Path(source))
    else:
        raise AutocompError("expected a .jsonl, .json, .csv or .parquet file, or a datasets "
                            "folder", file=source)


def _negatives(row: dict, cols, where, entry) -> list[str]:
    cols = [cols] if isinstance(cols, str) else list(cols)
    out = []
    for c in cols:
        if c not in row:
            raise AutocompError(f"no column '{c}'", file=where, entry=entry)
        value = row[c]
        if isinstance(value, str) and len(cols) == 1 and value.strip()[:1] in "[({":
            try:
                value = ast.literal_eval(value.strip())
            except (ValueError, SyntaxError):
                raise AutocompError(f"not a list literal: {value[:60]!r}", file=where,
                                    entry=entry, field=c) from None
        values = value if isinstance(value, (list, tuple, set)) else [value]
        if isinstance(value, set):
            values = sorted(values)
        for v in values:
            if not isinstance(v, str):
                raise AutocompError(f"expected captions (strings), got {v!r}", file=where,
                                    entry=entry, field=c)
            if v.strip():
                out.append(normalise_space(v))
    return out


def load_columns(source: Path, mapping: dict, images: Path | None,
                 skip_missing: bool = False, text_only: bool = False) -> Suite:
    mapping = _check(mapping, None)
    hub = str(source).startswith("hf:")
    if hub and images is None and not text_only:
        raise AutocompError("a hub dataset's image column names files: give --images DIR")
    root = ImageRoot(None if text_only else images or (
        source if source.is_dir() else source.parent), skip_missing)
    cells = ImageCells(root, str(source).rsplit("/", 1)[-1], text_only)
    several = "images" in mapping
    groups: dict[str, list] = defaultdict(list)
    total = 0
    for i, row in enumerate(_rows(source), start=1):
        if not isinstance(row, dict):
            raise AutocompError(f"expected an object, got {type(row).__name__}", file=source,
                                entry=f"row {i}")
        wanted = ([*mapping["images"], *mapping["captions"]] if several
                  else [mapping["image"], mapping["positive"]])
        for col in wanted:
            if col not in row:
                raise AutocompError(f"no column '{col}'", file=source, entry=f"row {i}")
        total += 1
        item_id = str(row.get(mapping["id"], i)) if "id" in mapping else str(i)
        paths = [cells.path(row[c], item_id, source)
                 for c in (mapping["images"] if several else [mapping["image"]])]
        if None in paths:
            continue
        texts = [_caption(row, c, source, i)
                 for c in (mapping["captions"] if several else [mapping["positive"]])]
        subset = str(row.get(mapping["subset"], "all")) if "subset" in mapping else "all"
        if several:
            k = len(paths)
            groups[subset].append({"id": item_id, "task": "columns", "n": 0, "images": paths,
                                   "captions": texts,
                                   "truth": [[int(a == b) for b in range(k)]
                                             for a in range(k)]})
            continue
        groups[subset].append({
            "id": item_id, "task": "columns", "n": 0, "image": paths[0], "positive": texts[0],
            "negatives": [{"caption": c, "category": subset, "same_meaning": False}
                          for c in _negatives(row, mapping["negatives"], source, f"row {i}")]})
    root.check(total, source)
    name = str(source).rsplit("/", 1)[-1] if hub else (source.stem if source.is_file()
                                                         else source.name)
    benches = [LoadedBenchmark(f"{name}/{subset}", "columns", 0, name, subset,
                               lambda rows=rows: iter(rows))
               for subset, rows in sorted(groups.items())]
    if not benches:
        raise AutocompError("no rows", file=source)
    base, also = cells.folders()
    return Suite("columns", source, base, benches, {},
                 {"items": {b.name: len(groups[b.kind]) for b in benches},
                  "missing_images": len(root.missing), "mapping": mapping}, also)


def _caption(row: dict, column: str, source, i: int) -> str:
    text = row[column]
    if not isinstance(text, str) or not text.strip():
        raise AutocompError(f"expected a caption, got {text!r}"[:120], file=source,
                            entry=f"row {i}", field=column)
    return normalise_space(text)


@contract_example("columns_source")
def open_columns(source, images, columns, skip_missing: bool, text_only=False) -> Suite:
    return load_columns(source, columns, images, skip_missing, text_only)

"""Any table of (image, positive, negatives) rows: a JSONL, JSON (a list of objects), CSV or
parquet file, or a folder written by `datasets.save_to_disk`, with a column mapping:

  image       the image file name (under --images, or the file's folder); a datasets
              Image column is read from the file path it records
  positive    the true caption
  negatives   one column holding a list (a JSON/Python list literal in CSV) or several
              columns, each one negative ("neg1+neg2" on the command line)
  id          optional: the item id (default: the row number)
  subset      optional: rows are split into one benchmark per value

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
from autocomp.formats.suite import ImageRoot, LoadedBenchmark, Suite, normalise_space

KEYS = ("image", "positive", "negatives", "id", "subset")


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
        out[key.strip()] = value.split("+") if key.strip() == "negatives" else value
    return _check(out, None)


def _check(mapping: dict, where) -> dict:
    unknown = sorted(set(mapping) - set(KEYS))
    if unknown:
        raise AutocompError(f"unknown column key(s) {', '.join(unknown)} (known: "
                            f"{', '.join(KEYS)})", file=where)
    lacking = [k for k in ("image", "positive", "negatives") if k not in mapping]
    if lacking:
        raise AutocompError(f"the column mapping needs {', '.join(lacking)} (e.g. --columns "
                            "image=file,positive=caption,negatives=negs)", file=where)
    for key, value in mapping.items():
        names = value if key == "negatives" and isinstance(value, list) else [value]
        if not names or not all(isinstance(v, str) and v.strip() for v in names):
            want = ("a column name or a list of column names" if key == "negatives"
                    else "one column name")
            raise AutocompError(f"expected {want}, got {value!r}"[:160], file=where,
                                field=key)
    return mapping


def _rows(source: Path) -> Iterator[dict]:
    if str(source).startswith("hf:"):  # a hub dataset (or a cached one, offline)
        from autocomp.formats.autocomp_hf import open_dataset

        yield from _undecoded(open_dataset(source))
        return
    suffix = source.suffix.lower()
    if source.is_dir():
        ds = require("datasets", "formats", "a datasets folder").load_from_disk(str(source))
        if hasattr(ds, "keys"):  # a DatasetDict: its "train" split or its only one
            ds = ds["train"] if "train" in ds else ds[next(iter(ds.keys()))]
        yield from _undecoded(ds)
    elif suffix == ".jsonl":
        with open(source, encoding="utf-8") as fh:
            for i, line in enumerate(fh, start=1):
                if line.strip():
                    try:
                        yield json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise AutocompError(f"not valid JSON: {exc}", file=source,
                                            entry=f"line {i}") from None
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
        pq = require("pyarrow.parquet", "formats", "parquet")
        yield from pq.read_table(source).to_pylist()
    else:
        raise AutocompError("expected a .jsonl, .json, .csv or .parquet file, or a datasets "
                            "folder", file=source)


def _undecoded(ds):
    """Rows with Image columns as {bytes, path} (not decoded to PIL images)."""
    from datasets import Image

    for name, feature in ds.features.items():
        if isinstance(feature, Image):
            ds = ds.cast_column(name, Image(decode=False))
    return ds


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
                 skip_missing: bool = False) -> Suite:
    mapping = _check(mapping, None)
    hub = str(source).startswith("hf:")
    if hub and images is None:
        raise AutocompError("a hub dataset's image column names files: give --images DIR")
    root = ImageRoot(images or (source if source.is_dir() else source.parent), skip_missing)
    groups: dict[str, list] = defaultdict(list)
    total = 0
    for i, row in enumerate(_rows(source), start=1):
        if not isinstance(row, dict):
            raise AutocompError(f"expected an object, got {type(row).__name__}", file=source,
                                entry=f"row {i}")
        for key in ("image", "positive"):
            if mapping[key] not in row:
                raise AutocompError(f"no column '{mapping[key]}' (the {key})", file=source,
                                    entry=f"row {i}")
        total += 1
        item_id = str(row.get(mapping["id"], i)) if "id" in mapping else str(i)
        image = row[mapping["image"]]
        if isinstance(image, dict) and image.get("bytes"):  # a datasets Image, embedded
            from autocomp.formats.autocomp_hf import cache_folder, save_image

            folder = cache_folder(str(source).rsplit("/", 1)[-1])
            folder.mkdir(parents=True, exist_ok=True)
            path = str((folder / save_image(image, folder)).resolve())
        else:
            if isinstance(image, dict):  # a datasets Image that records a file path
                image = image.get("path")
            path = root.resolve(image, item_id, source)
        if path is None:
            continue
        positive = row[mapping["positive"]]
        if not isinstance(positive, str) or not positive.strip():
            raise AutocompError(f"expected a caption, got {positive!r}", file=source,
                                entry=f"row {i}", field=mapping["positive"])
        subset = str(row.get(mapping["subset"], "all")) if "subset" in mapping else "all"
        groups[subset].append({
            "id": item_id, "task": "columns", "n": 0, "image": path,
            "positive": normalise_space(positive),
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
    return Suite("columns", source, root.root, benches, {},
                 {"items": {b.name: len(groups[b.kind]) for b in benches},
                  "missing_images": len(root.missing), "mapping": mapping})


def open_columns(source, images, columns, skip_missing: bool) -> Suite:
    return load_columns(source, columns, images, skip_missing)

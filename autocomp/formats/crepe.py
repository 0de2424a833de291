"""CREPE (Ma et al. 2023). Systematicity: syst_vg_hard_negs_{seen,unseen}_compounds_in_
{cc12m,yfcc,laion}.csv, rows {image_id, caption, x, y, width, height,
valid_hard_negs_{atom,comp,combined}}: a benchmark per negative type and training set
(crepe/syst-<type>-<dataset>), each item labelled seen / unseen compounds (the report's
Seen / unseen table); a row with no valid negative of a type is left out of it, counted.

Productivity: CSV files per hard-negative type (atom, swap,
negate) and complexity 4-12, rows {image_id (Visual Genome), caption, n, n_objects,
n_relations, n_attributes, n_connected_components, hard_negs, x, y, width, height}.

`hard_negs` is a Python literal (a list or a set of strings): parsed with
ast.literal_eval, never eval; a set is sorted so item ids and order are stable. The image
is the crop (x, y, width, height) of <images>/<image_id>.jpg. One benchmark per type and
complexity, `crepe/<type>-n<k>`; the report gives Recall@1/3/5 and the mean rank of the
positive (ties counted against it). The type comes from the file's path (a folder or file
name containing atom, swap or negate), the complexity from the row's `n` (or, where it is
empty, from a file name ending in complexity_K).

Rows whose positive appears among its own negatives, exactly or up to letter case, cannot
be solved: they are flagged on the item (`flags`) and counted per benchmark.
"""

from __future__ import annotations

import ast
import csv
import math
import re
from collections import defaultdict
from pathlib import Path

from autocomp.core.errors import AutocompError
from autocomp.core.families import contract_example
from autocomp.formats.images import ImageRoot, crop_problem, image_root
from autocomp.formats.suite import LoadedBenchmark, Suite, normalise_space, own_files

TYPES = ("atom", "swap", "negate")
COLUMNS = ("image_id", "caption", "hard_negs", "x", "y", "width", "height")


def _type_of(path: Path) -> str:
    found = [t for t in TYPES if re.search(rf"(^|[^a-z]){t}([^a-z]|$)", str(path).lower())]
    if len(found) != 1:
        raise AutocompError("cannot tell the hard-negative type from the path (a folder or "
                            f"file name should contain one of {', '.join(TYPES)})", file=path)
    return found[0]


def _complexity(path: Path) -> int:
    """The complexity a file name states ("..._complexity_7.csv"), for rows without `n`."""
    m = re.search(r"complexity[_-]?(\d+)", path.name.lower())
    if not m:
        raise AutocompError("rows have no n and the file name states no complexity "
                            "(..._complexity_K.csv)", file=path)
    return int(m.group(1))


def parse_negatives(text: str, path: Path, row: int, field: str = "hard_negs") -> list[str]:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise AutocompError(f"not a Python list or set literal: {text[:60]!r}", file=path,
                            entry=f"row {row}", field=field) from None
    if not isinstance(value, (list, tuple, set)) or not all(isinstance(v, str) for v in value):
        raise AutocompError(f"expected a list or set of strings, got {text[:60]!r}",
                            file=path, entry=f"row {row}", field=field)
    values = sorted(value) if isinstance(value, set) else list(value)
    return [normalise_space(v) for v in values if v.strip()]


def _number(row: dict, key: str, path: Path, i: int) -> float:
    try:
        return float(row[key])
    except (TypeError, ValueError):
        raise AutocompError(f"expected a number, got {row.get(key)!r}", file=path,
                            entry=f"row {i}", field=key) from None


def _complexity_of(row: dict, path: Path, i: int) -> int:
    n = _number(row, "n", path, i)
    if not (math.isfinite(n) and n == int(n) and 1 <= n <= 1000):
        raise AutocompError(f"expected a whole number of atoms, got {row['n']!r}", file=path,
                            entry=f"row {i}", field="n")
    return int(n)


def _crop(row: dict, path: Path, i: int, image: str) -> list[float]:
    """The row's crop box, checked now rather than when a model scores it (crop_problem)."""
    crop = [_number(row, k, path, i) for k in ("x", "y", "width", "height")]
    bad = crop_problem(crop, image)
    if bad:
        raise AutocompError(f"the crop box {crop} is {bad}", file=path, entry=f"row {i}",
                            field="x, y, width, height")
    return crop


def _rows(path: Path, columns: tuple[str, ...] = COLUMNS):
    """(row number, row) of a CSV file, the header being row 1; a broken file is one line
    naming where."""
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        try:
            lacking = [c for c in columns if c not in (reader.fieldnames or [])]
            if lacking:
                raise AutocompError(f"missing column(s) {', '.join(lacking)}", file=path)
            yield from enumerate(reader, start=2)
        except UnicodeDecodeError as exc:
            raise AutocompError(f"not UTF-8 text (byte {exc.start} of a read block, after "
                                f"line {reader.line_num})", file=path) from None
        except csv.Error as exc:  # e.g. a field over csv's 128 KB limit
            raise AutocompError(f"not a readable CSV row ({exc})", file=path,
                                entry=f"line {reader.line_num + 1}") from None


def _caption_and_image(row: dict, path: Path, i: int) -> tuple[str, str]:
    """A row's caption (whitespace-normalised) and Visual Genome image id, checked."""
    caption = normalise_space(row["caption"] or "")
    if not caption:
        raise AutocompError("empty caption", file=path, entry=f"row {i}", field="caption")
    image_id = (row["image_id"] or "").strip()
    if not (image_id.isascii() and image_id.isdigit()):
        raise AutocompError(f"expected a Visual Genome image id, got {image_id!r}",
                            file=path, entry=f"row {i}", field="image_id")
    return caption, image_id


SYST = re.compile(r"syst_vg_hard_negs_(seen|unseen)_compounds_in_([a-z0-9]+)\.csv$")
SYST_TYPES = ("atom", "comp", "combined")  # valid_hard_negs_<type>
SYST_COLUMNS = ("image_id", "caption", "x", "y", "width", "height",
                *(f"valid_hard_negs_{t}" for t in SYST_TYPES))
SEEN_LABEL = {"seen": "seen compounds", "unseen": "unseen compounds"}


def systematicity_files(source: Path) -> list[Path]:
    """CREPE's systematicity CSVs (syst_vg_hard_negs_{seen,unseen}_compounds_in_{cc12m,
    yfcc,laion}.csv), as the authors name them."""
    if source.is_file():
        return [source] if SYST.search(source.name) else []
    return [p for p in own_files(source, "*.csv") if SYST.search(p.name)]


def _syst_items(path: Path, root: ImageRoot, cells: dict, flagged: dict) -> int:
    """The rows of one systematicity file into cells[(type, dataset)]: an item per row and
    type, labelled seen / unseen compounds (item["breakdown"]["seen"]); returns the rows."""
    split, dataset = SYST.search(path.name).groups()
    total = 0
    for i, row in _rows(path, SYST_COLUMNS):
        total += 1
        caption, image_id = _caption_and_image(row, path, i)
        item_id = f"syst-{split}-{dataset}-{i}"
        image = root.resolve(f"{image_id}.jpg", item_id, path)
        if image is None:
            continue
        crop = _crop(row, path, i, None if root.names_only else image)
        for neg_type in SYST_TYPES:
            negs = parse_negatives(row[f"valid_hard_negs_{neg_type}"] or "[]", path, i,
                                   f"valid_hard_negs_{neg_type}")
            name = f"crepe/syst-{neg_type}-{dataset}"
            if not negs:  # CREPE could not make one: the row is not in that set
                flagged[f"{name}: rows with no valid {neg_type} hard negative (left out)"] += 1
                continue
            item = {"id": f"{item_id}-{neg_type}", "task": "crepe-syst", "n": 0, "image": image,
                    "crop": crop, "positive": caption, "concept": item_id,
                    "negatives": [{"caption": x, "category": neg_type, "same_meaning": False}
                                  for x in negs],
                    "breakdown": {"seen": SEEN_LABEL[split]}}
            if caption.lower() in {x.lower() for x in negs}:
                item["flags"] = ["positive among negatives"]
                flagged[f"{name}: positive among negatives"] += 1
            cells[(f"syst-{neg_type}", dataset)].append(item)
    return total


def productivity_files(source: Path) -> list[Path]:
    """The productivity CSVs of a CREPE folder: as the authors ship them
    (.../prod_hard_negatives/{atom,negate,swap}/*.csv, under a checkout of their repository
    that holds other CSVs too), else every CSV under the folder."""
    if source.is_file():
        return [source]
    prod = sorted(p for p in source.rglob("prod_hard_negatives") if p.is_dir())
    if prod:
        return sorted(f for folder in prod for f in own_files(folder, "*.csv")
                      if f.resolve().is_relative_to(source.resolve()))
    return [p for p in own_files(source, "*.csv") if not SYST.search(p.name)]


def load_crepe(source: Path, root: ImageRoot) -> Suite:
    """Productivity (crepe/<type>-n<k>) and systematicity (crepe/syst-<type>-<dataset>,
    items labelled seen / unseen compounds) files, whichever the folder holds."""
    syst = systematicity_files(source)
    files = [] if source.is_file() and syst else productivity_files(source)
    if not files and not syst:
        raise AutocompError("no CREPE CSV files here", file=source)
    cells: dict[tuple[str, int], list] = defaultdict(list)
    flagged: dict[str, int] = defaultdict(int)
    total = 0
    syst_cells: dict[tuple[str, str], list] = defaultdict(list)
    for path in syst:
        total += _syst_items(path, root, syst_cells, flagged)
    for path in files:
        neg_type = _type_of(path.relative_to(source) if source.is_dir() else path)
        for i, row in _rows(path):
            total += 1
            caption, image_id = _caption_and_image(row, path, i)
            negs = parse_negatives(row["hard_negs"] or "", path, i)
            n = _complexity_of(row, path, i) if row.get("n") else _complexity(path)
            item_id = f"{neg_type}-{path.stem}-{i}"
            image = root.resolve(f"{image_id}.jpg", item_id, path)
            if image is None:
                continue
            crop = _crop(row, path, i, None if root.names_only else image)
            flags = []
            if caption in negs:
                flags.append("positive among negatives")
            elif caption.lower() in {x.lower() for x in negs}:
                flags.append("positive among negatives up to case")
            name = f"crepe/{neg_type}-n{n}"
            for f in flags:
                flagged[f"{name}: {f}"] += 1
            item = {"id": item_id, "task": "crepe", "n": n, "image": image, "crop": crop,
                    "positive": caption,
                    "negatives": [{"caption": x, "category": neg_type, "same_meaning": False}
                                  for x in negs],
                    "counts": {k: row.get(k) for k in ("n_objects", "n_relations",
                                                       "n_attributes",
                                                       "n_connected_components")}}
            if flags:
                item["flags"] = flags
            cells[(neg_type, n)].append(item)
    root.check(total, source)
    benches = [LoadedBenchmark(f"crepe/{neg_type}-n{n}", "crepe", n, "vg", neg_type,
                               lambda rows=rows: iter(rows))
               for (neg_type, n), rows in sorted(cells.items(), key=lambda kv: (
                   TYPES.index(kv[0][0]), kv[0][1]))]
    sizes = {b.name: len(cells[(b.kind, b.n)]) for b in benches}
    for (neg_type, dataset), rows in sorted(syst_cells.items()):
        name = f"crepe/{neg_type}-{dataset}"
        benches.append(LoadedBenchmark(name, "crepe-syst", 0, dataset, neg_type,
                                       lambda rows=rows: iter(rows)))
        sizes[name] = len(rows)
    info = {"items": sizes,
            "flagged": dict(sorted(flagged.items())), "missing_images": len(root.missing)}
    return Suite("crepe", source, root.root, benches, {}, info)


@contract_example("crepe")
def open_crepe(source, images, columns, skip_missing: bool, text_only=False) -> Suite:
    return load_crepe(source, image_root(images, "crepe", "Visual Genome", skip_missing,
                                         text_only))

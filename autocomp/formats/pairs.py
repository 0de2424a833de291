"""Two images x two captions, in the layouts their authors publish them (Hugging Face).

  winoground  Thrush et al. 2022: id, image_0, image_1, caption_0, caption_1, tag,
              secondary_tag, num_main_preds, collapsed_tag. caption_k describes image_k.
  colorswap   Burapacheep et al. 2024: id, image_1, image_2, caption_1, caption_2 (the same
              words, the colors moved to other objects), image_source, caption_source.

Read from a `datasets.save_to_disk` folder (every split; a single dataset keeps the split
it was saved from), parquet files (a file, or a folder of them; the split from the path),
the JSONL of the authors' hub repository (Winoground's data/examples.jsonl, its images
named without extension in data/images/), or ColorSwap's GitHub release (data/test.json
and data/train.json, JSON lists whose images are named "images/img_0_1.png" from data/).
Image cells may be embedded ({bytes, path}: written once to autocomp's cache by content)
or file names (under --images; default: images/ beside the JSONL). One benchmark per
split, `<name>/<split>`; an item is 2 x 2 with the identity as truth, so it gets text,
image and group scores (eval/matrix.py), with Winoground's tags as breakdowns.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from autocomp.core.errors import AutocompError
from autocomp.core.families import contract_example
from autocomp.formats.images import ImageCells, ImageRoot
from autocomp.formats.suite import (
    LoadedBenchmark,
    Suite,
    json_rows,
    jsonl_rows,
    normalise_space,
    own_files,
    parquet_rows,
    undecoded,
)

LAYOUTS = {
    "winoground": {"images": ("image_0", "image_1"), "captions": ("caption_0", "caption_1"),
                   "breakdown": {"tag": "collapsed_tag", "main_preds": "num_main_preds",
                                 "secondary": "secondary_tag"},
                   "jsonl": ("examples.jsonl", "data/examples.jsonl")},
    "colorswap": {"images": ("image_1", "image_2"), "captions": ("caption_1", "caption_2"),
                  "breakdown": {"image_source": "image_source"},
                  "jsonl": ("colorswap.jsonl", "data/colorswap.jsonl"),
                  "json": ("data/test.json", "data/train.json", "test.json", "train.json")},
}
SPLITS = ("test", "train", "validation", "dev")


def layout_of(columns) -> str | None:
    """The layout whose image and caption columns a table has."""
    for name, layout in LAYOUTS.items():
        if set(layout["images"]) | set(layout["captions"]) <= set(columns):
            return name
    return None


def _split_of(path: Path) -> str:
    parts = [p.lower() for p in path.parts]
    for split in SPLITS:
        if any(p == split or p.startswith(f"{split}-") or p.startswith(f"{split}.")
               for p in parts):
            return split
    return "all"


def table_files(source: Path, name: str) -> list[tuple[str, Path]]:
    """(split, file) of a source in `name`'s layout: a JSONL or parquet file, a folder with
    the authors' JSONL, or a folder of parquet files."""
    if source.is_file():
        return [(_split_of(source), source)]
    for rel in LAYOUTS[name]["jsonl"]:
        if (source / rel).is_file():
            return [("test", source / rel)]
    lists = [source / rel for rel in LAYOUTS[name].get("json", ()) if (source / rel).is_file()]
    if lists:  # the GitHub release: one JSON list per split, the split its file's stem
        folder = lists[0].parent
        return [(p.stem, p) for p in lists if p.parent == folder]
    return [(_split_of(p.relative_to(source)), p) for p in own_files(source, "*.parquet")]


def _splits(source: Path, name: str) -> Iterator[tuple[str, Path, Iterator[dict]]]:
    from autocomp.core.backend import require

    if source.is_dir() and any((source / f).is_file() for f in ("dataset_dict.json",
                                                                "state.json")):
        datasets = require("datasets", "formats", "a datasets folder")
        ds = datasets.load_from_disk(str(source))
        if hasattr(ds, "keys"):
            for split in ds:
                yield split, source, iter(undecoded(ds[split]))
        else:  # one dataset: the split it was saved from, as its parquet files name it
            yield str(ds.split) if ds.split else "all", source, iter(undecoded(ds))
        return
    files = table_files(source, name)
    if not files:
        named = ", ".join((*LAYOUTS[name]["jsonl"][:1], *LAYOUTS[name].get("json", ())[:2]))
        raise AutocompError(f"no {name} data here (a datasets folder, parquet files or "
                            f"{named})", file=source)
    for split, path in files:
        if path.suffix.lower() == ".parquet":
            rows = parquet_rows(path)
        elif path.suffix.lower() == ".json":
            rows = iter(json_rows(path))
        else:
            rows = jsonl_rows(path)
        yield split, path, rows


def load_pairs(source: Path, name: str, root: ImageRoot | None,
               text_only: bool = False) -> Suite:
    """The benchmarks of `source` in `name`'s layout; `root` is the folder of images named
    by file (None: the images are embedded), `text_only` reads captions only."""
    layout = LAYOUTS[name]
    label = source.name if source.is_dir() else source.stem
    images = ImageCells(root, f"{name}-{label}", text_only)
    groups: dict[str, list] = {}
    total, ids, same = 0, {}, []
    for split, where, rows in _splits(source, name):
        for i, row in enumerate(rows, start=1):
            if not isinstance(row, dict):
                raise AutocompError(f"expected an object, got {type(row).__name__}",
                                    file=where, entry=f"row {i}")
            total += 1
            item_id = given = f"{split}-{row.get('id', i)}"
            ids[given] = ids.get(given, 0) + 1
            if ids[given] > 1:  # ids pair results item by item: kept apart, and counted
                item_id = f"{given}~{ids[given]}"
            captions = []
            for col in layout["captions"]:
                text = row.get(col)
                if not isinstance(text, str) or not text.strip():
                    raise AutocompError(f"expected a caption, got {text!r}"[:120], file=where,
                                        entry=f"row {i}", field=col)
                captions.append(normalise_space(text))
            if len(set(captions)) < len(captions):
                same.append(item_id)
            paths = []
            for col in layout["images"]:
                if row.get(col) is None:
                    raise AutocompError("no image", file=where, entry=f"row {i}", field=col)
                paths.append(images.path(row[col], item_id, where))
            if None in paths:
                continue  # missing, and --skip-missing: counted by the root
            item = {"id": item_id, "task": name, "n": 0, "images": paths,
                    "captions": captions, "truth": [[1, 0], [0, 1]]}
            if item_id != given:
                item["repeats_id"] = given
            breakdown = _breakdown(row, layout["breakdown"])
            if breakdown:
                item["breakdown"] = breakdown
            groups.setdefault(split, []).append(item)
    if root is not None:  # two images an item
        root.check(total * len(layout["images"]), source)
    if not groups:
        raise AutocompError(f"no {name} rows", file=source)
    _warn_odd_rows(source, ids, same)
    benches = [LoadedBenchmark(f"{name}/{split}", name, 0, name, split,
                               lambda rows=rows: iter(rows))
               for split, rows in sorted(groups.items())]
    info = {"items": {b.name: len(groups[b.kind]) for b in benches},
            "missing_images": len(root.missing) if root is not None else 0}
    base, also = images.folders()
    return Suite(name, source, base, benches, {}, info, also)


def _warn_odd_rows(source: Path, ids: dict, same: list) -> None:
    """One warning each for rows sharing an id (scored apart as ID~2, ...) and items whose
    two captions are the same text (no scorer can tell them apart: a tie, scored wrong);
    `autocomp audit` counts both."""
    import warnings

    shared = {k: v for k, v in ids.items() if v > 1}
    if shared:
        first = next(iter(shared))
        warnings.warn(f"{source}: {sum(shared.values()) - len(shared)} row(s) repeat an id "
                      f"of another (first: {first}, {shared[first]} rows); scored apart "
                      f"as {first}~2, ...", stacklevel=2)
    if same:
        warnings.warn(f"{source}: {len(same)} item(s) have two identical captions (first: "
                      f"{same[0]}); no model can tell them apart", stacklevel=2)


def _breakdown(row: dict, columns: dict) -> dict:
    out = {}
    for dim, col in columns.items():
        value = row.get(col)
        if isinstance(value, str):
            parts = [p.strip() for p in value.split(",") if p.strip()]
            if parts:
                out[dim] = parts if len(parts) > 1 else parts[0]
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out[dim] = str(int(value)) if float(value).is_integer() else str(value)
    return out


def _default_images(source: Path, name: str) -> Path | None:
    """The authors' image folder: images/ beside the JSONL (Winoground's data/images), or,
    for a table whose image cells already start with "images/" (ColorSwap's GitHub
    release), the folder that holds that images/."""
    base = source.parent if source.is_file() else source
    files = table_files(source, name) if source.exists() else []
    if files and files[0][1].suffix.lower() == ".json":
        return files[0][1].parent
    for folder in (base / "images", base / "data" / "images"):
        if folder.is_dir():
            return folder
    return None


def _opener(name: str):
    def open_(source, images, columns, skip_missing: bool, text_only=False) -> Suite:
        folder = images or (None if text_only else _default_images(Path(source), name))
        root = None if text_only or folder is None else ImageRoot(folder, skip_missing)
        return load_pairs(Path(source), name, root, text_only)
    return open_


open_winoground = contract_example("winoground")(_opener("winoground"))
open_colorswap = contract_example("colorswap")(_opener("colorswap"))

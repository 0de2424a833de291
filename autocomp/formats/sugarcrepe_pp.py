"""SugarCrepe++ (Dumpala et al. 2024): {replace_att, replace_obj, replace_rel, swap_att,
swap_obj}.json (in the folder or its data/), each a JSON list of {id, filename, caption,
caption2, negative_caption} over COCO val2017 images: two positives that say the same in
different words, and a hard negative.

Two benchmarks per file, scored as the authors' evaluation scripts do:
  sugarcrepe++/<subset>      image-text task (ITT): right when BOTH positives score above
                             the negative on the image (one row of three captions, every
                             true caption above the false one; chance 1/3); beside it, as
                             the authors report, Image-P1-Neg and Image-P2-Neg: each
                             positive alone above the negative (chance 1/2; metrics.side)
  sugarcrepe++/<subset>-tot  text-only task (TOT): right when the two positives are more
                             similar to each other than either is to the negative
                             (cos(P1, P2) > cos(P1, N) and > cos(P2, N); chance 1/3); needs
                             caption vectors: a dual encoder's text tower or a sentence-
                             embedding model (text:, as the authors run it); other scorers
                             skip it (counted)
Captions are whitespace-normalised (counted), as SugarCrepe's are.
"""

from __future__ import annotations

from pathlib import Path

from autocomp.core.errors import AutocompError
from autocomp.core.families import contract_example
from autocomp.formats.images import ImageRoot, image_root
from autocomp.formats.suite import LoadedBenchmark, Suite, json_rows, normalise_space, spaced

SUBSETS = ("replace_att", "replace_obj", "replace_rel", "swap_att", "swap_obj")
FIELDS = ("filename", "caption", "caption2", "negative_caption")
# the authors' side metrics of ITT: each positive alone against the negative on the image
# (row 0; caption 0 or 1 against caption 2)
SIDE = {"Image-P1-Neg": (0, 0, 2), "Image-P2-Neg": (0, 1, 2)}


def _is_pp(path: Path) -> bool:
    with open(path, encoding="utf-8", errors="replace") as fh:
        head = fh.read(4096)
    return head.lstrip().startswith("[") and '"caption2"' in head


def data_folder(source: Path) -> Path | None:
    """The folder holding SugarCrepe++'s files (the folder itself or its data/)."""
    for folder in (source, source / "data"):
        if any((folder / f"{s}.json").is_file() and _is_pp(folder / f"{s}.json")
               for s in SUBSETS):
            return folder
    return None


def _items(path: Path, subset: str, root: ImageRoot, changed: dict,
           flagged: dict) -> tuple[list, list, int]:
    itt, tot, total = [], [], 0
    for i, row in enumerate(json_rows(path)):
        key = str(row.get("id", i)) if isinstance(row, dict) else str(i)
        if not isinstance(row, dict):
            raise AutocompError(f"expected an object, got {type(row).__name__}", file=path,
                                entry=f"row {i}")
        for f in FIELDS:
            if not isinstance(row.get(f), str) or not row[f].strip():
                raise AutocompError(f"expected a non-empty string, got {row.get(f)!r:.60}",
                                    file=path, entry=f"id {key}", field=f)
        total += 1
        p1, p2, neg = (normalise_space(row[f]) for f in ("caption", "caption2",
                                                         "negative_caption"))
        raw = spaced(row["caption"], row["caption2"], row["negative_caption"])
        changed[subset] += raw
        # a negative equal to a positive (two in swap_obj) is flagged, as the other readers
        # flag theirs: no model can get that item right
        same = neg.lower() in (p1.lower(), p2.lower())
        flagged[subset] += same
        marks = {**({"raw_spaces": True} if raw else {}),
                 **({"flags": ["positive among negatives"]} if same else {})}
        item_id = f"{subset}-{key}"
        tot.append({"id": f"{item_id}-tot", "task": "sugarcrepe++", "n": 0,
                    "texts": [p1, p2, neg], "text_pairs": [[0, 1], [0, 2], [1, 2]],
                    "positive": p2, "negatives": [
                        {"caption": neg, "category": "P1-Neg", "same_meaning": False},
                        {"caption": neg, "category": "P2-Neg", "same_meaning": False}],
                    **marks})
        image = root.resolve(row["filename"].strip(), item_id, path)
        if image is None:
            continue
        itt.append({"id": item_id, "task": "sugarcrepe++", "n": 0, "images": [image],
                    "captions": [p1, p2, neg], "truth": [[1, 1, 0]],
                    "true_captions": "all", "side": SIDE, **marks})
    return itt, tot, total


def load_sugarcrepe_pp(source: Path, root: ImageRoot) -> Suite:
    folder = data_folder(source)
    if folder is None:
        raise AutocompError(f"no SugarCrepe++ file here (expected {', '.join(SUBSETS)} .json "
                            "lists with caption2)", file=source)
    benches, info = [], {"items": {}, "normalised": {}, "flagged": {}, "missing_images": 0}
    changed, flagged = dict.fromkeys(SUBSETS, 0), dict.fromkeys(SUBSETS, 0)
    total = 0
    for subset in SUBSETS:
        path = folder / f"{subset}.json"
        if not path.is_file():
            continue
        itt, tot, n = _items(path, subset, root, changed, flagged)
        total += n
        info["items"][f"sugarcrepe++/{subset}"] = len(itt)
        info["items"][f"sugarcrepe++/{subset}-tot"] = len(tot)
        info["normalised"][subset] = changed[subset]
        for bench in (f"sugarcrepe++/{subset}", f"sugarcrepe++/{subset}-tot"):
            if flagged[subset]:
                info["flagged"][f"{bench}: positive among negatives"] = flagged[subset]
        benches.append(LoadedBenchmark(f"sugarcrepe++/{subset}", "sugarcrepe++", 0, "coco",
                                       subset, lambda rows=itt: iter(rows)))
        benches.append(LoadedBenchmark(f"sugarcrepe++/{subset}-tot", "sugarcrepe++", 0,
                                       "text", f"{subset}-tot", lambda rows=tot: iter(rows)))
    root.check(total, folder)
    info["missing_images"] = len(root.missing)
    return Suite("sugarcrepe++", source, root.root, benches, {}, info)


@contract_example("scpp")
def open_sugarcrepe_pp(source, images, columns, skip_missing: bool, text_only=False) -> Suite:
    return load_sugarcrepe_pp(Path(source), image_root(images, "sugarcrepe++",
                                                       "COCO val2017", skip_missing,
                                                       text_only))

"""ARO (Yuksekgonul et al. 2023), from the files as the authors distribute them:

  visual_genome_relation.json     [{image_path, bbox_x, bbox_y, bbox_w, bbox_h,
                                  true_caption, false_caption, relation_name, ...}]
  visual_genome_attribution.json  the same with attributes: [a, b] for relation_name
  coco_karpathy_test.json         [{image, caption: [...]}] (COCO-Order)
  flickr30k_test.json             the same for Flickr30k (Flickr30k-Order)

VG-Relation and VG-Attribution: the image is the box's crop of images/<image_path> (the
authors' folder layout; --images overrides), the positive its true caption, the one
negative its false caption; a tie is wrong (the authors' argmax puts the false caption
first). The authors report the macro accuracy: per relation (VG-Relation) and per
attribute pair with at least 25 items (VG-Attribution), then the unweighted mean; the
result JSON holds every group's accuracy and count (`by`) and that mean (`macro`).

COCO-Order and Flickr30k-Order: every caption of every image is an item whose negatives are
its four word-order perturbations (language/order.py). The authors' orders are random and
not released: each seed (0, 1, 2) is a benchmark of its own, `aro/coco-order/seed<k>`,
and the report gives their mean and spread. A perturbation that reads the same as the
caption is kept and flagged same_meaning (the distinct-meaning accuracy leaves it out;
the authors' argmax counts such a tie as right).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from autocomp.core.errors import AutocompError
from autocomp.core.families import contract_example
from autocomp.formats.images import ImageRoot, crop_problem
from autocomp.formats.suite import LoadedBenchmark, Suite, normalise_space

FILES = {"vg-relation": "visual_genome_relation.json",
         "vg-attribution": "visual_genome_attribution.json",
         "coco-order": "coco_karpathy_test.json", "flickr-order": "flickr30k_test.json"}
ORDER_SEEDS = (0, 1, 2)
MACRO = {"vg-relation": {"by": "relation", "min_count": 1},
         "vg-attribution": {"by": "attributes", "min_count": 25}}


def aro_files(source: Path) -> dict[str, Path]:
    if source.is_file():
        found = {k: source for k, f in FILES.items() if source.name == f}
    else:
        found = {k: source / f for k, f in FILES.items() if (source / f).is_file()}
    return found


def _read(path: Path) -> list:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise AutocompError(f"not valid JSON: {exc}", file=path) from None
    except RecursionError:
        raise AutocompError("its JSON is nested too deeply", file=path) from None
    if not isinstance(data, list):
        raise AutocompError(f"expected a list of objects, got {type(data).__name__}",
                            file=path)
    return data


def _text(entry: dict, key: str, path: Path, i: int) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        raise AutocompError(f"expected a non-empty string, got {value!r}"[:120], file=path,
                            entry=i, field=key)
    return value


def _box(entry: dict, path: Path, i: int, image: str) -> list[float]:
    """The entry's crop box, checked against its image now (crop_problem), not in the
    decode thread while a model scores it."""
    box = []
    for key in ("bbox_x", "bbox_y", "bbox_w", "bbox_h"):
        v = entry.get(key)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise AutocompError(f"expected a number, got {v!r}"[:120], file=path, entry=i,
                                field=key)
        box.append(float(v))
    bad = crop_problem(box, image)
    if bad:
        raise AutocompError(f"the box {box} is {bad}", file=path, entry=i,
                            field="bbox_x, bbox_y, bbox_w, bbox_h")
    return box


def _relation(entry: dict, path: Path, i: int) -> str:
    return _text(entry, "relation_name", path, i)


def _attributes(entry: dict, path: Path, i: int) -> str:
    """The attribute pair, as the authors group it ("a_b")."""
    attrs = entry.get("attributes")
    if not (isinstance(attrs, list) and len(attrs) == 2
            and all(isinstance(a, str) for a in attrs)):
        raise AutocompError(f"expected two attribute names, got {attrs!r}"[:120], file=path,
                            entry=i, field="attributes")
    return f"{attrs[0]}_{attrs[1]}"


def _vg_items(subset: str, path: Path, root: ImageRoot) -> tuple[list, int]:
    rows, total = [], 0
    for i, entry in enumerate(_read(path)):
        if not isinstance(entry, dict):
            raise AutocompError(f"expected an object, got {type(entry).__name__}", file=path,
                                entry=i)
        total += 1
        item_id = f"{subset}-{i}"
        image = root.resolve(_text(entry, "image_path", path, i), item_id, path)
        if image is None:
            continue
        by = MACRO[subset]["by"]
        group = {by: _relation(entry, path, i) if by == "relation"
                 else _attributes(entry, path, i)}
        rows.append({"id": item_id, "task": "aro", "n": 0, "image": image,
                     "crop": _box(entry, path, i, None if root.names_only else image),
                     "positive": normalise_space(_text(entry, "true_caption", path, i)),
                     "negatives": [{"caption": normalise_space(
                         _text(entry, "false_caption", path, i)), "category": subset,
                         "same_meaning": False}],
                     "breakdown": group})
    return rows, total


def _order_entries(subset: str, path: Path, root: ImageRoot) -> tuple[list, int]:
    """(item id, image, raw caption) of every caption; perturbed per seed when read."""
    out, total = [], 0
    for i, entry in enumerate(_read(path)):
        captions = entry.get("caption") if isinstance(entry, dict) else None
        if isinstance(captions, str):
            captions = [captions]
        if not isinstance(captions, list) or not all(isinstance(c, str) for c in captions):
            raise AutocompError(f"expected an object with a list of captions, got "
                                f"{str(entry)[:80]}", file=path, entry=i, field="caption")
        total += len(captions)
        image = root.resolve(_text(entry, "image", path, i), f"{subset}-{i}", path)
        if image is None:
            continue
        out += [(f"{subset}-{i}-{k}", image, c) for k, c in enumerate(captions) if c.strip()]
    return out, total


def _order_items(subset: str, entries: list, seed: int):
    from autocomp.language.order import perturbations, pre_caption

    for item_id, image, caption in entries:
        positive = pre_caption(caption)
        yield {"id": item_id, "task": "aro", "n": 0, "image": image, "positive": positive,
               "negatives": [{"caption": c, "category": how, "same_meaning": c == positive}
                             for c, how in zip(perturbations(caption, seed, item_id),
                                               ("nouns_adjectives", "all_but",
                                                "within_trigrams", "trigrams"),
                                               strict=True)]}


def load_aro(source: Path, roots: dict) -> Suite:
    """`roots`: subset -> the ImageRoot its image names are under."""
    files = aro_files(source)
    if not files:
        raise AutocompError(f"no ARO file here (expected {', '.join(FILES.values())})",
                            file=source)
    benches, info = [], {"items": {}, "missing_images": 0}
    for subset, path in files.items():
        root = roots[subset]
        if subset in MACRO:
            rows, n = _vg_items(subset, path, root)
            benches.append(LoadedBenchmark(f"aro/{subset}", "aro", 0, "vg", subset,
                                           lambda rows=rows: iter(rows), meta=MACRO[subset]))
            info["items"][f"aro/{subset}"] = len(rows)
        else:
            entries, n = _order_entries(subset, path, root)
            for seed in ORDER_SEEDS:
                name = f"aro/{subset}/seed{seed}"
                benches.append(LoadedBenchmark(
                    name, "aro", 0, subset.split("-")[0], subset,
                    lambda e=entries, k=subset, s=seed: _order_items(k, e, s),
                    meta={"seed_group": f"aro/{subset}", "seed": seed}))
                info["items"][name] = len(entries)
        root.check(n, path)
        info["missing_images"] += len(root.missing)
    import os

    used = {str(roots[k].root) for k in files}
    return Suite("aro", source, Path(os.path.commonpath(sorted(used))), benches, {}, info)


@contract_example("aro")
def open_aro(source, images, columns, skip_missing: bool, text_only=False) -> Suite:
    """Images under --images, else where the authors put them: images/ beside
    VG-Relation's and VG-Attribution's JSON, the COCO or Flickr30k root (the folder the
    Karpathy JSON is in) for the Order sets."""
    source = Path(source)
    base = source.parent if source.is_file() else source
    roots = {}
    for subset in aro_files(source):
        folder = None if text_only else images or (base / "images" if subset in MACRO
                                                   else base)
        if folder is not None and not Path(folder).is_dir():
            raise AutocompError(f"the images of {FILES[subset]} are not here: give --images "
                                "DIR (the authors' images/ folder for VG-Relation and "
                                "VG-Attribution, the COCO or Flickr30k image root for the "
                                "Order sets)", file=folder)
        roots[subset] = ImageRoot(folder, skip_missing)
    return load_aro(source, roots)

"""VALSE (Parcalabescu et al. 2022): data/<instrument>.json (existence, plurals,
counting-*, relation, action-replacement, actant-swap, coreference-*, foil-it), each an
object keyed by foil id of {dataset, image_file, caption, foil, mturk: {caption, foil,
other}, linguistic_phenomena, classes, classes_foil, ...}.

One benchmark per file, `valse/<file stem>`, the authors' valid set only: a foil is valid
when at least two of three annotators chose the caption, not the foil (mturk.caption >= 2);
the others are left out and counted. Scored as the authors' pairwise accuracy (acc_r):
right when the caption scores strictly above the foil. A caption given as a list (some
releases) is its first entry. Images are looked up under --images as <image_file>, else
<dataset>/<image_file>, else <file stem>/<image_file>.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from autocomp.core.errors import AutocompError
from autocomp.core.families import contract_example
from autocomp.formats.images import ImageRoot, image_root
from autocomp.formats.suite import LoadedBenchmark, Suite, normalise_space, spaced

FIELDS = ("image_file", "caption", "foil", "mturk")
VALID = 2  # annotators (of 3) choosing the caption


def _is_valse(path: Path) -> bool:
    with open(path, encoding="utf-8", errors="replace") as fh:
        head = fh.read(8192)
    return head.lstrip().startswith("{") and '"foil"' in head and '"mturk"' in head


def valse_files(source: Path) -> list[Path]:
    if source.is_file():
        return [source] if _is_valse(source) else []
    folder = source / "data" if (source / "data").is_dir() else source
    return [p for p in sorted(folder.glob("*.json")) if _is_valse(p)]


def _read(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise AutocompError(f"not valid JSON: {exc}", file=path) from None
    if not isinstance(data, dict):
        raise AutocompError(f"expected an object keyed by foil id, got {type(data).__name__}",
                            file=path)
    return data


def _text(value, path: Path, key: str, field: str) -> str:
    if isinstance(value, list) and value:
        value = value[0]
    if not isinstance(value, str) or not value.strip():
        raise AutocompError(f"expected a non-empty caption, got {value!r:.80}", file=path,
                            entry=key, field=field)
    return normalise_space(value)


def load_valse(source: Path, root: ImageRoot) -> Suite:
    files = valse_files(source)
    if not files:
        raise AutocompError("no VALSE file here (JSON objects of {image_file, caption, foil, "
                            "mturk}, in the folder or its data/)", file=source)
    benches, sizes, left, flagged = [], {}, Counter(), Counter()
    total = 0
    for path in files:
        name = f"valse/{path.stem}"
        items = []
        for key, entry in _read(path).items():
            if not isinstance(entry, dict) or any(f not in entry for f in FIELDS):
                raise AutocompError(f"expected {', '.join(FIELDS)}", file=path, entry=key)
            votes = (entry["mturk"] or {}).get("caption") if isinstance(entry["mturk"],
                                                                        dict) else None
            if not isinstance(votes, int | float):
                raise AutocompError(f"expected a vote count, got {votes!r}", file=path,
                                    entry=key, field="mturk.caption")
            if votes < VALID:
                left[f"{name}: not valid (mturk.caption < {VALID})"] += 1
                continue
            caption = _text(entry["caption"], path, key, "caption")
            foil = _text(entry["foil"], path, key, "foil")
            total += 1
            image_file = str(entry["image_file"])
            names = [image_file, f"{entry.get('dataset', '')}/{image_file}",
                     f"{path.stem}/{image_file}"]
            image = root.resolve_any(names, f"{path.stem}-{key}", path)
            if image is None:
                continue
            item = {"id": f"{path.stem}-{key}", "task": "valse", "n": 0, "image": image,
                    "positive": caption,
                    "negatives": [{"caption": foil, "category": entry.get(
                        "linguistic_phenomena") or path.stem, "same_meaning": False}]}
            if spaced(*(v[0] if isinstance(v, list) else v for v in (entry["caption"],
                                                                     entry["foil"]))):
                item["raw_spaces"] = True
            if caption.lower() == foil.lower():
                item["flags"] = ["positive among negatives"]
                flagged[f"{name}: positive among negatives"] += 1
            items.append(item)
        sizes[name] = len(items)
        benches.append(LoadedBenchmark(name, "valse", 0, "-", path.stem,
                                       lambda items=items: iter(items)))
    root.check(total, source)
    info = {"items": sizes, "left_out": dict(sorted(left.items())),
            "flagged": dict(sorted(flagged.items())), "missing_images": len(root.missing)}
    return Suite("valse", source, root.root, benches, {}, info)


@contract_example("valse")
def open_valse(source, images, columns, skip_missing: bool, text_only=False) -> Suite:
    return load_valse(Path(source), image_root(images, "valse", "source datasets'",
                                               skip_missing, text_only))

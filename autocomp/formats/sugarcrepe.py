"""SugarCrepe (Hsieh et al. 2023): seven JSON files, each an object keyed by string indices
("0", "1", ...; keys may have gaps) of {filename, caption, negative_caption}, over COCO
val2017 images (file names, found under --images).

One benchmark per file, `sugarcrepe/<subset>`, one negative per item. Scored as the
authors' script does: correct when the positive scores strictly above the negative (a tie
is wrong), plus the tie-aware accuracy; `autocomp report` adds the micro-average over the
subsets. Positives in the released files carry leading/trailing/double whitespace and
newlines that negatives do not: every caption is whitespace-normalised before scoring
(else a text encoder sees a difference that is not in the words), and the count of changed
captions is kept in the suite's info and the result JSON.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from autocomp.core.errors import AutocompError
from autocomp.core.families import contract_example
from autocomp.formats.images import ImageRoot, image_root
from autocomp.formats.suite import LoadedBenchmark, Suite, normalise_space

SUBSETS = ("add_att", "add_obj", "replace_att", "replace_obj", "replace_rel", "swap_att",
           "swap_obj")
FIELDS = ("filename", "caption", "negative_caption")


class _Repeated(ValueError):
    pass


def _unique(pairs: list) -> dict:
    """A JSON object whose keys are all different (json keeps the last of a repeated key
    and drops the rest without a word)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set = set()
        key = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise _Repeated(f"key {key[:40]!r} appears more than once in one object")
    return out


def _read(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=_unique)
    except _Repeated as exc:
        raise AutocompError(str(exc), file=path) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise AutocompError(f"not valid JSON: {exc}", file=path) from None
    except RecursionError:
        raise AutocompError("not a SugarCrepe file: its JSON is nested too deeply",
                            file=path) from None
    if not isinstance(data, dict):
        raise AutocompError("expected an object keyed by \"0\", \"1\", ... , got "
                            f"{type(data).__name__}", file=path)
    return data


def _key(k: str, path: Path) -> int:
    if not re.fullmatch(r"[0-9]{1,12}", k):  # ASCII digits: "²".isdigit() is True
        raise AutocompError("expected string indices (\"0\", \"1\", ...), got key "
                            f"{k[:40]!r}{' (cut)' if len(k) > 40 else ''}", file=path)
    return int(k)


def data_folder(source: Path) -> Path | None:
    """Where SugarCrepe's JSON files are: the folder itself, or its data/ (the authors'
    repository: data/ beside main_eval.py and README.md)."""
    for folder in (source, source / "data"):
        if any((folder / f"{s}.json").is_file() for s in SUBSETS):
            return folder
    return None


def load_sugarcrepe(source: Path, root: ImageRoot) -> Suite:
    folder = data_folder(source) or source
    benches, info = [], {"items": {}, "normalised": {}, "gaps": {}, "missing_images": 0}
    total = 0
    for subset in SUBSETS:
        path = folder / f"{subset}.json"
        if not path.is_file():
            continue
        data = _read(path)
        rows, changed = [], 0
        keys = sorted(data, key=lambda k: _key(k, path))
        for k in keys:
            entry = data[k]
            if not isinstance(entry, dict):
                raise AutocompError(f"expected an object, got {type(entry).__name__}",
                                    file=path, entry=k)
            for f in FIELDS:
                if not isinstance(entry.get(f), str) or not entry[f].strip():
                    raise AutocompError(f"expected a non-empty string, got {entry.get(f)!r}",
                                        file=path, entry=k, field=f)
            total += 1
            item_id = f"{subset}-{k}"
            image = root.resolve(entry["filename"].strip(), item_id, path)
            if image is None:
                continue
            pos, neg = normalise_space(entry["caption"]), normalise_space(
                entry["negative_caption"])
            item = {"id": item_id, "task": "sugarcrepe", "n": 0, "image": image,
                    "positive": pos, "negatives": [{"caption": neg, "category": subset,
                                                    "same_meaning": False}]}
            if pos != entry["caption"] or neg != entry["negative_caption"]:
                changed += 1
                item["raw"] = {"positive": entry["caption"],
                               "negative": entry["negative_caption"]}
            rows.append(item)
        last = _key(keys[-1], path) if keys else -1
        info["items"][subset] = len(rows)
        info["normalised"][subset] = changed
        info["gaps"][subset] = last + 1 - len(keys)
        benches.append(LoadedBenchmark(f"sugarcrepe/{subset}", "sugarcrepe", 0, "coco", subset,
                                       lambda rows=rows: iter(rows)))
    if not benches:
        raise AutocompError(f"no SugarCrepe file here (expected {', '.join(SUBSETS)} .json)",
                            file=folder)
    root.check(total, folder)
    info["missing_images"] = len(root.missing)
    return Suite("sugarcrepe", source, root.root, benches, {}, info)


@contract_example("sugarcrepe_source")
def open_sugarcrepe(source, images, columns, skip_missing: bool, text_only=False) -> Suite:
    return load_sugarcrepe(source, image_root(images, "sugarcrepe", "COCO val2017",
                                              skip_missing, text_only))

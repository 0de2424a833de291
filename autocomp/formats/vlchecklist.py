"""VL-CheckList (Zhao et al. 2022): data/{Attribute,Object,Relation}/.../<name>.json, each a
JSON list of [image path, {"POS": [captions], "NEG": [captions]}], the path relative to the
image folder of its source dataset (vg/ for Visual Genome and VAW, swig/, hake/).

One benchmark per file, `vl-checklist/<path under data, no .json>`. Where the checkout's
corpus/ configs are there (corpus/v1/<TYPE>/<corpus>.yaml, each naming its data file as
ANNO_PATH), each file's TYPE (Attribute/color, Object/Location/center, ...) and corpus
(vaw, vg, swig_agent, ...) go into the suite's info, and the report groups the results
per TYPE as the authors do. Scored as the
authors' image-text contrastive task (itc) does: the first POS caption against the first
NEG caption, right when the positive scores strictly higher. Further POS / NEG captions
are not scored (counted in the suite's info); rows whose POS equals its NEG up to case
cannot be solved: flagged and counted. Images are looked up under --images as
<dataset>/<path>, else <path>.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from autocomp.core.errors import AutocompError
from autocomp.core.families import contract_example
from autocomp.formats.images import ImageRoot, image_root
from autocomp.formats.suite import (
    LoadedBenchmark,
    Suite,
    json_rows,
    normalise_space,
    own_files,
    spaced,
)

TOP = ("Attribute", "Object", "Relation")
DATASETS = (("hake", "hake"), ("swig", "swig"), ("vaw", "vg"), ("vg", "vg"))


def data_folder(source: Path) -> Path | None:
    """The folder holding Attribute/, Object/, Relation/ (the checkout's data/, or it)."""
    for folder in (source / "data", source):
        if folder.is_dir() and any((folder / t).is_dir() for t in TOP) and any(
                _is_vlc(p) for t in TOP for p in sorted((folder / t).rglob("*.json"))[:1]):
            return folder
    return None


def _is_vlc(path: Path) -> bool:
    """Whether a file opens as VL-CheckList's layout: [["path", {"POS": ...."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        head = fh.read(4096)
    return head.lstrip().startswith("[[") and '"POS"' in head


def dataset_of(relative: Path) -> str | None:
    """The image folder of a file, from its path (data/Attribute/vaw/size.json: vg)."""
    for part in relative.parts:
        for prefix, folder in DATASETS:
            if part.lower().startswith(prefix):
                return folder
    return None


def corpus_types(folder: Path) -> dict[str, dict]:
    """Data file (relative to `folder`, the data/ folder) -> {"type", "corpus"}, from the
    checkout's corpus/ configs beside it (corpus/v1/ first, as the authors' loader reads
    them); {} when there are none. Only regular files inside corpus/ are read."""
    from autocomp.core.yamlio import read_yaml

    out: dict[str, dict] = {}
    for base in (folder.parent / "corpus" / "v1", folder.parent / "corpus"):
        if not base.is_dir() or base.is_symlink():
            continue
        for path in sorted(base.rglob("*.yaml")):
            relative = path.relative_to(base)
            if relative.parts[0] == "v1" or path.is_symlink() or not path.is_file():
                continue
            config = read_yaml(path)
            anno = config.get("ANNO_PATH") if isinstance(config, dict) else None
            if not isinstance(anno, str) or "data/" not in anno:
                raise AutocompError(f"expected ANNO_PATH naming a file under data/, got "
                                    f"{anno!r:.80}", file=path, field="ANNO_PATH")
            data_file = anno.replace("\\", "/").split("data/", 1)[1]
            out.setdefault(data_file, {"type": relative.parent.as_posix(),
                                       "corpus": relative.stem})
    return out


def _texts(value, path: Path, i: int, field: str) -> list[str]:
    if not isinstance(value, list) or not value or not all(
            isinstance(v, str) and v.strip() for v in value):
        raise AutocompError(f"expected a non-empty list of captions, got {value!r:.80}",
                            file=path, entry=f"row {i}", field=field)
    return [normalise_space(v) for v in value]


def load_vlchecklist(source: Path, root: ImageRoot) -> Suite:
    folder = data_folder(source)
    if folder is None:
        raise AutocompError("no VL-CheckList data here (expected Attribute/, Object/, "
                            "Relation/ folders of JSON files, or data/ holding them)",
                            file=source)
    benches, sizes, flagged, extra = [], {}, Counter(), Counter()
    total = 0
    known, types = corpus_types(folder), {}
    mine = [p for t in TOP if (folder / t).is_dir() for p in own_files(folder / t, "*.json")]
    for path in sorted(p for p in mine if p.resolve().is_relative_to(folder.resolve())):
        relative = path.relative_to(folder)
        name = f"vl-checklist/{relative.with_suffix('').as_posix()}"
        if relative.as_posix() in known:
            types[name] = known[relative.as_posix()]
        sub = dataset_of(relative)
        items = []
        for i, row in enumerate(json_rows(path)):
            if not (isinstance(row, list) and len(row) == 2 and isinstance(row[0], str)
                    and isinstance(row[1], dict)):
                raise AutocompError(f"expected [image path, {{POS, NEG}}], got {row!r:.80}",
                                    file=path, entry=f"row {i}")
            pos = _texts(row[1].get("POS"), path, i, "POS")
            neg = _texts(row[1].get("NEG"), path, i, "NEG")
            total += 1
            item_id = f"{relative.with_suffix('').as_posix()}-{i}"
            names = [f"{sub}/{row[0]}", row[0]] if sub else [row[0]]
            image = root.resolve_any(names, item_id, path)
            if image is None:
                continue
            extra[name] += len(pos) + len(neg) - 2
            item = {"id": item_id, "task": "vl-checklist", "n": 0, "image": image,
                    "positive": pos[0], "negatives": [{"caption": neg[0],
                                                       "category": relative.parts[0],
                                                       "same_meaning": False}]}
            if spaced(*row[1]["POS"], *row[1]["NEG"]):
                item["raw_spaces"] = True
            if pos[0].lower() == neg[0].lower():
                item["flags"] = ["positive among negatives"]
                flagged[f"{name}: positive among negatives"] += 1
            items.append(item)
        sizes[name] = len(items)
        benches.append(LoadedBenchmark(name, "vl-checklist", 0, sub or "-", relative.parts[0],
                                       lambda items=items: iter(items)))
    root.check(total, folder)
    info = {"items": sizes, "flagged": dict(sorted(flagged.items())),
            "unscored_extra_captions": {k: v for k, v in sorted(extra.items()) if v},
            "missing_images": len(root.missing)}
    if types:  # the authors' grouping (report: one row per TYPE, a column per corpus)
        info["types"] = dict(sorted(types.items()))
    return Suite("vl-checklist", source, root.root, benches, {}, info)


@contract_example("vlchecklist")
def open_vlchecklist(source, images, columns, skip_missing: bool, text_only=False) -> Suite:
    return load_vlchecklist(Path(source), image_root(images, "vl-checklist",
                                                     "vg/, swig/ and hake/", skip_missing,
                                                     text_only))

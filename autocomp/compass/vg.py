"""Visual Genome scene graphs, streamed (scene_graphs.json is hundreds of MB; loaded whole it
needs more than 6 GB of RAM).

`scene_graphs.json`: a list of {image_id, objects: [{object_id, names, attributes?}],
relationships: [{subject_id, object_id, predicate}]}. `attributes.json` (optional): per
image, {image_id, attributes: [{object_id, attributes}]}, merged by object id.
`image_data.json` (optional): {image_id or id, url, width, height}.
`attribute_synsets.json` (optional, VG 1.4): {attribute: synset}. Names, attributes and
predicates are lower-cased and stripped. An object keeps all its names (the first is the
one captions use; every one counts as present in the image) and its synset; a relation
its synset. Exact duplicate relation triples are dropped and counted. Malformed entries
are skipped and counted by reason; a file that is not valid JSON stops with its name and
the byte where it broke.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from autocomp.core.errors import AutocompError
from autocomp.core.scene import Object, Relation, SceneGraph


@dataclass
class VGImage:
    image_id: int
    graph: SceneGraph
    object_ids: list[int]
    meta: dict = field(default_factory=dict)
    aliases: list[tuple[str, ...]] = field(default_factory=list)  # every name, per object
    object_synsets: list[str | None] = field(default_factory=list)
    relation_synsets: list[str | None] = field(default_factory=list)

    def present(self) -> dict[str, set]:
        """What occurs anywhere in the image, by primitive type: every name of every
        object (alternates too), every attribute, every predicate."""
        out = {"O": {n for names in self.aliases for n in names},
               "A": {a for o in self.graph.objects for a in o.attributes},
               "R": {r.predicate for r in self.graph.relations}}
        out["O"] |= set(self.graph.names)
        return out


def _synset(value) -> str | None:
    """The first synset of a VG `synsets` list ("man.n.01"), or None."""
    if isinstance(value, list) and value and isinstance(value[0], str) and value[0].strip():
        return value[0].strip().lower()
    return None


def load_attribute_synsets(directory: Path) -> dict[str, str]:
    """attribute_synsets.json ({attribute: synset}), normalised; {} when absent."""
    import json

    path = Path(directory) / "attribute_synsets.json"
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise AutocompError(f"not valid JSON: {exc}", file=path) from None
    if not isinstance(data, dict):
        raise AutocompError("expected an object {attribute: synset}", file=path)
    return {_norm(k): v.strip().lower() for k, v in data.items()
            if _norm(k) and isinstance(v, str) and v.strip()}


def _norm(text) -> str:
    return " ".join(str(text).lower().split()) if isinstance(text, str) else ""


def _items(path: Path, prefix: str = "item", fh=None) -> Iterator[dict]:
    """Stream the elements of a top-level JSON list (from `fh` when given, an open binary
    file of `path`); a broken file is a one-line error."""
    import ijson

    if fh is None:
        with open(path, "rb") as own:
            yield from _items(path, prefix, own)
        return
    head = fh.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    if head != b"[":
        raise AutocompError("expected a JSON list of images at the top level, found "
                            f"{head.decode(errors='replace') or 'nothing'!r}", file=path)
    fh.seek(0)
    try:
        yield from ijson.items(fh, prefix, use_float=True, buf_size=16 << 10)
    except ijson.JSONError as exc:
        first = " ".join(str(exc).split("\n")[0].split())
        raise AutocompError(f"not valid JSON ({first})", file=path) from None


def _list(value, what: str, skipped: Counter) -> list:
    """A JSON list field; a string stands for a one-item list, anything else for none
    (both counted), never a list of letters or a TypeError."""
    if value is None or isinstance(value, list):
        return value or []
    if isinstance(value, str):
        skipped[f"{what}: a string where a list belongs, read as one item"] += 1
        return [value]
    skipped[f"{what}: not a list ({type(value).__name__}), left out"] += 1
    return []


def _image_id(entry: dict):
    value = entry.get("image_id", entry.get("id"))
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def load_vg(directory: Path, image_ids=None, limit: int | None = None,
            skipped: Counter | None = None) -> list[VGImage]:
    """The selected images' scene graphs (by id list, in its order, or the first `limit`),
    attributes merged. `skipped` counts what was left out and why."""
    images = list(iter_vg(directory, image_ids, limit, skipped))
    if image_ids:
        by_id = {img.image_id: img for img in images}
        images = [by_id[i] for i in dict.fromkeys(image_ids) if i in by_id]
    return images


def iter_vg(directory: Path, image_ids=None, limit: int | None = None,
            skipped: Counter | None = None, progress=None) -> Iterator[VGImage]:
    """The selected images one at a time, in the file's order: scene_graphs.json is
    streamed and each entry becomes a VGImage at once, so memory stays flat in the file's
    size (the side files are indexed in a temporary SQLite file). `progress(bytes read,
    file size)` is called as the file is read."""
    directory = Path(directory)
    path = directory / "scene_graphs.json"
    if not path.is_file():
        raise AutocompError("no scene_graphs.json here (a Visual Genome folder holds "
                            "scene_graphs.json, optionally attributes.json and "
                            "image_data.json)", file=directory)
    skipped = skipped if skipped is not None else Counter()
    wanted = set(image_ids) if image_ids else None
    if wanted is None and limit is not None:
        wanted = set()
        for entry, _ in _entries(path, skipped):
            wanted.add(_image_id(entry))
            if len(wanted) >= limit:
                break
    size = path.stat().st_size
    with _SideFiles(directory, wanted, skipped) as side:
        kept = 0
        for entry, at in _entries(path, skipped):
            if progress is not None:
                progress(at, size)
            iid = _image_id(entry)
            if wanted is not None and iid not in wanted:
                continue
            image = _image(entry, side.attributes(iid), side.meta(iid), skipped)
            del entry
            if image is not None:
                yield image
            kept += 1
            if limit is not None and not image_ids and kept >= limit:
                break


def _entries(path: Path, skipped: Counter) -> Iterator[tuple[dict, int]]:
    """(entry, bytes read so far) for each image object of scene_graphs.json."""
    with open(path, "rb") as fh:
        for entry in _items(path, fh=fh):
            if not isinstance(entry, dict) or _image_id(entry) is None:
                skipped["image: not an object with an integer image_id"] += 1
                continue
            yield entry, fh.tell()


class _SideFiles:
    """attributes.json and image_data.json, streamed once into a temporary SQLite file
    indexed by image id (only the wanted images, when known)."""

    def __init__(self, directory: Path, wanted: set | None, skipped: Counter):
        self.directory, self.wanted, self.skipped = directory, wanted, skipped

    def __enter__(self) -> _SideFiles:
        import sqlite3
        import tempfile

        self._tmp = tempfile.TemporaryDirectory(prefix="autocomp-vg-")
        self.db = sqlite3.connect(Path(self._tmp.name) / "side.sqlite")
        self.db.execute("CREATE TABLE attrs (image INTEGER, object INTEGER, value TEXT)")
        self.db.execute("CREATE TABLE meta (image INTEGER PRIMARY KEY, data TEXT)")
        self._load_attributes(self.directory / "attributes.json")
        self._load_meta(self.directory / "image_data.json")
        self.db.execute("CREATE INDEX attrs_image ON attrs (image)")
        self.db.commit()
        return self

    def __exit__(self, *exc) -> None:
        self.db.close()
        self._tmp.cleanup()

    def _want(self, entry) -> int | None:
        iid = _image_id(entry) if isinstance(entry, dict) else None
        return iid if iid is not None and (self.wanted is None or iid in self.wanted) else None

    def _load_attributes(self, path: Path) -> None:
        if not path.is_file():
            return
        rows = []
        for entry in _items(path):
            iid = self._want(entry)
            if iid is None:
                continue
            for a in _list(entry.get("attributes"), "attributes.json entry", self.skipped):
                if isinstance(a, dict) and isinstance(a.get("object_id"), int):
                    rows += [(iid, a["object_id"], _norm(x)) for x in _list(
                        a.get("attributes"), "attribute list", self.skipped) if _norm(x)]
            if len(rows) > 50_000:
                self.db.executemany("INSERT INTO attrs VALUES (?, ?, ?)", rows)
                rows = []
        self.db.executemany("INSERT INTO attrs VALUES (?, ?, ?)", rows)

    def _load_meta(self, path: Path) -> None:
        import json

        if not path.is_file():
            return
        for entry in _items(path):
            iid = self._want(entry)
            if iid is not None:
                data = {k: entry.get(k) for k in ("url", "width", "height", "coco_id",
                                                  "flickr_id") if k in entry}
                self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                                (iid, json.dumps(data, default=str)))

    def attributes(self, iid: int) -> dict[int, list[str]]:
        out: dict[int, list[str]] = {}
        for obj, value in self.db.execute(
                "SELECT object, value FROM attrs WHERE image = ? ORDER BY rowid", (iid,)):
            out.setdefault(obj, []).append(value)
        return out

    def meta(self, iid: int) -> dict:
        import json

        row = self.db.execute("SELECT data FROM meta WHERE image = ?", (iid,)).fetchone()
        return json.loads(row[0]) if row else {}


def _image(entry: dict, extra: dict, meta: dict, skipped: Counter) -> VGImage | None:
    iid = _image_id(entry)
    objects, ids, index, aliases, osyn = [], [], {}, [], []
    for o in _list(entry.get("objects"), "image objects", skipped):
        if not isinstance(o, dict) or not isinstance(o.get("object_id"), int):
            skipped["object: no integer object_id"] += 1
            continue
        raw_names = o.get("names") if "names" in o else ([o["name"]] if "name" in o else [])
        names = [_norm(n) for n in _list(raw_names, "object names", skipped)]
        names = [n for n in names if n]
        if not names:
            skipped["object: no name"] += 1
            continue
        if o["object_id"] in index:
            skipped["object: duplicate object_id"] += 1
            continue
        attrs = [_norm(a) for a in _list(o.get("attributes"), "object attributes", skipped)
                 if _norm(a)]
        attrs += extra.get(o["object_id"], [])
        attrs = [a for a in dict.fromkeys(attrs) if a != names[0]]
        index[o["object_id"]] = len(objects)
        objects.append(Object(names[0], tuple(attrs)))
        ids.append(o["object_id"])
        aliases.append(tuple(dict.fromkeys(names)))
        osyn.append(_synset(o.get("synsets")))
    relations, rsyn, seen = [], [], set()
    for r in _list(entry.get("relationships"), "image relationships", skipped):
        if not isinstance(r, dict):
            skipped["relation: not an object"] += 1
            continue
        s, o, p = r.get("subject_id"), r.get("object_id"), _norm(r.get("predicate"))
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in (s, o)):
            skipped["relation: subject_id or object_id not an integer"] += 1
            continue
        if s not in index or o not in index:
            skipped["relation: subject or object id not among the objects"] += 1
            continue
        if not p:
            skipped["relation: no predicate"] += 1
            continue
        if index[s] == index[o]:
            skipped["relation: an object related to itself"] += 1
            continue
        rel = Relation(index[s], p, index[o])
        if rel in seen:
            skipped["relation: exact duplicate triple"] += 1
            continue
        seen.add(rel)
        relations.append(rel)
        rsyn.append(_synset(r.get("synsets")))
    if not objects:
        skipped["image: no usable object"] += 1
        return None
    return VGImage(iid, SceneGraph(tuple(objects), tuple(relations)), ids, meta, aliases,
                   osyn, rsyn)

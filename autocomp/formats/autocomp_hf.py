"""Released Auto-Comp data and autocomp's own exports, as Hugging Face datasets.

The released sets are `AutoComp/AutoComp-{Minimal,Contextual,Paired}-N{2,3}-{C,P}` (split
train): an image column `<src>_image` or `image`, a caption column `<src>_caption` or
`caption` (src: handmade = the minimal template caption, llm = the contextual one),
`objects`, and `colors` (C) or `relations` (P). autocomp's exports (`autocomp export
--format hf`) have the same columns plus `task` (the autocomp task, e.g. shape_color) and
`attributes` in place of `colors`.

Negatives are not stored: they are built from the concept with autocomp's own swap and
confusion (words placed by slot, so substitutions never chain). A caption that is exactly
the template rendering gets template negatives; any other caption is matched by the
semantic-preservation check and gets its negatives by substitution inside the matched
spans (a caption the check cannot match is left out and counted). Images are written once
to a cache folder (content-addressed), where the harness reads them.

Source: a folder written by `datasets.save_to_disk`, a local snapshot of the dataset repo,
or a hub id (`AutoComp/AutoComp-Minimal-N2-C`) when the hub is reachable; with
HF_HUB_OFFLINE=1 a missing dataset is one line saying what to download.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from itertools import product
from pathlib import Path

from autocomp.core.backend import require
from autocomp.core.errors import AutocompError
from autocomp.core.families import contract_example
from autocomp.formats.images import cache_folder, save_image
from autocomp.formats.suite import LoadedBenchmark, Suite

NAME = re.compile(r"AutoComp-(Minimal|Contextual|Paired)-N(\d+)-([CP])", re.I)
SOURCES = {"handmade": "minimal", "llm": "contextual"}


def open_dataset(source: str | Path):
    """A `datasets.Dataset` (split train) from a save_to_disk folder, a snapshot folder or a
    hub id."""
    datasets = require("datasets", "formats", "Hugging Face datasets")
    text = str(source)
    if text.startswith("hf:"):
        text = text[3:]
    path = Path(text)
    if path.is_file() and path.suffix.lower() == ".parquet":
        ds = datasets.load_dataset("parquet", data_files=str(path), split="train")
    elif path.is_dir():
        try:
            ds = datasets.load_from_disk(str(path))
        except FileNotFoundError:
            ds = datasets.load_dataset(str(path), split="train")
    else:
        try:
            ds = datasets.load_dataset(text, split="train")
        except Exception as exc:  # offline, unknown repo, no network: one line
            offline = os.environ.get("HF_HUB_OFFLINE") == "1"
            why = "HF_HUB_OFFLINE=1 and it is not cached" if offline else type(exc).__name__
            raise AutocompError(f"dataset '{text}' could not be loaded ({why}): download it "
                                f"where there is network (`hf download --repo-type dataset "
                                f"{text} --local-dir DIR`) and pass DIR") from None
    if hasattr(ds, "keys"):  # a DatasetDict
        ds = ds["train"] if "train" in ds else ds[next(iter(ds.keys()))]
    return ds


def tracks_of(columns, variant: str | None) -> list[tuple[str, str, str]]:
    """(track, image column, caption column) pairs the dataset has."""
    out = [(track, f"{src}_image", f"{src}_caption") for src, track in SOURCES.items()
           if f"{src}_image" in columns and f"{src}_caption" in columns]
    if not out and "image" in columns and "caption" in columns:
        out = [("contextual" if (variant or "").lower() == "contextual" else "minimal",
                "image", "caption")]
    return out


def load_autocomp_hf(source, images: Path | None = None,
                     kinds=("swap", "confusion")) -> Suite:
    from datasets import Image

    ds = open_dataset(source)
    label = Path(str(source)).name or str(source)
    m = NAME.search(str(source))
    tracks, values_col = _layout(set(ds.column_names), m.group(1) if m else None, source)
    for _, img, _ in tracks:
        ds = ds.cast_column(img, Image(decode=False))
    folder = Path(images) if images else cache_folder(label)
    folder.mkdir(parents=True, exist_ok=True)
    rows = _Rows(source, tracks, values_col, folder, images)
    concepts = [c for i, row in enumerate(ds) if (c := rows.concept(i, row)) is not None]
    if not concepts:
        why = "; ".join(f"{reason} ({count})" for reason, count in
                        rows.skipped.most_common(3))
        raise AutocompError(f"none of the {len(ds)} rows could be used: {why or 'no rows'}",
                            file=source)
    benches = rows.benchmarks(concepts, kinds, label)
    info = {"rows": len(ds), "concepts": len(concepts), "skipped": dict(rows.skipped),
            "tracks": [t for t, _, _ in tracks]}
    tasks = {k: v for k, v in rows.tasks.items() if not isinstance(v, str)}
    return Suite("autocomp-hf", Path(str(source)), folder.resolve(), benches, tasks, info)


def _layout(cols: set, variant: str | None, source) -> tuple[list, str]:
    """(tracks, the values column) of an Auto-Comp dataset's columns, or one line saying
    what it lacks."""
    tracks = tracks_of(cols, variant)
    values_col = next((c for c in ("colors", "attributes", "relations") if c in cols), None)
    if not tracks or "objects" not in cols or values_col is None:
        raise AutocompError("not an Auto-Comp dataset: expected objects, colors or "
                            "relations, and image/caption columns (image, caption or "
                            f"handmade_/llm_ pairs); it has {', '.join(sorted(cols))}",
                            file=source)
    return tracks, values_col


class _Rows:
    """Reads a dataset's rows into concepts (concept id, task name, graph, {track: (image
    file, (caption, check))}), counting each row or track left out by its reason."""

    def __init__(self, source, tracks, values_col: str, folder: Path, images):
        from autocomp.concepts.files import builtin_tasks

        self.tracks, self.values_col, self.folder, self.images = tracks, values_col, folder, images
        self.relation = values_col == "relations"
        self.default_task = "position" if self.relation else "color"
        self.skipped: Counter = Counter()
        self.tasks: dict = {}  # name -> Task, or why it cannot be read
        self.known = set(builtin_tasks("tasks")) | set(builtin_tasks("scenes"))
        self.home = _home(source)  # an export's own tasks are bundled in its tasks/ folder

    def task(self, name) -> str | None:
        """The row's task name when it is readable, else None (counted)."""
        from autocomp.concepts.bundle import bundled_task
        from autocomp.concepts.load import load_task

        if not isinstance(name, str):
            self.skipped["task: not a built-in task name"] += 1
            return None
        if name not in self.tasks:  # a name, never a file path
            self.tasks[name] = (load_task(name) if name in self.known
                                else bundled_task(self.home, name) if self.home
                                else "task: not a built-in task name")
        if isinstance(self.tasks[name], str):
            self.skipped[self.tasks[name]] += 1
            return None
        return name

    def concept(self, i: int, row: dict):
        task_name = self.task(row.get("task") or self.default_task)
        if task_name is None:
            return None
        # an autocomp export carries each concept's graph; released data its columns
        got = (_graph_column(row) if "task" in row
               else _concept(row, self.values_col, self.relation))
        if isinstance(got, str):
            self.skipped[got] += 1
            return None
        by_track = {}
        for track, img, cap in self.tracks:
            found = self._track(row, img, cap, got, self.tasks[task_name])
            if isinstance(found, str):
                self.skipped[f"{track}: {found}"] += 1
            else:
                by_track[track] = found
        return (row.get("concept") or str(i), task_name, got, by_track) if by_track else None

    def _track(self, row, img: str, cap: str, graph, task):
        """(image file, (caption, check)) of one track of a row, or why not."""
        if row.get(img) is None or not isinstance(row.get(cap), str):
            return "no image or caption"
        how = _renderer(graph, " ".join(row[cap].split()), task)
        if how is None:
            return "caption does not name every binding"
        try:
            return save_image(row[img], self.folder, self.images), how
        except ValueError as exc:
            return str(exc)

    def benchmarks(self, concepts: list, kinds, label: str) -> list[LoadedBenchmark]:
        """A benchmark per task x N x track x kind the build would make (bench/build.py's
        rules), concepts over the negative limit left out and counted."""
        from autocomp.bench.build import item_kinds

        groups = sorted({(c[1], c[2].n_objects, track) for c in concepts for track in c[3]})
        benches = []
        for (task_name, n, track), kind in product(groups, kinds):
            task = self.tasks[task_name]
            if kind not in task.negative_kinds(n):
                continue
            members = [c for c in concepts if c[1] == task_name and c[2].n_objects == n
                       and track in c[3]]
            over = [c for c in members if item_kinds(task, c[2], [kind])[1]]
            if over:
                self.skipped[f"{track} {kind}: above the negative limit"] += len(over)
                members = [c for c in members if c not in over]
            benches.append(LoadedBenchmark(
                f"{label}/{task_name}-n{n}/{track}-{kind}", task_name, n, track, kind,
                lambda members=members, task=task, track=track, kind=kind:
                _items(members, task, track, kind, label)))
        return benches


def _home(source) -> Path | None:
    """The local folder of a dataset (a save_to_disk folder, or a parquet file's), where an
    export keeps the task files of its own tasks; None for a hub id."""
    if str(source).startswith("hf:"):
        return None
    path = Path(str(source))
    return path if path.is_dir() else path.parent if path.is_file() else None


def _concept(row: dict, values_col: str, relation: bool):
    """The concept's scene graph, or the reason the row is left out."""
    from autocomp.core.scene import attribute_graph, chain_graph

    objects, values = row.get("objects"), row.get(values_col)
    if not isinstance(objects, list) or not all(isinstance(o, str) and o for o in objects):
        return "objects: not a list of names"
    if not isinstance(values, list) or not all(isinstance(v, str) and v for v in values):
        return f"{values_col}: not a list of strings"
    objects = [" ".join(o.lower().split()) for o in objects]
    values = [" ".join(v.lower().split()) for v in values]
    if relation:
        if len(values) != len(objects) - 1:
            return "relations: not one fewer than the objects"
        return chain_graph(objects, values)
    if len(values) != len(objects):
        return f"{values_col}: not one per object"
    return attribute_graph(objects, values)


def _graph_column(row):
    """The concept's graph from an autocomp export's `graph` column, or why not."""
    from autocomp.core.scene import SceneGraph

    try:
        return SceneGraph.from_json(row["graph"])
    except (KeyError, TypeError, ValueError):
        return "graph: an autocomp export's row needs its graph (JSON)"


def _renderer(graph, caption: str, task):
    """(caption, None) when the caption is the template rendering, (caption, check) when
    the semantic-preservation check matches every binding, else None."""
    from autocomp.language.check import check_caption

    if caption == task.minimal_caption(graph):
        return caption, None
    check = check_caption(caption, graph, task.noun, task.object_forms)
    return (caption, check) if check.passed else None


def _items(members, task, track: str, kind: str, label: str):
    from autocomp.bench.store import renderer
    from autocomp.negatives.generate import make_negatives

    for i, _, graph, by_track in members:
        image, (caption, check) = by_track[track]
        negs = make_negatives(graph, task, kind, renderer(graph, task, caption, check))
        yield {"id": f"{label}-{i}-{track}-{kind}", "concept": i, "task": task.name,
               "n": graph.n_objects, "track": track, "kind": kind, "image": image,
               "graph": graph.to_dict(), "paired": len(by_track) > 1,
               "positive": negs.positive, "negatives": [x.to_dict() for x in negs.negatives]}


@contract_example("hf_release")
def open_autocomp_hf(source, images, columns, skip_missing: bool, text_only=False) -> Suite:
    return load_autocomp_hf(source, images)

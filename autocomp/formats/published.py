"""autocomp's own benchmark exports (`autocomp export RUN`, publish/): a folder with
autocomp_export.json, README.md and data/<config>/test-*.parquet, read back as it is, so
`autocomp eval DIR` scores exactly the items (and the negatives subset) that strangers and
their harnesses score. Images are written once to a cache folder (content-addressed),
where the harness reads them; built-in tasks are loaded by name (reference scorers rebuild
a negative's graph from its edit), other tasks are left out of `tasks` (dual encoders and
VLMs need none).
"""

from __future__ import annotations

import json
from pathlib import Path

from autocomp.core.errors import AutocompError
from autocomp.core.families import contract_example
from autocomp.core.fields import check_name
from autocomp.formats.images import cache_folder, save_image
from autocomp.formats.suite import LoadedBenchmark, Suite, parquet_rows

MANIFEST = "autocomp_export.json"


def is_published(source: Path) -> bool:
    return Path(source).is_dir() and (Path(source) / MANIFEST).is_file() \
        and (Path(source) / "data").is_dir()


def _manifest(source: Path) -> dict:
    path = Path(source) / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        configs = data["configs"]
        for name, c in configs.items():
            for key in ("task", "n", "track", "kind", "files"):
                if key not in c:
                    raise KeyError(f"configs.{name}.{key}")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise AutocompError(f"not an autocomp export manifest ({exc})", file=path) from None
    return data


def _rows(source: Path, files: list[str]):
    for rel in files:
        path = (Path(source) / rel).resolve()
        if not path.is_relative_to(Path(source).resolve()) or not path.is_file():
            raise AutocompError("a data file the manifest names is not in the export",
                                file=path)
        yield from parquet_rows(path)


def _single(row: dict, folder: Path) -> dict:
    return {"id": row["id"], "concept": row["concept"], "task": row["task"], "n": row["n"],
            "track": row["track"], "kind": row["kind"], "paired": row["paired"],
            "graph": json.loads(row["graph"]), "image": save_image(row["image"], folder),
            "positive": row["positive"],
            "negatives": [{"caption": c, "kind": row["kind"], "edit": json.loads(e),
                           "category": cat or None, "same_meaning": bool(same)}
                          for c, e, cat, same in zip(
                              row["negatives"], row["negative_edits"],
                              row["negative_categories"], row["negative_same_meaning"],
                              strict=True)]}


def _matrix(row: dict, folder: Path) -> dict:
    return {"id": row["id"], "concept": row["concept"], "partner": row["partner"],
            "task": row["task"], "n": row["n"], "track": row["track"], "kind": row["kind"],
            "paired": row["paired"],
            "images": [save_image(row["image_0"], folder), save_image(row["image_1"], folder)],
            "captions": [row["caption_0"], row["caption_1"]], "truth": [[1, 0], [0, 1]],
            "graphs": [json.loads(row["graph_0"]), json.loads(row["graph_1"])]}


def _items(source: Path, files: list[str], folder: Path, where: str):
    for i, row in enumerate(_rows(source, files)):
        try:
            yield _matrix(row, folder) if "image_0" in row else _single(row, folder)
        except (KeyError, TypeError, ValueError) as exc:
            raise AutocompError(f"row {i}: {type(exc).__name__}: {str(exc)[:120]}",
                                file=where) from None


def load_published(source, images=None) -> Suite:
    """An export folder as a Suite: one benchmark per config, named as the run named it."""
    from autocomp.concepts.files import builtin_tasks
    from autocomp.concepts.load import load_task

    source = Path(source)
    manifest = _manifest(source)
    folder = Path(images) if images else cache_folder(f"export-{source.resolve().name}")
    folder.mkdir(parents=True, exist_ok=True)
    known = set(builtin_tasks("tasks")) | set(builtin_tasks("scenes"))
    benches, tasks = [], {}
    for name, c in sorted(manifest["configs"].items()):
        if c["task"] in known and c["task"] not in tasks:
            tasks[c["task"]] = load_task(c["task"])
        label = c.get("generator")  # the same items on a compared generator's images
        if label is not None:
            check_name(label, "generator", file=source / MANIFEST,
                       field=f"configs.{name}.generator")
        bench = f"{c['task']}-n{c['n']}/{c['track']}-{c['kind']}" + (f"@{label}" if label
                                                                     else "")
        benches.append(LoadedBenchmark(
            bench, c["task"], c["n"], c["track"], c["kind"],
            lambda files=c["files"], where=source / "data" / name:
            _items(source, files, folder, str(where)), {}, label))
    info = {"export": {k: manifest.get(k) for k in ("run", "max_negatives",
                                                    "negatives_seed", "autocomp_version")}}
    return Suite("autocomp-export", source, folder.resolve(), benches, tasks, info)


@contract_example("exported_run")
def open_published(source, images, columns, skip_missing, text_only: bool = False) -> Suite:
    """The format registry's opener (formats/__init__.py)."""
    return load_published(source, images)

"""`autocomp export RUN --format hf|parquet|webdataset --out DIR`: a run's validated samples
in formats others load without autocomp.

One row per concept with at least one validated image, in the layout of the released
Auto-Comp data (the "Paired" sets): `handmade_image` / `handmade_caption` (minimal track),
`llm_image` / `llm_caption` (contextual track; None where that track did not validate),
`objects`, `attributes` (attribute tasks) and `relations` (relation tasks), plus `task`,
`n`, `concept` (the run's concept id) and `graph` (the scene graph as JSON). Negatives are
not stored: they are a pure function of the concept, and `autocomp eval DIR --format
autocomp-hf` rebuilds them exactly as the run's benchmarks have them.

  hf          `datasets.save_to_disk` folder (split train): datasets.load_from_disk(DIR)
  parquet     DIR/train.parquet with the datasets features in its schema:
              datasets.load_dataset("parquet", data_files="DIR/train.parquet")
  webdataset  DIR/shard-000000.tar, ...: one sample per validated image, key
              <concept>-<track>, files <key>.png, <key>.txt (its caption) and <key>.json
              (concept, task, n, objects, graph, track, caption); every sample has the
              same three files, so datasets.load_dataset("webdataset", data_files=...) and
              webdataset/open_clip loaders read it; 1,000 samples a shard

A task of the user's own (a YAML file, not a built-in name) is copied into DIR/tasks/ with
its vocabulary files, where `autocomp eval DIR` finds it.

The folder is written under a temp name beside DIR and renamed at the end: a killed or
failed export leaves no partial tar or parquet under DIR.
"""

from __future__ import annotations

import glob
import io
import itertools
import json
import tarfile
from pathlib import Path

from autocomp.core.errors import AutocompError
from autocomp.core.log import package_logger

log = package_logger(__name__)

FORMATS = ("hf", "parquet", "webdataset")
SHARD = 1000
# a webdataset sample's .json: fields of one type in every sample (datasets infers the
# types from the first few samples; `attributes` is empty on relation tasks, `relations` on
# attribute tasks, so they stay in `graph`)
SAMPLE_FIELDS = ("concept", "task", "n", "objects", "graph")


def export_rows(run):
    """The rows of a run (images as bytes), in concept order, one at a time."""
    from autocomp.core.records import TRACKS, read_jsonl
    from autocomp.core.scene import SceneGraph

    sets = {}
    for track in TRACKS:
        path = run.paths.positive_set(track)
        if not path.exists():
            raise AutocompError("no positive sets: build the benchmarks first (`autocomp "
                                "build RUN`)", file=path)
        sets[track] = {r["concept"]: r for r in read_jsonl(path)}
    for concept in run.records("concepts"):
        cid = concept["id"]
        if cid not in sets["minimal"] and cid not in sets["contextual"]:
            continue
        task = run.tasks[concept["task"]]
        graph = SceneGraph.from_dict(concept["graph"])
        row = {"concept": cid, "task": task.name, "n": concept["n"],
               "objects": list(graph.names),
               "attributes": task.attribute_words(graph),
               "relations": [r.predicate for r in graph.relations],
               "graph": graph.to_json()}
        for track, src in (("minimal", "handmade"), ("contextual", "llm")):
            got = sets[track].get(cid)
            row[f"{src}_image"] = ({"bytes": (run.dir / got["image"]).read_bytes(),
                                    "path": None} if got else None)
            row[f"{src}_caption"] = got["caption"] if got else None
        yield row


def _dataset(rows):
    from datasets import Dataset, Features, Image, Sequence, Value

    features = Features({
        "concept": Value("string"), "task": Value("string"), "n": Value("int32"),
        "objects": Sequence(Value("string")), "attributes": Sequence(Value("string")),
        "relations": Sequence(Value("string")), "graph": Value("string"),
        "handmade_image": Image(), "handmade_caption": Value("string"),
        "llm_image": Image(), "llm_caption": Value("string")})
    return Dataset.from_list(rows, features=features)


def check_output(out: Path) -> None:
    """Refuse an output that is a file, a folder with something in it, or not writable."""
    from autocomp.core.records import write_problem

    if out.exists() and not out.is_dir():
        raise AutocompError("the output exists and is not a folder (pick a new folder name)",
                            file=out)
    if out.exists() and any(out.iterdir()):
        raise AutocompError("the output folder is not empty (pick a new one)", file=out)
    problem = write_problem(out.parent)
    if problem:
        raise AutocompError(f"cannot write the export here ({problem})", file=out)


def export_run(run_dir: Path, fmt: str, out: Path) -> dict:
    """Write the run's rows to `out` in `fmt`; a progress line every ~10 s (core/progress.py)
    while rows are read and one before the dataset is written (logged)."""
    from autocomp.core.backend import require
    from autocomp.core.progress import Progress
    from autocomp.core.records import atomic_dir
    from autocomp.run import Run
    from autocomp.runtime.launch import clean_orphans

    if fmt not in FORMATS:
        raise AutocompError(f"unknown export format '{fmt}' (known: {', '.join(FORMATS)})")
    if fmt != "webdataset":
        require("datasets", "formats", f"export --export-format {fmt}")
    out = Path(out)
    check_output(out)
    run = Run.open(run_dir)
    rows = export_rows(run)
    if out.parent.is_dir():  # the temp folder of an export of this name that was killed
        clean_orphans(out.parent, pattern=f".{glob.escape(out.name)}.*")
    counts = {"rows": 0, "minimal": 0, "contextual": 0}
    with atomic_dir(out) as tmp, Progress("export", len(run.records("concepts")), "concept") \
            as bar:
        if fmt == "webdataset":
            _webdataset(_counted(rows, counts, bar), tmp)
        else:
            rows = list(_counted(rows, counts, bar))
            log.info(f"... export: writing {counts['rows']:,} rows as {fmt}")
            if fmt == "hf":
                from datasets import DatasetDict

                DatasetDict({"train": _dataset(rows)}).save_to_disk(str(tmp))
            else:
                _dataset(rows).to_parquet(str(tmp / "train.parquet"))
        bundled = _bundle_tasks(run, tmp)
    return {"format": fmt, "out": str(out), **counts, "tasks_bundled": bundled}


def _bundle_tasks(run, folder: Path) -> list[str]:
    """The run's own tasks (files, not built-in names) copied into the export's tasks/
    with their vocabularies (concepts/bundle.py): the export is scored without them."""
    from autocomp.concepts.bundle import write_bundle

    out = []
    for ref, resolved in run.config.task_paths().items():
        if Path(resolved).is_absolute():
            name = run.task_of_spec[ref].name
            write_bundle(Path(resolved), name, folder)
            out.append(name)
    return out


def _counted(rows, counts: dict, bar):
    for row in rows:
        bar.update(1)
        counts["rows"] += 1
        counts["minimal"] += row["handmade_image"] is not None
        counts["contextual"] += row["llm_image"] is not None
        yield row


def _webdataset(rows, out: Path) -> None:
    samples = _samples(rows)
    for shard in itertools.count():
        chunk = list(itertools.islice(samples, SHARD))
        if not chunk:
            return
        with tarfile.open(out / f"shard-{shard:06d}.tar", "w") as tar:
            for files in chunk:
                _add(tar, files)


def _samples(rows):
    """One sample per validated image: {name: bytes} of its .png, .txt and .json."""
    for row in rows:
        meta = {k: row[k] for k in SAMPLE_FIELDS}
        for src, track in (("handmade", "minimal"), ("llm", "contextual")):
            if row[f"{src}_image"] is None:
                continue
            key, caption = f"{row['concept']}-{track}", row[f"{src}_caption"]
            yield {f"{key}.png": row[f"{src}_image"]["bytes"], f"{key}.txt": caption.encode(),
                   f"{key}.json": json.dumps({**meta, "track": track, "caption": caption},
                                             sort_keys=True).encode()}


def _add(tar, files: dict) -> None:
    for name, data in files.items():
        info = tarfile.TarInfo(name)
        info.size, info.mtime, info.mode = len(data), 0, 0o644
        tar.addfile(info, io.BytesIO(data))

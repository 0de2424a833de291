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
  webdataset  DIR/shard-000000.tar, ...: per sample <key>.json (the row without images),
              <key>.minimal.png / <key>.contextual.png, <key>.txt (the minimal caption or
              else the contextual one); 1,000 samples a shard
"""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

from autocomp.core.errors import AutocompError

FORMATS = ("hf", "parquet", "webdataset")
SHARD = 1000


def export_rows(run) -> list[dict]:
    """The rows of a run (images as bytes), in concept order."""
    from autocomp.core.records import TRACKS, read_jsonl
    from autocomp.core.scene import SceneGraph

    sets = {}
    for track in TRACKS:
        path = run.layout.positive_set(track)
        if not path.exists():
            raise AutocompError("no positive sets: build the benchmarks first (`autocomp "
                                "build RUN`)", file=path)
        sets[track] = {r["concept"]: r for r in read_jsonl(path)}
    rows = []
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
        rows.append(row)
    return rows


def _dataset(rows):
    from datasets import Dataset, Features, Image, Sequence, Value

    features = Features({
        "concept": Value("string"), "task": Value("string"), "n": Value("int32"),
        "objects": Sequence(Value("string")), "attributes": Sequence(Value("string")),
        "relations": Sequence(Value("string")), "graph": Value("string"),
        "handmade_image": Image(), "handmade_caption": Value("string"),
        "llm_image": Image(), "llm_caption": Value("string")})
    return Dataset.from_list(rows, features=features)


def export_run(run_dir: Path, fmt: str, out: Path) -> dict:
    from autocomp.run import Run

    if fmt not in FORMATS:
        raise AutocompError(f"unknown export format '{fmt}' (known: {', '.join(FORMATS)})")
    run = Run.open(run_dir)
    rows = export_rows(run)
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise AutocompError("the output folder is not empty (pick a new one)", file=out)
    out.mkdir(parents=True, exist_ok=True)
    if fmt == "hf":
        from datasets import DatasetDict

        DatasetDict({"train": _dataset(rows)}).save_to_disk(str(out))
    elif fmt == "parquet":
        _dataset(rows).to_parquet(str(out / "train.parquet"))
    else:
        _webdataset(rows, out)
    return {"format": fmt, "rows": len(rows), "out": str(out),
            "minimal": sum(r["handmade_image"] is not None for r in rows),
            "contextual": sum(r["llm_image"] is not None for r in rows)}


def _webdataset(rows, out: Path) -> None:
    for start in range(0, len(rows), SHARD):
        path = out / f"shard-{start // SHARD:06d}.tar"
        with tarfile.open(path, "w") as tar:
            for row in rows[start:start + SHARD]:
                key = row["concept"]
                meta = {k: v for k, v in row.items() if not k.endswith("_image")}
                files = {f"{key}.json": json.dumps(meta, sort_keys=True).encode(),
                         f"{key}.txt": (row["handmade_caption"] or row["llm_caption"]).encode()}
                for src, track in (("handmade", "minimal"), ("llm", "contextual")):
                    if row[f"{src}_image"] is not None:
                        files[f"{key}.{track}.png"] = row[f"{src}_image"]["bytes"]
                for name, data in files.items():
                    info = tarfile.TarInfo(name)
                    info.size, info.mtime, info.mode = len(data), 0, 0o644
                    tar.addfile(info, io.BytesIO(data))

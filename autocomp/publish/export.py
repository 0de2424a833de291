"""`autocomp export RUN --output DIR`: every benchmark of a run as one dataset folder.

  DIR/README.md                      the dataset card (card.py)
  DIR/data/<config>/test-*.parquet   the rows of each config (rows.py, parquet.py)
  DIR/autocomp_export.json           what was exported: configs, rows, files, bytes, the
                                     negatives kept (K, seed), the images' own bytes
  DIR/harness/                       the harness adapters (adapters/): CLIP_benchmark,
                                     mteb/MIEB, lmms-eval (a task folder), VLMEvalKit

The folder is written under a temp name beside DIR and renamed at the end: a killed export
leaves nothing half-written under DIR (the next export removes the dead writer's temp).
"""

from __future__ import annotations

import glob
import json
from pathlib import Path

from autocomp.core.errors import AutocompError
from autocomp.core.log import package_logger

log = package_logger(__name__)

MANIFEST = "autocomp_export.json"


def _lines(path: Path) -> int:
    """How many items a bench file holds, read in blocks (not the whole file at once)."""
    with open(path, "rb") as fh:
        return sum(block.count(b"\n") for block in iter(lambda: fh.read(1 << 20), b""))


def write_configs(configs: list, run_dir: Path, folder: Path, max_negatives: int | None,
                  seed: int, bar) -> dict:
    """Every config's rows into folder/data; returns the manifest's configs and images."""
    from autocomp.publish.parquet import ShardWriter
    from autocomp.publish.rows import SPLIT, features, rows

    out, images = {}, {}
    for config in configs:
        writer = ShardWriter(folder / "data" / config.name, features(config.kind), SPLIT)
        shown = total = 0
        chance = 0.0
        for row in rows(config, run_dir, max_negatives, seed):
            writer.write(row)
            for key in ("image", "image_0", "image_1"):
                if key in row:
                    images[row[key]["path"]] = len(row[key]["bytes"])
            if config.matrix:
                chance += row["chance_text"]
            else:
                shown += len(row["negatives"])
                total += row["negatives_total"]
                chance += row["chance"]
            bar.update(1, config.name)
        paths, n = writer.close()
        out[config.name] = {
            "task": config.bench.task, "n": config.bench.n, "track": config.bench.track,
            "kind": config.kind, "rows": n,
            "files": [p.relative_to(folder).as_posix() for p in paths],
            "bytes": sum(p.stat().st_size for p in paths),
            "uncompressed_bytes": sum(_uncompressed(p) for p in paths),
            "negatives_shown": shown, "negatives_total": total,
            "chance": round(100 * chance / n, 4) if n else None}
        if config.bench.generator:  # the same items on a compared generator's images
            out[config.name]["generator"] = config.bench.generator
    return {"configs": out, "images": {"count": len(images), "bytes": sum(images.values())}}


def _uncompressed(path) -> int:
    """The parquet file's data uncompressed (its row groups' total_byte_size): what
    `datasets` calls a split's num_bytes, beside the file's size (its download size)."""
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(path).metadata
    return sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))


def export_benchmarks(run_dir: Path, out: Path, max_negatives: int | None = None,
                      seed: int = 0, hub_id: str | None = None,
                      audit: bool = True) -> dict:
    """Write the export of RUN into `out`; returns its manifest."""
    from autocomp import __version__
    from autocomp.bench.export import check_output
    from autocomp.core.backend import require
    from autocomp.core.progress import Progress, busy
    from autocomp.core.records import atomic_dir, write_text
    from autocomp.publish import adapters
    from autocomp.publish.card import write_card
    from autocomp.publish.rows import configs
    from autocomp.run import Run
    from autocomp.runtime.launch import clean_orphans

    require("datasets", "formats", "export")
    if max_negatives is not None and max_negatives < 1:
        raise AutocompError(f"--max-negatives must be at least 1, got {max_negatives}")
    out = Path(out)
    check_output(out)
    run = Run.open(run_dir)
    if out.parent.is_dir():  # the temp folder of an export of this name that was killed
        clean_orphans(out.parent, pattern=f".{glob.escape(out.name)}.*")
    with busy("export: reading the run's benchmarks"):
        benches = configs(run.dir)
        items = sum(_lines(c.bench.path) for c in benches)
    with atomic_dir(out) as tmp:
        with Progress("export", items, "item") as bar:
            got = write_configs(benches, run.dir, tmp, max_negatives, seed, bar)
        manifest = {"autocomp_version": __version__, "run": run.config.name,
                    "seed": run.config.seed, "split": "test",
                    "max_negatives": max_negatives,
                    "negatives_seed": seed if max_negatives is not None else None,
                    "hub_id": hub_id, **got}
        manifest["bytes"] = sum(c["bytes"] for c in got["configs"].values())
        blind = None
        if audit:
            log.info("... export: blind audit of the exported captions")
            from autocomp.publish.blind import audit_rows

            blind = audit_rows(run, benches, max_negatives, seed)
        manifest["adapters"] = adapters.write_all(tmp, manifest, hub_id or str(out.resolve()))
        write_text(tmp / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True))
        write_card(run, tmp, manifest, blind)
    return manifest

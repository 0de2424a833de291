"""Run a stage on one rank, merge the ranks' part files, write the stage's stats."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from autocomp.records import write_jsonl, write_text
from autocomp.runtime.parts import MERGED, PartWriter, done_records
from autocomp.runtime.stage import Stage

TIMING = "stats/timing"  # wall-clock per stage and rank: the only outputs that vary


def shard(items: list, rank: int, world_size: int) -> list:
    """The items of `rank`: every world_size-th one, so the split is stable across re-runs."""
    return items[rank::world_size]


def run_stage(stage: Stage, rank: int = 0, world_size: int = 1, progress: bool = True) -> dict:
    """Process this rank's items not done yet; returns this invocation's timing."""
    stage_dir = stage.run.dir / stage.name
    items = stage.items()
    done = done_records(stage_dir)
    todo = [it for it in shard(items, rank, world_size) if it.id not in done]
    start = time.perf_counter()
    bar = _bar(len(todo), f"{stage.name} [{rank}/{world_size}]",
               progress and rank == 0)
    processed = 0
    with PartWriter(stage_dir, rank) as writer:
        for i in range(0, len(todo), stage.batch_size):
            batch = todo[i:i + stage.batch_size]
            records = stage.process(batch)
            ids = [r["id"] for r in records]
            if ids != [it.id for it in batch]:
                raise RuntimeError(f"stage {stage.name} returned ids {ids[:3]}... for items "
                                   f"{[it.id for it in batch][:3]}...")
            writer.append(records)
            processed += len(records)
            if bar is not None:
                bar.update(len(records))
    if bar is not None:
        bar.close()
    timing = {"rank": rank, "world_size": world_size, "items": processed,
              "skipped": len(shard(items, rank, world_size)) - processed,
              "seconds": round(time.perf_counter() - start, 3)}
    write_text(stage.run.dir / TIMING / f"{stage.name}.rank-{rank}.json",
               json.dumps(timing, indent=1))
    return timing


def merge(stage: Stage) -> dict:
    """Write `<stage>/merged.jsonl` (input order), `stats/<stage>.json` (counters only: the
    same config gives the same bytes) and `stats/timing/<stage>.json` (wall-clock, which
    differs from run to run); returns the counters with the timing added."""
    stage_dir = stage.run.dir / stage.name
    items = stage.items()
    done = done_records(stage_dir)
    records = [done[it.id] for it in items if it.id in done]
    write_jsonl(stage_dir / MERGED, records)
    stats = {"stage": stage.name, "expected": len(items), "done": len(records),
             **stage.stats(records)}
    write_text(stage.run.dir / "stats" / f"{stage.name}.json", json.dumps(stats, indent=1))
    timing = _timing(stage.run.dir, stage.name)
    write_text(stage.run.dir / TIMING / f"{stage.name}.json", json.dumps(timing, indent=1))
    return {**stats, "timing": timing}


def _timing(run_dir: Path, name: str) -> dict:
    paths = sorted((run_dir / TIMING).glob(f"{name}.rank-*.json"),
                   key=lambda p: p.stat().st_mtime)
    ranks = [json.loads(p.read_text(encoding="utf-8")) for p in paths]
    if not ranks:
        return {}
    world = ranks[-1]["world_size"]  # the latest launch; older, larger ones leave files behind
    ranks = [r for r in ranks if r["world_size"] == world]
    seconds = max(r["seconds"] for r in ranks)
    items = sum(r["items"] for r in ranks)
    return {"processes": len(ranks), "items": items, "seconds": seconds,
            "items_per_second": round(items / seconds, 2) if seconds > 0 else None}


def _bar(total: int, desc: str, enabled: bool):
    """A tqdm bar on a terminal; nothing when output is not a terminal."""
    if not enabled or not total or not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="item", leave=False)

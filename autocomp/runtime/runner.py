"""Run stages: an item stage on one rank (then rank 0 merges the ranks' part files and
writes the stage's stats), a plain stage once on rank 0."""

from __future__ import annotations

import json
import sys
import time

from autocomp.core.errors import AutocompError
from autocomp.core.layout import RunLayout
from autocomp.core.records import write_jsonl, write_text
from autocomp.runtime.parts import PartWriter, done_records
from autocomp.runtime.stage import ItemStage, Stage


def shard(items: list, rank: int, world_size: int) -> list:
    """The items of `rank`: every world_size-th one, so the split is stable across re-runs."""
    return items[rank::world_size]


def run_stages(stages: list[Stage], rank: int = 0, world_size: int = 1,
               barrier=lambda: None, progress: bool = True) -> None:
    """Run `stages` in order on this rank: item stages sharded (rank 0 merges after every
    rank is done), plain stages on rank 0 alone."""
    for stage in stages:
        if stage.parallel:
            run_stage(stage, rank, world_size, progress)
            barrier()
            if rank == 0:
                merge(stage)
        elif rank == 0:
            stage.run_once()
        barrier()


def check_inputs(stages: list[Stage], chosen) -> None:
    """A stage whose input stage has not run (and is not asked for) is refused in one line,
    not run on nothing with exit status 0."""
    for stage in stages:
        for before in stage.needs:
            if before not in chosen and not stage.layout.has_records(before):
                raise AutocompError(
                    f"stage {stage.name} needs the records of stage {before}, which has not "
                    f"run here: run it first (e.g. --stages {before},{stage.name})",
                    file=stage.layout.root)


def run_stage(stage: ItemStage, rank: int = 0, world_size: int = 1,
              progress: bool = True) -> dict:
    """Process this rank's items not done yet; returns this invocation's timing."""
    layout = stage.layout
    stage_dir = layout.stage_dir(stage.name)
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
    write_text(layout.timing(stage.name, rank), json.dumps(timing, indent=1))
    return timing


def merge(stage: ItemStage) -> dict:
    """Write `<stage>/merged.jsonl` (input order), `stats/<stage>.json` (counters only: the
    same config gives the same bytes) and `stats/timing/<stage>.json` (wall-clock, which
    differs from run to run); returns the counters with the timing added."""
    layout = stage.layout
    items = stage.items()
    done = done_records(layout.stage_dir(stage.name))
    records = [done[it.id] for it in items if it.id in done]
    write_jsonl(layout.merged(stage.name), records)
    stats = {"stage": stage.name, "expected": len(items), "done": len(records),
             **stage.stats(records)}
    write_text(layout.stats(stage.name), json.dumps(stats, indent=1))
    timing = _timing(layout, stage.name)
    write_text(layout.timing(stage.name), json.dumps(timing, indent=1))
    return {**stats, "timing": timing}


def _timing(layout: RunLayout, name: str) -> dict:
    paths = sorted(layout.rank_timings(name), key=lambda p: p.stat().st_mtime)
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

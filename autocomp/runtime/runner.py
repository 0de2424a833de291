"""Run stages: an item stage on one rank (the last rank to finish merges the ranks' part
files and writes the stage's stats), a plain stage once on rank 0.

Each launch shares out only what is not done yet, by a hash of each item's id and its
cost, so ranks get equal work whatever the order of the items (the two tracks of a
concept, N = 1..3) and a relaunch with any number of processes does exactly the
unfinished items. Ranks meet between stages through files (runtime/sync.py)."""

from __future__ import annotations

import contextlib
import hashlib
import heapq
import json
import logging
import time
import uuid

from autocomp.core.bulk_gc import long_lived
from autocomp.core.errors import (
    AutocompError,
    GpuOutOfMemory,
    disk_full,
    gpu_out_of_memory,
)
from autocomp.core.locks import fence
from autocomp.core.records import write_jsonl, write_text
from autocomp.core.run_paths import RunPaths
from autocomp.runtime import local, space
from autocomp.runtime.parts import PartWriter, done_ids, done_records
from autocomp.runtime.stage import Deferred, ItemStage, Stage, free_memory
from autocomp.runtime.sync import STALL_TIMEOUT, WAIT_TIMEOUT, Peers

log = logging.getLogger("autocomp")


def _hash(item_id: str) -> int:
    return int.from_bytes(hashlib.blake2b(item_id.encode(), digest_size=8).digest(), "big")


def shard(items: list, rank: int, world_size: int, cost=None, stratum=None) -> list:
    """The items of `rank` (in input order): the items sorted by cost (most costly first),
    stratum (e.g. the track) and a hash of their id, each given in turn to the rank with
    the least cost so far, so every rank gets an equal share of each stratum (+-1) and of
    the cost. A partition; every rank computes the same one from the same list."""
    if world_size == 1:
        return list(items)
    cost = cost or (lambda _item: 1.0)
    stratum = stratum or (lambda _item: "")
    order = sorted(range(len(items)), key=lambda i: (-cost(items[i]), stratum(items[i]),
                                                     _hash(items[i].id)))
    loads = [(0.0, r) for r in range(world_size)]
    mine = []
    for i in order:
        load, r = heapq.heappop(loads)
        if r == rank:
            mine.append(i)
        heapq.heappush(loads, (load + cost(items[i]), r))
    return [items[i] for i in sorted(mine)]


def run_stages(stages: list[Stage], rank: int = 0, world_size: int = 1, share=None,
               progress: bool = True, wait_timeout: float = WAIT_TIMEOUT,
               stall: float = STALL_TIMEOUT) -> None:
    """Run `stages` in order on this rank. `share(value)`: the launch's broadcast from
    rank 0 (a collective, called once at start, after every rank has read what is done)."""
    if world_size == 1:
        for stage in stages:
            if stage.parallel:
                with released(stage):
                    run_stage(stage, progress=progress)
                merge(stage)
            else:
                fence()
                stage.run_once()
        return
    done = {s.name: done_ids(s.paths.stage_dir(s.name)) for s in stages if s.parallel}
    token = share(uuid.uuid4().hex if rank == 0 else None)
    peers = Peers(stages[0].paths.root, token, rank, world_size, wait_timeout, stall)
    if rank == 0:  # this launch holds the stage locks: any other launch's files are stale
        peers.clean_others()
    complete = False  # rank 0 leaves last: it holds the launch's locks until every rank
    try:              # is done, then removes the launch's files
        for i, stage in enumerate(stages):
            last = i == len(stages) - 1
            if not stage.parallel:
                if rank == 0:
                    fence()
                    stage.run_once()
                    peers.merged(stage.name)
                elif not last:
                    peers.wait_merged(stage.name, claim=False)
                continue
            with released(stage):
                run_stage(stage, rank, world_size, progress, done=done[stage.name])
            peers.finished(stage.name)
            # rank 0 (which holds the launch's locks) stays until the last stage is merged:
            # its locks must outlive every rank's writes
            if peers.claim_merge(stage.name) or ((not last or rank == 0)
                                                 and peers.wait_merged(stage.name)):
                merge(stage, merged_by=rank)
                peers.merged(stage.name)
        complete = rank == 0
    finally:
        peers.close(complete)


@contextlib.contextmanager
def released(stage: Stage):
    """Run the block, then release the stage's models and free their memory, however the
    block ends (an error in the next stage must not find this one's models resident)."""
    try:
        yield
    finally:
        stage.release()
        free_memory()


def check_inputs(stages: list[Stage], chosen) -> None:
    """A stage whose input stage has not run (and is not asked for) is refused in one line,
    not run on nothing with exit status 0."""
    for stage in stages:
        for before in stage.needs:
            if before not in chosen and not stage.paths.has_records(before):
                raise AutocompError(
                    f"stage {stage.name} needs the records of stage {before}, which has not "
                    f"run here: run it first (e.g. --stages {before},{stage.name})",
                    file=stage.paths.root)


def run_stage(stage: ItemStage, rank: int = 0, world_size: int = 1,
              progress: bool = True, done=None) -> dict:
    """Process this rank's share of the items not done yet (`done`: the ids done when the
    launch started, the same on every rank); returns this invocation's timing."""
    paths = stage.paths
    stage_dir = paths.stage_dir(stage.name)
    items = stage.items()
    if done is None:
        done = done_ids(stage_dir)
    left = [it for it in items if it.id not in done]
    space.check(stage, len(left))
    todo = shard(left, rank, world_size, stage.cost, stage.stratum)
    start = time.perf_counter()
    label = stage.name if world_size == 1 else f"{stage.name} [rank {rank} of {world_size}]"
    bar = _bar(len(todo), label, progress and rank == 0)
    processed = 0

    def record(batch, out) -> None:
        nonlocal processed
        records = out.result() if isinstance(out, Deferred) else out
        ids = [r["id"] for r in records]
        if ids != [it.id for it in batch]:
            raise RuntimeError(f"stage {stage.name} returned ids {ids[:3]}... for items "
                               f"{[it.id for it in batch][:3]}...")
        fence()  # a holder paused past the stale time stops here (exit 4), never beside
        writer.append(records)  # the holder that took its lock over
        processed += len(records)
        if bar is not None:
            bar.update(len(records))

    delay = local.load_delay() if world_size > 1 and todo else 0.0
    if delay:
        log.info(f"{label}: loading its models in {delay:g} s (AUTOCOMP_LOAD_STAGGER: one "
                 "rank of the node at a time)")
        time.sleep(delay)
    with PartWriter(stage_dir, rank) as writer, long_lived(), _closing(bar):
        pending = None  # one batch whose records wait on the stage's writer (Deferred)
        try:
            for i in range(0, len(todo), stage.batch_size):
                batch = todo[i:i + stage.batch_size]
                out = stage.process(batch)
                if pending is not None:
                    record(*pending)
                    pending = None
                if isinstance(out, Deferred):
                    pending = (batch, out)
                else:
                    record(batch, out)
        except BaseException as exc:
            if pending is not None:  # interrupted: keep the batch whose files are written
                with contextlib.suppress(Exception):
                    record(*pending)
            got = _classified(stage, exc, len(todo) - processed)
            if got is exc:
                raise
            raise got from exc
        if pending is not None:
            record(*pending)
    timing = {"rank": rank, "world_size": world_size, "items": processed,
              "skipped": sum(it.id in done for it in items),
              "seconds": round(time.perf_counter() - start, 3)}
    write_text(paths.timing(stage.name, rank), json.dumps(timing, indent=1))
    return timing


def _classified(stage: ItemStage, exc: BaseException, left: int) -> BaseException:
    """A full disk or a GPU out of memory as the one line a job script acts on (exit 83
    with the space the rest needs, 82 with the batch to try next); any other error as
    it is."""
    if isinstance(exc, OSError) and disk_full(exc):
        return space.full(stage, left)
    if gpu_out_of_memory(exc):
        option, batch = stage.batch_option()
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        return GpuOutOfMemory(
            f"stage {stage.name}: out of GPU memory at a batch of {batch} ({first}); the "
            f"same batch fails alike: set {option}: {max(batch // 2, 1)} in the config and "
            "run again (finished batches are kept; `autocomp run CONFIG --dry-run` shows "
            "the memory plan)")
    return exc


def merge(stage: ItemStage, merged_by: int = 0) -> dict:
    """Write `<stage>/merged.jsonl` (input order), `stats/<stage>.json` (counters only: the
    same config gives the same bytes) and `stats/timing/<stage>.json` (wall-clock, which
    differs from run to run); returns the counters with the timing added."""
    paths = stage.paths
    items = stage.items()
    done = done_records(paths.stage_dir(stage.name))
    records = [done[it.id] for it in items if it.id in done]
    fence()
    write_jsonl(paths.merged(stage.name), records)
    stats = {"stage": stage.name, "expected": len(items), "done": len(records),
             **stage.stats(records)}
    write_text(paths.stats(stage.name), json.dumps(stats, indent=1))
    timing = {**_timing(paths, stage.name), "merged_by": merged_by}
    write_text(paths.timing(stage.name), json.dumps(timing, indent=1))
    return {**stats, "timing": timing}


def _timing(paths: RunPaths, name: str) -> dict:
    paths = sorted(paths.rank_timings(name), key=lambda p: p.stat().st_mtime)
    ranks = [json.loads(p.read_text(encoding="utf-8")) for p in paths]
    if not ranks:
        return {}
    world = ranks[-1]["world_size"]  # the latest launch; older, larger ones leave files behind
    ranks = [r for r in ranks if r["world_size"] == world]
    seconds = max(r["seconds"] for r in ranks)
    items = sum(r["items"] for r in ranks)
    return {"processes": len(ranks), "items": items, "seconds": seconds,
            "items_per_second": round(items / seconds, 2) if seconds > 0 else None}


@contextlib.contextmanager
def _closing(bar):
    """Close the progress bar however the stage ends (its heartbeat must not outlive it)."""
    try:
        yield
    finally:
        if bar is not None:
            bar.close()


def _bar(total: int, desc: str, enabled: bool):
    """A bar on a terminal, a progress line every ~10 s otherwise (core/progress.py);
    nothing when progress is off or there is nothing to do."""
    if not enabled or not total:
        return None
    from autocomp.core.progress import Progress

    return Progress(desc, total, "item")

"""The composition root: builds the stages named in the registry's ordered stage table and
hands them to the runtime, in one process or in K processes started by `accelerate launch`
(one per GPU; several nodes too).

Every process runs the same stage code on its share of the ids not done yet (dealt by hash
and cost), writes its own part file, and the last rank to finish a stage merges it; ranks
meet through files (runtime/sync.py), so a slow rank is never timed out and a finished one
leaves at the end. `autocomp run --processes K` starts the launch
for the user; on a cluster, start `python -m autocomp.pipeline RUN_DIR` under your own
`accelerate launch` instead.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from contextlib import ExitStack
from pathlib import Path

from autocomp.core import registry
from autocomp.core.errors import MEANING, AutocompError, MemoryRefused, error_for, exit_code
from autocomp.core.locks import fence, holder_of, holding, mine, tokens, unwatch, watch
from autocomp.planning import weights
from autocomp.run import Run
from autocomp.runtime.launch import clean_orphans, distributed, launch, need_accelerate
from autocomp.runtime.runner import check_inputs, run_stages

ALL = registry.stage_names()


def make_stages(run: Run, names, device: str = "cpu", options: dict | None = None) -> list:
    """The stages `names` of `run`; `options`: stage name -> keyword arguments."""
    options = options or {}
    return [registry.make_stage(name, run, device, **options.get(name, {})) for name in names]


def parallel_names() -> tuple[str, ...]:
    """The stages that run sharded over the launched processes."""
    return tuple(n for n in ALL if registry.resolve("stage", n).parallel)


def run_pipeline(run: Run, processes: int = 1, stages=ALL, progress: bool = True,
                 build: dict | None = None) -> None:
    """Run the named stages in order; the parallel ones in `processes` processes. `build`:
    the build stage's options (store: how it stores items, default the config's
    build.store; partial: build although an earlier stage is unfinished)."""
    try:
        _run_pipeline(run, processes, stages, progress, build)
    except Exception as exc:  # one process too: `status --failure` reads it (it said none)
        from autocomp.core.errors import Held
        from autocomp.runtime.failures import record

        if not isinstance(exc, Held):  # another process's run: not this run's failure
            record(run.dir, exc)
        raise


def _run_pipeline(run: Run, processes: int, stages, progress: bool, build) -> None:
    chosen = [n for n in ALL if n in stages]
    built = make_stages(run, chosen, "auto", options={"build": build or {}})
    check_inputs(built, chosen)
    missing = weights.missing_packages(run.config, chosen)
    if missing:  # before the first stage: not after concepts were sampled
        raise AutocompError(f"{len(missing)} backend(s) of this run are not installed here: "
                            + "; ".join(missing), file=run.dir / "config.yaml")
    check_kinds(run, chosen)
    # offline, every model this and the later stages load is checked before any runs
    weights.check(run.config, ALL[ALL.index(chosen[0]):] if chosen else (),
                  file=run.dir / "config.yaml")
    if processes == 1:
        check_memory(run, "auto", chosen)
    locks = {name: run.paths.stage_lock(name) for name in chosen}
    with holding(locks, "stage"):  # a second `autocomp run` refuses instead of redoing
        clean_orphans(run.dir)
        _run_all(run, built, processes, progress)


def check_kinds(run: Run, stages) -> None:
    """Before drawing or validating: every plugin kind the run's tasks draw keeps the kind
    contract, as `autocomp vocab check` requires (one line naming the vocabulary file)."""
    if not {"images", "validation"} & set(stages):
        return
    from autocomp.contracts import run_kind_problem

    broken = run_kind_problem(run.config)
    if broken:
        raise AutocompError(broken[1], file=broken[0])


def check_memory(run: Run, device: str, stages) -> None:
    """On a GPU, refuse before any model loads when the planned peak (memory.py) of one of
    `stages` is larger than this GPU's memory; on CPU, or with no model to load, nothing
    to check."""
    from autocomp.planning import memory

    if not any(r["stage"] in stages for r in memory.stage_rows(run.config)):
        return  # embedded or served backends: torch is not even imported
    import torch

    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if not device.startswith("cuda"):
        return

    props = torch.cuda.get_device_properties(torch.device(device))
    total = props.total_memory / memory.GIB
    gib, where = memory.usable(total), props.name
    free, _ = torch.cuda.mem_get_info(torch.device(device))  # what others left this process
    held = total - free / memory.GIB - memory.CONTEXT  # our own context: already counted
    if held > 0.5:  # another process holds part of the card: plan with what is free
        gib = min(gib, free / memory.GIB - memory.HEADROOM * total)
        where = (f"{props.name} ({held:.1f} GiB of its {total:.1f} GiB held by other "
                 f"processes: {_holders(torch, device)})")
    rows = [r for r in memory.fit(run.config, gib) if r["stage"] in stages]
    problems = memory.refusals(rows, where, gib)
    if problems:
        raise MemoryRefused("; ".join(problems) + " (autocomp run CONFIG --dry-run shows the "
                            "plan)", file=run.dir / "config.yaml")


def _holders(torch, device: str) -> str:
    """Who holds the card's memory, as the driver says (nvidia-ml-py), else where to look."""
    try:
        listed = torch.cuda.list_gpu_processes(torch.device(device))
    except Exception:  # noqa: BLE001 (pynvml missing or the driver refuses: say where to look)
        listed = ""
    lines = [ln.strip() for ln in listed.splitlines()[1:] if ln.strip()]
    return "; ".join(lines[:5]) if lines else "`nvidia-smi` lists them"


def _run_all(run: Run, built: list, processes: int, progress: bool) -> None:
    if processes > 1 and any(s.parallel for s in built):
        need_accelerate()
    group: list = []  # consecutive parallel stages run in one launched group
    for stage in [*built, None]:
        if stage is not None and stage.parallel:
            group.append(stage)
            continue
        if group:
            _run_parallel(run, group, processes, progress)
            group = []
        if stage is not None:
            fence()
            stage.run_once()


def _run_parallel(run: Run, stages: list, processes: int, progress: bool) -> None:
    if processes == 1:
        run_stages(stages, progress=progress)
        return
    args = [str(run.dir), "--stages", ",".join(s.name for s in stages),
            "--lock-held-by", str(os.getpid())]  # this process holds the stage locks
    launch("autocomp.pipeline", args, processes, run.dir)


def worker(run_dir: Path, stages, progress: bool = True, lock_held_by: str | None = None) -> None:
    """One launched process: the named parallel stages on this rank's ids. Rank 0 holds
    the stages' locks for the launch, as `autocomp run` does, so a second launch on the
    same run (an overlapping SLURM submission) is refused on every rank instead of doing
    the same work twice; `lock_held_by`: the pid of the `autocomp run` that started this
    launch and holds them already."""
    run = Run.open(run_dir)
    launch_cfg = run.config.launch
    rank, world, share, device = distributed(launch_cfg.wait_timeout,
                                             launch_cfg.rendezvous_timeout, run.dir)
    check_memory(run, device, stages)
    with ExitStack() as stack:
        refused = None
        if rank == 0:  # once for the launch; every rank ends with its status if refused
            locks = {name: run.paths.stage_lock(name) for name in stages}
            holders = {n: holder_of(p) for n, p in locks.items()}
            ours = {n: p for n, p in locks.items()
                    if lock_held_by is None or not mine(holders[n], lock_held_by)}
            # the locks `autocomp run` holds for this launch fence its writes too
            parent = {str(p): holders[n]["token"] for n, p in locks.items() if n not in ours
                      and isinstance(holders[n], dict) and holders[n].get("token")}
            watch(parent)
            stack.callback(unwatch, parent)
            try:
                weights.check(run.config, stages, file=run.dir / "config.yaml")
                if lock_held_by is None:  # else the `autocomp run` that launched us did
                    check_kinds(run, stages)
                stack.enter_context(holding(ours, "stage"))
            except AutocompError as exc:
                refused = (exit_code(exc), str(exc))
        refused, fences = share((refused, tokens() if rank == 0 else None))
        if refused:
            raise error_for(*refused)
        if rank != 0:
            watch(fences)  # rank 0 holds the locks: every rank's writes are fenced by them
            stack.callback(unwatch, fences)
        run_stages(make_stages(run, stages, device), rank, world, share, progress,
                   launch_cfg.wait_timeout, launch_cfg.stall_timeout)


def main(argv=None) -> None:
    """`python -m autocomp.pipeline RUN_DIR [--stages a,b]`: one launched process."""
    parallel = parallel_names()
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--stages", default=",".join(parallel))
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--lock-held-by", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    stages = [s for s in args.stages.split(",") if s]
    unknown = [s for s in stages if s not in parallel]
    if unknown:
        parser.error(f"unknown stage(s) {', '.join(unknown)} (known: {', '.join(parallel)})")
    from autocomp.core.log import attach
    from autocomp.runtime import local

    attach()  # a launched process is a command too: its progress lines to stderr
    local.apply()  # compile caches and threads per rank, before torch reads them
    try:
        worker(args.run_dir, stages, not args.no_progress, args.lock_held_by)
    except Exception as exc:  # noqa: BLE001 (each failure class its exit status, recorded for the job)
        from autocomp.runtime.failures import record

        code = record(args.run_dir, exc, int(os.environ.get("RANK", "0") or 0))
        if isinstance(exc, AutocompError):
            print(f"autocomp: {exc}", file=sys.stderr, flush=True)
        else:
            traceback.print_exc()
            print(f"autocomp: exit {code} ({MEANING.get(code, 'error')})", file=sys.stderr,
                  flush=True)
        raise SystemExit(code) from None


if __name__ == "__main__":
    main()

"""`autocomp run CONFIG`: every stage of a benchmark run; and one stage at a time:
`autocomp generate|validate|build DIR`."""

from __future__ import annotations

import time
from pathlib import Path

import click

from autocomp.cli import options
from autocomp.config import STORES
from autocomp.core.errors import AutocompError
from autocomp.core.registry import stage_names
from autocomp.planning.memory import CARDS

GPU_CARDS = tuple(CARDS)

PROCESSES = click.option(
    "--processes", type=click.IntRange(min=1), default=None,
    help="Processes for the heavy stages (one per GPU), started with accelerate launch; "
         "default: the config's `processes`.")
NO_PROGRESS = click.option("--no-progress", is_flag=True, help="No progress bars.")


def config_path(ref: str) -> Path:
    """A config file, or the name of a built-in one ("demo")."""
    path = Path(ref)
    if path.is_file():
        return path
    from autocomp.core.resources import data_dir

    builtin = data_dir("configs") / f"{ref}.yaml"
    if "/" not in ref and builtin.is_file():
        return builtin
    names = ", ".join(p.stem for p in sorted(data_dir("configs").glob("*.yaml")))
    raise AutocompError(f"no config file '{ref}' (built-in configs: {names})")


def _open(run_dir: Path, config: str | None):
    from autocomp.config import load_config
    from autocomp.run import Run

    if config:
        return Run.create(load_config(config_path(config)), run_dir)
    return Run.open(run_dir)


def _go(run, stages, processes, no_progress, report: bool, build: dict | None = None):
    from autocomp.pipeline import run_pipeline
    from autocomp.report.summary import format_summary, summarize

    start = time.perf_counter()
    run_pipeline(run, processes or run.config.processes, stages, progress=not no_progress,
                 build=build)
    seconds = time.perf_counter() - start
    if report:
        from autocomp.core.progress import busy

        with busy("status: reading the run's records, drawing its figures"):
            summary = summarize(run)
        click.echo(format_summary(summary))
    click.echo(f"\n{', '.join(stages)}: done in {seconds:.1f} s -> {run.dir}")


@click.command("run")
@click.argument("config")
@options.output(help="Run directory (default: runs/<config name>). Re-running resumes it.")
@PROCESSES
@NO_PROGRESS
@click.option("--stages", default=None,
              help=f"Only these stages, comma-separated, in order ({', '.join(stage_names())})"
                   "; e.g. `--stages concepts` before a SLURM launch.")
@click.option("--dry-run", is_flag=True,
              help="Print the plan (stages, models, counts, expected GPU-hours); run nothing.")
@click.option("--cost", type=click.Path(path_type=Path, exists=True), default=None,
              help="With --dry-run: per-unit GPU seconds measured by scripts/bench_generate.py.")
@click.option("--calibrate", type=click.Path(path_type=Path, exists=True, dir_okay=False),
              default=None,
              help="With --dry-run: the JSON of scripts/gpu_check.py on a GPU; each stage's "
                   "cost rebuilt from its measured components, in place of the estimate.")
@click.option("--gpu", "gpus", multiple=True, type=click.Choice(GPU_CARDS),
              help="With --dry-run: plan cost and memory for this GPU (repeatable; default "
                   "A100-80 and H100). A stage that does not fit is refused (exit status 1).")
@click.option("--nodes", type=click.IntRange(min=1), default=1, show_default=True,
              help="With --dry-run: nodes of --processes GPUs each, for the wall-clock hours.")
def run(config, output, processes, no_progress, stages, dry_run, cost, calibrate, gpus,
        nodes):
    """Run every stage of CONFIG (a YAML file, or a built-in name such as `demo`):
    concepts, captions, images, validation, benchmarks; print the survival funnel."""
    from autocomp.config import load_config
    from autocomp.pipeline import ALL
    from autocomp.run import Run

    planning = [name for name, given in (("--cost", cost), ("--calibrate", calibrate),
                                         ("--gpu", gpus), ("--nodes", nodes != 1)) if given]
    if planning and not dry_run:  # they plan a run; without --dry-run the run would start
        raise AutocompError(f"{', '.join(planning)} plan a run and need --dry-run (without "
                            "it the run starts): add --dry-run, or leave them out")
    cfg = load_config(config_path(config))
    if dry_run:
        from autocomp.planning.plan import format_plan, plan, refused

        if cost and calibrate:
            raise AutocompError("--cost and --calibrate both replace the estimate: give one")
        p = plan(cfg, cost, processes, tuple(gpus) or ("A100-80", "H100"), nodes, calibrate)
        click.echo(format_plan(p))
        if refused(p):
            from autocomp.core.errors import MemoryRefused

            raise MemoryRefused("a stage does not fit the GPU's memory (REFUSED above): "
                                "change the batch size it names, then plan again")
        return
    chosen = ALL
    if stages:
        chosen = tuple(s.strip() for s in stages.split(",") if s.strip())
        unknown = [s for s in chosen if s not in ALL]
        if unknown:
            raise AutocompError(f"unknown stage(s) {', '.join(unknown)} (stages: "
                                f"{', '.join(ALL)})")
    handle = Run.create(cfg, output or Path("runs") / cfg.name)
    _go(handle, chosen, processes, no_progress, report="build" in chosen)


@click.command("generate")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--config", default=None, help="Start RUN_DIR from this config (file or name).")
@PROCESSES
@NO_PROGRESS
def generate(run_dir, config, processes, no_progress):
    """Concepts, captions and images of RUN_DIR (resumes)."""
    _go(_open(run_dir, config), ("concepts", "captions", "images"), processes, no_progress,
        report=False)


@click.command("validate")
@click.argument("run_dir", type=click.Path(path_type=Path))
@PROCESSES
@NO_PROGRESS
def validate(run_dir, processes, no_progress):
    """Check every image of RUN_DIR: objects, background, attributes (resumes)."""
    _go(_open(run_dir, None), ("validation",), processes, no_progress, report=False)


@click.command("build")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--store", type=click.Choice(STORES), default=None,
              help="How items are stored: compact (negatives enumerated again when read; "
                   "the default) or full (every negative written out). Rebuilding an old "
                   "run with --store compact migrates it.")
@click.option("--partial", is_flag=True,
              help="Build from the images validated so far although an earlier stage is "
                   "not finished (refused otherwise); the build's stats say so.")
def build(run_dir, store, partial):
    """Positive sets and benchmark items of RUN_DIR; print the funnel; draw the figures."""
    _go(_open(run_dir, None), ("build",), 1, True, report=True,
        build={"store": store, "partial": partial})

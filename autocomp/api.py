"""The Python API: what the commands do, as functions (docs/api.md has examples).

    from autocomp import api

    run = api.run("configs/demo.yaml", "runs/demo")     # every stage; resumes
    run = api.open_run("runs/demo")                      # a run already there
    api.benchmarks(run, "shape_color-n2/*")              # its benchmarks (name, task, N, ...)
    api.items(run, "shape_color-n2/minimal-swap")        # one benchmark's items
    api.evaluate(run, ["open_clip:ViT-B-32-quickgelu@openai"], "results", "shape_color-n2/*")
    api.results("results")                               # every result written there
    api.t2i(run, ["procedural"], "t2i", k=2)             # text-to-image faithfulness
    api.split(run); api.training_data(run, "train-data")  # splits, fine-tuning data

Messages and progress lines go through `logging` ("autocomp" logger): call
`api.show_progress()` to see them on standard error as the CLI shows them.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["benchmarks", "evaluate", "items", "load_config", "open_run", "results", "run",
           "show_progress", "split", "t2i", "training_data"]


def load_config(path):
    """A run config read and checked (one-line errors naming file and field)."""
    from autocomp.config import load_config as load

    return load(Path(path))


def run(config, directory, stages=None):
    """Run the stages of `config` (a path or a RunConfig) into `directory`, in this
    process; a run already there resumes where it stopped. Returns the Run."""
    from autocomp.pipeline import ALL, run_pipeline
    from autocomp.run import Run

    if not hasattr(config, "to_dict"):
        config = load_config(config)
    made = Run.create(config, Path(directory))
    # progress lines go to the "autocomp.progress" logger: shown after show_progress() (or
    # by logging configured at INFO), else nothing is done for them
    run_pipeline(made, stages=tuple(stages or ALL), progress=True)
    return made


def open_run(directory):
    """A run directory `autocomp run` (or `run()`) made."""
    from autocomp.run import Run

    return Run.open(Path(directory))


def _dir(run_or_dir) -> Path:
    return Path(getattr(run_or_dir, "dir", run_or_dir))


def benchmarks(run_or_dir, *patterns, split: str = "test") -> list:
    """The run's benchmarks (each has name, task, n, track, kind), those matching the glob
    `patterns` ("shape_color-n2/*") when given; a run with splits gives the items of
    `split` (train, val, test or all)."""
    from autocomp.formats.runs import find_benchmarks

    return find_benchmarks(_dir(run_or_dir), patterns, split)


def items(run_or_dir, name: str, split: str = "test") -> list[dict]:
    """The items of the benchmark `name`: id, image, positive, negatives (caption, edit,
    category, same_meaning), graph, ... (a run with splits: those of `split`, each with
    its `split` and seen label)."""
    from autocomp.core.errors import AutocompError

    every = benchmarks(run_or_dir, split=split)
    found = [b for b in every if b.name == name]
    if not found:
        names = [b.name for b in every]
        shown = ", ".join(names[:12]) + (f", ... ({len(names)} in all)" if len(names) > 12
                                         else "")
        raise AutocompError(f"no benchmark '{name}' (benchmarks: {shown or 'none'})",
                            file=_dir(run_or_dir))
    return list(found[0].items())


def evaluate(source, models: list[str], output, *patterns, **options) -> list[dict]:
    """Score `models` (specs as `autocomp eval --model` takes them) on the benchmarks of
    `source` (a run, an export, or another project's benchmark) matching `patterns`; one
    result per model and benchmark written under `output` and returned. Options are those
    of `autocomp eval` (cache_dir, device, batch_size, ties, precision, ...:
    autocomp.eval.cells.Request)."""
    import inspect

    from autocomp.core.errors import AutocompError
    from autocomp.eval.cells import Request
    from autocomp.eval.cells import evaluate as run_cells

    if isinstance(models, str):  # one spec, not its letters
        models = [models]
    known = set(inspect.signature(Request).parameters) - {"run_dir", "models", "out", "patterns"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise AutocompError(f"evaluate() got unknown option(s) {', '.join(unknown)} (known: "
                            f"{', '.join(sorted(known))})")
    return run_cells(_dir(source), list(models), Path(output), patterns, **options)


def t2i(run_or_dir, models: list[str], output, **options) -> dict:
    """Text-to-image models (specs as `autocomp t2i -g` takes them: procedural,
    diffusers:<id>, folder:<images>, run) scored on the run's prompts; the summary (also
    written to `output`). Options are compare()'s (autocomp/t2i/compare.py): k, patterns,
    tracks, per_group, device, vqascore, clipscore, batch_size, answerer, detector."""
    from autocomp.t2i.compare import compare, model_of

    return compare(_dir(run_or_dir), [model_of(m) for m in models], Path(output), **options)


def split(run_or_dir, corpus=None, column: str | None = None) -> dict:
    """Assign the run's concepts to train / val / test (its config's split section) and
    label those outside train seen / unseen compounds / unseen atoms, against train or a
    caption `corpus` (column `column`); written to bench/splits.json and returned."""
    from autocomp.bench.splits import make_splits

    made = run_or_dir if hasattr(run_or_dir, "dir") else open_run(run_or_dir)
    return make_splits(made, corpus, column)


def training_data(run_or_dir, output, split: str = "train", **options) -> dict:
    """The run's `split` as fine-tuning data under `output` (open_clip/NegCLIP CSV, grouped
    batches, chat SFT JSON: docs/train.md); options: seed, batch_size, max_negatives.
    Returns what was written and left out."""
    from autocomp.publish.training import export_training

    return export_training(_dir(run_or_dir), Path(output), split, **options)


def results(folder) -> list[dict]:
    """Every result `evaluate` (or `autocomp eval`) wrote under `folder`."""
    from autocomp.report.tables import load_results

    return load_results(Path(folder))


def show_progress() -> None:
    """Show autocomp's messages and progress lines on standard error, as the CLI does."""
    from autocomp.core.log import attach

    attach()

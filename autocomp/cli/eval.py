"""`autocomp eval RUN_DIR --model SPEC ...`: score models on a run's benchmarks."""

from __future__ import annotations

from pathlib import Path

import click

from autocomp.cli import options
from autocomp.eval.metrics import TIES as TIE_RULES


@click.command("eval")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--model", "models", multiple=True,
              help="FAMILY:NAME[@PRETRAINED], repeatable: open_clip:ViT-B-32@laion2b_s34b_b79k, "
                   "open_clip:local-dir:/w, hf:google/siglip-base-patch16-224, hf:/w, "
                   "reference:oracle|bag-of-concepts|random, blind:unigram, blind:lm@gpt2, "
                   "blind:choice@ID, vlm:ID (a generative VLM picking a letter; "
                   "vlm:ID@circular: every rotation), vlm:openai:MODEL, vqascore:ID, "
                   "visualgpt:ID (a VLM's likelihood of each caption).")
@click.option("--models-file", type=click.Path(path_type=Path), default=None,
              help="A model-set YAML (e.g. configs/models/autocomp-cp.yaml).")
@click.option("--benchmark", "patterns", multiple=True,
              help="Only benchmarks matching this glob (e.g. 'color-n2/*-swap'); repeatable.")
@options.output(help="Results folder (default: RUN_DIR/results for an autocomp run; for "
                     "anything else <folder>.autocomp/results beside it, never inside).")
@click.option("--cache", "cache_dir", type=click.Path(path_type=Path), default=None,
              help="Embedding cache folder (default: RUN_DIR/cache for an autocomp run; "
                   "for anything else <folder>.autocomp/cache beside it).")
@options.skip_existing
@options.device
@options.batch_size
@options.precision
@options.workers
@click.option("--distributed", is_flag=True,
              help="Share the work among the processes of `accelerate launch`: each image "
                   "and caption encoded once per model (into the shared --cache), then the "
                   "cells dealt out.")
@options.source_format()
@click.option("--images", type=click.Path(path_type=Path), default=None,
              help="The folder of the benchmark's images (COCO val2017 for SugarCrepe, "
                   "Visual Genome for CREPE).")
@click.option("--columns", "columns", default=None,
              help="With --source-format columns: image=COL,positive=COL,negatives=COL[+COL...] "
                   "[,id=COL,subset=COL], or a YAML file with those keys.")
@click.option("--skip-missing", is_flag=True,
              help="Leave out (and count) items whose image file is missing.")
@click.option("--first-rows", type=options.COUNT, default=None,
              help="A benchmark in another format: score the first N items of each file "
                   "(VL-CheckList's evaluate.py takes MAX_NUM / 2: 1000 for its MAX_NUM "
                   "2000); each result states it. Default: every item.")
@click.option("--seed", type=options.JSON_INT, default=None,
              help="The seed of scorers that draw at random: reference:random becomes "
                   "reference:random@SEED (its default seed is 0; an @SEED given wins). The "
                   "other scorers are deterministic.")
@click.option("--ties", type=click.Choice(TIE_RULES), default="strict",
              show_default=True,
              help="When the positive ties a negative: strict counts it wrong (the papers'); "
                   "aware gives 1/k for a k-way tie; argmax picks the first of the tied, "
                   "the positive, as CLIP_benchmark and MIEB do.")
@click.option("--split", type=click.Choice(("test", "val", "train", "all")), default="test",
              show_default=True,
              help="A run with splits (docs/train.md): score the items of this split; each "
                   "result states its selection and splits its scores seen / unseen.")
def eval_cmd(run_dir, models, models_file, patterns, output, cache_dir, skip_existing, device,
             batch_size, precision, workers, distributed, source_format, images, columns,
             skip_missing, first_rows, seed, ties, split):
    """Score every model on every benchmark of RUN_DIR (an autocomp run, or SugarCrepe,
    CREPE or any column-mapped table); one JSON per (model, benchmark)."""
    from autocomp.core.errors import AutocompError
    from autocomp.eval.cells import evaluate, load_model_set, model_labels
    from autocomp.formats import open_suite
    from autocomp.formats.columns import parse_mapping
    from autocomp.formats.suite import output_base

    specs, labels = list(models), {}
    if models_file:
        specs += load_model_set(_models_file(models_file))
        labels = model_labels(_models_file(models_file))
    if not specs:
        raise AutocompError("name at least one --model (or --models-file)")
    if seed is not None:  # the seed is in the spec: results of two seeds stay apart
        specs = [f"{s}@{seed}" if s == "reference:random" else s for s in specs]
    rank, world, share = 0, 1, None
    if distributed:
        from autocomp.pipeline import distributed as dist
        from autocomp.runtime.launch import launched

        if not launched():
            raise AutocompError(
                "--distributed shares the cells among the processes of a launcher, and this "
                "process was not started by one (WORLD_SIZE is not set): run `accelerate "
                "launch --num_processes K -m autocomp eval ... --distributed`, or leave "
                "--distributed out")
        rank, world, share, dev = dist()
        device = dev if dev != "auto" else device  # each process its own GPU
    # status lines go where eval's other ones are logged (stderr): a large source takes a
    # while to read, never silently
    click.echo(f"read   {run_dir}", err=True)
    suite = open_suite(run_dir, source_format, images, parse_mapping(columns), skip_missing)
    if first_rows is not None:
        if suite.format == "run":
            raise AutocompError("--first-rows cuts a benchmark in another format; an "
                                "autocomp run's benchmarks are chosen with --benchmark and "
                                "its splits")
        suite = suite.first(first_rows)
    click.echo(f"read   {run_dir}: {len(suite.benchmarks)} benchmark(s) ({suite.format})",
               err=True)
    base = output_base(suite.source, suite.format)
    default = "results" if split == "test" else f"results-{split}"  # apart from test's
    output, cache_dir = output or base / default, cache_dir or base / "cache"
    for folder, option in ((output, "--output"), (cache_dir, "--cache")):
        _writable(folder, option)
    evaluate(run_dir, specs, output, patterns, cache_dir=cache_dir,
             skip_existing=skip_existing, device=device, batch_size=batch_size, rank=rank,
             world_size=world, suite=suite, precision=precision, workers=workers, share=share,
             labels=labels, ties=ties, split=split)


def _writable(folder: Path, option: str) -> None:
    """Results and vectors go under the run by default: on a read-only run, say which
    option moves them, before any model is loaded."""
    from autocomp.core.errors import AutocompError
    from autocomp.core.records import write_problem

    problem = write_problem(folder)
    if problem:
        raise AutocompError(f"cannot write here ({problem}): pass {option} DIR for a folder "
                            "you can write (e.g. when the run is read-only)", file=folder)


def _models_file(path: Path) -> Path:
    """A model-set file, or the name of a built-in one ("autocomp-cp")."""
    from autocomp.core.errors import AutocompError
    from autocomp.core.resources import data_dir

    if path.is_file():
        return path
    builtin = data_dir("configs") / "models" / f"{path.stem}.yaml"
    if builtin.is_file():
        return builtin
    known = ", ".join(p.stem for p in sorted((data_dir("configs") / "models").glob("*.yaml")))
    raise AutocompError(f"no model-set file '{path}' (built-in: {known})")

"""`autocomp t2i RUN_DIR`: text-to-image models scored on a run's prompts (docs/t2i.md)."""

from __future__ import annotations

from pathlib import Path

import click

from autocomp.cli import options


@click.command("t2i")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("-g", "--generator", "specs", multiple=True, metavar="SPEC",
              help="A model: procedural, diffusers:<hub id or folder>, folder:<images named "
                   "<prompt id>-<k>.png>, run (the run's own images) or a registered "
                   "generator (repeatable).")
@click.option("--generators", "config", type=click.Path(path_type=Path, dir_okay=False),
              default=None, help="A YAML file of models and settings (configs/generators.yaml).")
@click.option("-k", "--images-per-prompt", "k", type=click.IntRange(1, 100), default=None,
              help="Images per prompt, each from its own recorded seed [default: 1, or the "
                   "file's].")
@options.prompt_selection("Prompts")
@click.option("--vqascore", default=None, metavar="SPEC",
              help="Score each image's whole prompt with this VLM (vqascore:<model>).")
@click.option("--clipscore", default=None, metavar="SPEC",
              help="CLIPScore from this dual encoder (open_clip:..., hf:...).")
@options.output(required=True, help="Folder for the images, scores, tables and figure.")
@options.device
@click.option("--batch-size", type=click.IntRange(min=1), default=8, show_default=True,
              help="Images per generator call and per scoring batch.")
@options.table_format
def t2i(run_dir, specs, config, k, patterns, tracks, per_group, vqascore, clipscore, output,
        device, batch_size, table_format):
    """Score text-to-image models for faithfulness on RUN_DIR's prompts: TIFA- and DSG-style
    questions from each prompt's scene graph (no LLM), GenEval-style detector checks,
    VQAScore and CLIPScore when given, the validators' survival rate; per model, aspect and
    N with 95% intervals; with the embedded generator, each metric against exact truth."""
    from autocomp.core.errors import AutocompError
    from autocomp.core.records import TRACKS
    from autocomp.t2i.compare import compare, model_of, read_models
    from autocomp.t2i.summary import tables

    settings = {"k": 1, "vqascore": None, "clipscore": None}
    models = []
    if config is not None:
        models, settings = read_models(config)
    models += [model_of(s) for s in specs]
    if not models:
        raise AutocompError("name a model: -g procedural, -g diffusers:<id>, -g folder:<dir>, "
                            "or --generators FILE")
    if len({m.name for m in models}) < len(models):
        raise AutocompError("two models share a name; name them in a --generators file")
    summary = compare(run_dir, models, output, k or settings["k"], patterns,
                      tuple(tracks) or TRACKS, per_group, device,
                      vqascore or settings["vqascore"], clipscore or settings["clipscore"],
                      batch_size, settings.get("answerer"), settings.get("detector"))
    click.echo("\n\n".join(t.render(table_format) for t in tables(summary["summary"])))

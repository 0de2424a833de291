"""`autocomp export RUN_DIR --export-format hf|parquet|webdataset --output DIR`."""

from __future__ import annotations

from pathlib import Path

import click

from autocomp.cli import options


@click.command("export")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--export-format", "fmt", type=click.Choice(["hf", "parquet", "webdataset"]),
              required=True, help="How the samples are written.")
@options.output(required=True)
def export(run_dir, fmt, output):
    """Write a run's validated samples (images, captions, concepts) for others to load."""
    from autocomp.bench.export import export_run

    click.echo(f"export {run_dir} as {fmt}")
    got = export_run(run_dir, fmt, output, echo=lambda line: click.echo(line, err=True))
    click.echo(f"{got['rows']} concepts ({got['minimal']} minimal, {got['contextual']} "
               f"contextual images) -> {got['out']} [{fmt}]")
    if got["tasks_bundled"]:
        click.echo(f"own tasks bundled in {Path(got['out']) / 'tasks'}: "
                   f"{', '.join(got['tasks_bundled'])} (`autocomp eval` reads them there)")

"""`autocomp export RUN --export-format hf|parquet|webdataset --output DIR`."""

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

    got = export_run(run_dir, fmt, output)
    click.echo(f"{got['rows']} concepts ({got['minimal']} minimal, {got['contextual']} "
               f"contextual images) -> {got['out']} [{fmt}]")

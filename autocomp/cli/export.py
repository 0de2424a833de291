"""`autocomp export RUN --format hf|parquet|webdataset --out DIR`."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("export")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["hf", "parquet", "webdataset"]),
              required=True)
@click.option("--out", type=click.Path(path_type=Path), required=True)
def export(run_dir, fmt, out):
    """Write a run's validated samples (images, captions, concepts) for others to load."""
    from autocomp.bench.export import export_run

    got = export_run(run_dir, fmt, out)
    click.echo(f"{got['rows']} concepts ({got['minimal']} minimal, {got['contextual']} "
               f"contextual images) -> {got['out']} [{fmt}]")

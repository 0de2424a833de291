"""`autocomp report RESULTS_DIR`: the Auto-Comp tables from eval results."""

from __future__ import annotations

from pathlib import Path

import click

from autocomp.cli import options


@click.command("report")
@click.argument("results_dir", type=click.Path(path_type=Path))
@options.table_format
@click.option("--models-file", type=click.Path(path_type=Path), default=None,
              help="Use the labels of a model-set YAML for the rows.")
@click.option("--figure/--no-figure", default=True, show_default=True,
              help="Also draw RESULTS_DIR/figures/min_vs_ctx.png.")
def report(results_dir, table_format, models_file, figure):
    """Print Tables 4, 5, 6, 8, 9 and 13 (Auto-Comp layouts) for the results in RESULTS_DIR."""
    from autocomp.report.tables import all_tables, delta_figure, load_results

    results = load_results(results_dir)
    labels = {}
    if models_file:
        from autocomp.eval.cells import model_labels

        labels = model_labels(models_file)
    from autocomp.report.external import EXTERNAL

    for table in all_tables(results, labels):
        click.echo(table.render(table_format))
        click.echo()
    if figure:
        ours = [r for r in results if r.get("format", "run") not in EXTERNAL]
        path = delta_figure(ours, Path(results_dir) / "figures" / "min_vs_ctx.png", labels)
        if path:
            click.echo(f"figure: {path}")

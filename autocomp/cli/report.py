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
@click.option("--csv", "csv_path", type=click.Path(path_type=Path), default=None,
              help="Also write every cell, and each dataset's micro and macro averages, as one "
                   "CSV (CLIP_benchmark's `build`).")
@click.option("--exclude-relations", type=click.Path(path_type=Path), default=None,
              help="A text file of relations (one per line) left out of ARO VG-Relation's "
                   "macro accuracy, as the authors' notebook leaves out symmetric ones.")
def report(results_dir, table_format, models_file, figure, csv_path, exclude_relations):
    """Print Tables 4, 5, 6, 8, 9 and 13 (Auto-Comp layouts) for the results in RESULTS_DIR,
    and the tables of the other formats' results (SugarCrepe, CREPE, Winoground, ColorSwap,
    ARO, tables)."""
    from autocomp.report.tables import all_tables, delta_figure, load_results

    results = load_results(results_dir)
    labels = {}
    if models_file:
        from autocomp.eval.cells import model_labels

        labels = model_labels(models_file)
    from autocomp.report.external import EXTERNAL

    exclude = None
    if exclude_relations:
        from autocomp.core.errors import AutocompError

        try:
            text = exclude_relations.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise AutocompError(f"cannot read it ({exc})", file=exclude_relations) from None
        exclude = {line.strip() for line in text.splitlines() if line.strip()}
    for table in all_tables(results, labels, exclude):
        click.echo(table.render(table_format))
        click.echo()
    if csv_path:
        from autocomp.eval.summary import write_csv

        click.echo(f"csv: {write_csv(csv_path, results, labels)}")
    if figure:
        ours = [r for r in results if r.get("format", "run") not in EXTERNAL]
        path = delta_figure(ours, Path(results_dir) / "figures" / "min_vs_ctx.png", labels)
        if path:
            click.echo(f"figure: {path}")

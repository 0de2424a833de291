"""`autocomp report RESULTS_DIR...`: the Auto-Comp tables from eval results."""

from __future__ import annotations

from pathlib import Path

import click

from autocomp.cli import options


@click.command("report")
@click.argument("results_dirs", nargs=-1, required=True, type=click.Path(path_type=Path))
@options.table_format
@click.option("--models-file", type=click.Path(path_type=Path), default=None,
              help="Rows in this model-set YAML's order, with its labels (by default: the "
                   "order and labels each folder's models.yaml kept at eval time).")
@options.figures("Also draw the figures (into the first results folder's figures/).")
@click.option("--csv", "csv_path", type=click.Path(path_type=Path), default=None,
              help="Also write every cell, and each dataset's micro and macro averages, as one "
                   "CSV (CLIP_benchmark's `build`).")
@click.option("--exclude-relations", type=click.Path(path_type=Path), default=None,
              help="A text file of relations (one per line) left out of ARO VG-Relation's "
                   "macro accuracy, as the authors' notebook leaves out symmetric ones.")
@click.option("--html", "html_path", type=click.Path(path_type=Path), default=None,
              help="Also write one self-contained page: the tables, the figures and per "
                   "benchmark a gallery of failures, filterable by model and category.")
@click.option("--compare", nargs=2, default=None, metavar="MODEL_A MODEL_B",
              help="Also compare two models item by item on every benchmark both scored: "
                   "paired intervals of the difference, exact McNemar p, Holm-adjusted.")
@click.option("--gallery-size", type=click.IntRange(min=0), default=24, show_default=True,
              help="Failures shown per model and benchmark on the --html page.")
@click.option("--t2i", "t2i_dirs", multiple=True,
              type=click.Path(path_type=Path, file_okay=False),
              help="Also the tables and figure of an `autocomp t2i` output folder (Table 16 "
                   "layout, per aspect and N, the metrics against truth).")
@click.option("--agreement", is_flag=True,
              help="Also the rank agreement of the models between benchmarks: Kendall tau-b "
                   "and Spearman rho with bootstrap intervals over items and the range "
                   "leaving one model out (every pair, or each against --reference).")
@click.option("--reference", default=None, metavar="BENCHMARK",
              help="With --agreement: compare every benchmark with this one (a benchmark's "
                   "name, or a format's prefix such as 'sugarcrepe' pooling its subsets), "
                   "and each task x N pooled.")
@click.option("--include-baselines", is_flag=True,
              help="With --agreement: count the baselines (blind and reference scorers) as "
                   "models too (left out by default: they are not models of the zoo).")
@options.as_json
def report(results_dirs, table_format, models_file, figure, csv_path, exclude_relations,
           html_path, compare, gallery_size, t2i_dirs, agreement, reference,
           include_baselines, as_json):
    """Print every table there are results for in RESULTS_DIR(s): Tables 4-9 and 13 and the
    synthetic Winoground (Auto-Comp layouts), and the other formats' (SugarCrepe, CREPE,
    Winoground, ColorSwap, ARO, tables); then the tables left out and why. Several folders
    (two runs, a run and SugarCrepe) share the tables."""
    from autocomp.report.external import EXTERNAL
    from autocomp.report.gather import compared_note, gather, own_generator
    from autocomp.report.min_vs_ctx import min_vs_ctx_figure
    from autocomp.report.tables import report_tables

    results, labels = gather(list(results_dirs), models_file)
    results, compared = own_generator(results)

    exclude = None
    if exclude_relations:
        from autocomp.core.errors import AutocompError

        try:
            text = exclude_relations.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise AutocompError(f"cannot read it ({exc})", file=exclude_relations) from None
        exclude = {line.strip() for line in text.splitlines() if line.strip()}
    tables, skipped = report_tables(results, labels, exclude)
    if compared:
        from autocomp.report.generators import generator_tables

        skipped.append(compared_note(compared))
        tables += generator_tables(results, compared, labels, skipped)
    if compare:
        from autocomp.report.paired import compare_table

        tables.append(compare_table(results, *compare, labels))
    more_figures = []
    ranked = None
    if agreement or reference:
        from autocomp.report.ranks import comparisons
        from autocomp.report.ranks_table import agreement_table

        chosen = None
        if models_file:  # the models file chooses the zoo
            from autocomp.eval.modelset import model_entries

            chosen = [spec for spec, _ in model_entries(models_file)]
        ranked, left = comparisons(results, reference, include_baselines=include_baselines,
                                   models=chosen)
        tables.append(agreement_table(ranked, left, labels))
    for folder in t2i_dirs:
        from autocomp.t2i.summary import read_tables

        made, figure_path = read_tables(folder)
        tables += made
        if figure_path is not None:
            more_figures.append((figure_path, folder))
    print_tables(tables, skipped, table_format, as_json)
    say = (lambda line: click.echo(line, err=True)) if as_json else click.echo
    if csv_path:
        from autocomp.eval.summary import write_csv

        say(f"csv: {write_csv(csv_path, results, labels)}")
    if figure:
        ours = [r for r in results if r.get("format", "run") not in EXTERNAL]
        target = figure_folder(Path(results_dirs[0])) / "min_vs_ctx.png"
        try:
            path = min_vs_ctx_figure(ours, target, labels)
        except OSError as exc:  # a read-only results folder: the tables and page still come
            path = None
            click.echo(f"figure not written: cannot write {target.parent} "
                       f"({exc.strerror or exc}); --no-figure leaves it out", err=True)
        if path:
            say(f"figure: {path}")
        if ranked:
            _agreement_figure(ranked, figure_folder(Path(results_dirs[0])), labels, say)
    if html_path:
        from autocomp.report.html import report_page

        shown = report_page(html_path, list(results_dirs), results, labels, tables, skipped,
                            gallery_size, tuple(more_figures))
        say(f"html: {html_path} ({shown} failures shown)")


def print_tables(tables, skipped: list, table_format: str, as_json: bool) -> None:
    """The tables on stdout: as JSON, as one long-form CSV, or each in markdown / LaTeX;
    what was not printed, and why, after them (beside, not inside, CSV and JSON)."""
    if as_json:
        import json

        click.echo(json.dumps({"tables": [t.to_dict() for t in tables],
                               "not_printed": skipped}, indent=1))
        return
    if table_format == "csv":
        from autocomp.report.table_format import long_csv

        click.echo(long_csv(tables), nl=False)
    else:
        for table in tables:
            click.echo(table.render(table_format))
            click.echo()
    if skipped:  # a comment in LaTeX
        line = "Not printed: " + "; ".join(skipped)
        click.echo(f"% {line}" if table_format == "latex" else line,
                   err=table_format == "csv")


def _agreement_figure(rows, folder: Path, labels: dict, say) -> None:
    from autocomp.report.rank_figure import MOST_PANELS, agreement_figure

    try:
        made, left = agreement_figure(rows, folder / "agreement", labels)
    except OSError as exc:
        click.echo(f"figure not written: cannot write {folder} ({exc.strerror or exc})",
                   err=True)
        return
    if made:
        more = (f" (the first {MOST_PANELS} comparisons; {left} more are in the table only)"
                if left else "")
        say(f"figure: {made[0]}{more}")


def figure_folder(folder: Path) -> Path:
    """Where the report's figure goes: the results folder's figures/; given a run rather
    than its results, run/results/figures (the run's own figures/ are the pipeline's)."""
    from autocomp.core.run_paths import RunPaths

    if RunPaths(folder).config.is_file():
        return folder / "results" / "figures"
    return folder / "figures"

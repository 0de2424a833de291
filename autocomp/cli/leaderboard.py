"""`autocomp leaderboard RESULTS... --output SITE`: a static leaderboard page."""

from __future__ import annotations

from pathlib import Path

import click

from autocomp.cli import options


@click.command("leaderboard")
@click.argument("folders", nargs=-1, required=True, type=click.Path(path_type=Path))
@options.output(required=True, help="Folder for index.html, leaderboard.json and results/.")
@click.option("--models-file", type=click.Path(path_type=Path), default=None,
              help="Labels from this model-set YAML.")
@click.option("--title", default="autocomp leaderboard", show_default=True,
              help="The page's title.")
def leaderboard(folders, output, models_file, title):
    """Write one static page of every result in RESULTS folder(s) (or runs) that passes the
    results schema: a section per benchmark kind or dataset, per-skill, per-N and
    per-track (or per-subset) columns with 95% intervals, chance and the blind baselines
    pinned, sortable in the browser, verified results marked; its data as JSON and every
    result with its per-item predictions beside it (docs/leaderboard.md publishes it)."""
    from autocomp.cli.results import results_folder
    from autocomp.core.errors import AutocompError
    from autocomp.report.leaderboard import write_site

    try:
        got = write_site([results_folder(f) for f in folders], output, models_file, title)
    except OSError as exc:
        raise AutocompError(f"cannot write the site ({exc.strerror or exc})",
                            file=output) from None
    for left in got["left_out"]:
        click.echo(f"left out: {left['model']} on {left['benchmark']}: {left['why']}",
                   err=True)
    if not got["shown"]:
        raise AutocompError(f"no result passes the results schema ({len(got['left_out'])} "
                            "left out, above): nothing to show")
    click.echo(f"leaderboard: {got['path']} ({got['shown']} results in {got['sections']} "
               f"sections; {len(got['left_out'])} left out)")

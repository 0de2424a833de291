"""`autocomp leaderboard RESULTS... --output SITE`: a static leaderboard page."""

from __future__ import annotations

from pathlib import Path

import click

from autocomp.cli import options

RULES = ("strict", "aware", "argmax")


@click.command("leaderboard")
@click.argument("folders", nargs=-1, required=True, type=click.Path(path_type=Path))
@options.output(required=True, help="Folder for index.html, leaderboard.json and results/.")
@click.option("--models-file", type=click.Path(path_type=Path), default=None,
              help="The models' order and labels (a model-set YAML: `- spec: ...` with "
                   "`label: ...`); default: each folder's models.yaml, then short names.")
@click.option("--title", default="autocomp leaderboard", show_default=True,
              help="The page's title (and its browser tab's).")
@click.option("--ties", type=click.Choice(RULES), default=None,
              help="Show the results scored under this tie rule (the others are left out, "
                   "counted); default: the one rule of all results (a mix is refused).")
@click.option("--versus-ties", type=click.Choice(RULES), default="aware", show_default=True,
              help="The rule 'vs blind' compares each model and the best blind scorer "
                   "under (both under it, on the same items).")
@click.option("--verify", "k", type=click.IntRange(0, 10_000), default=0, show_default=True,
              help="Re-score K fresh random items of every shown result here and mark "
                   "those that match; 0: no mark (a .verified.json from elsewhere is "
                   "copied and counted as claimed, never marked).")
@click.option("--device", default="cpu", show_default=True, help="For --verify.")
def leaderboard(folders, output, models_file, title, ties, versus_ties, k, device):
    """Write one static page of every result in RESULTS folder(s) (or runs) that passes the
    results schema, under one tie rule: a section per benchmark kind or dataset, per-skill,
    per-N and per-track (or per-subset) columns with 95% intervals, a rank column, chance
    and the baselines pinned, sortable in the browser; its data as JSON and every result
    with its per-item predictions beside it (docs/leaderboard.md publishes it)."""
    from autocomp.cli.results import results_folder
    from autocomp.core.errors import AutocompError
    from autocomp.report.board_site import write_site

    try:
        got = write_site([results_folder(f) for f in folders], output, models_file, title,
                         ties, versus_ties, k, device)
    except OSError as exc:
        raise AutocompError(f"cannot write the site ({exc.strerror or exc})",
                            file=output) from None
    for left in got["left_out"]:
        what = "" if left["model"] == "-" else f"{left['model']} on {left['benchmark']}: "
        click.echo(f"left out: {what}{left['why']}", err=True)
    if not got["shown"]:
        raise AutocompError(f"no result passes the results schema ({len(got['left_out'])} "
                            "left out, above): nothing to show")
    if got["claimed"]:
        click.echo(f"{got['claimed']} result(s) carry a verification record from elsewhere: "
                   "not marked (--verify K re-scores them here)", err=True)
    click.echo(f"leaderboard: {got['path']} ({got['shown']} results in {got['sections']} "
               f"sections; {len(got['left_out'])} left out)")

"""`autocomp status DIR`: per stage expected / done / passed, and the survival funnel."""

from __future__ import annotations

import json
from pathlib import Path

import click


@click.command("status")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def status(run_dir, as_json):
    """Show how far RUN_DIR has come and what survived each stage."""
    from autocomp.report.summary import format_summary, summarize
    from autocomp.run import Run

    summary = summarize(Run.open(run_dir), figures=False, write=False)  # reads only
    click.echo(json.dumps(summary, indent=1) if as_json else format_summary(summary))

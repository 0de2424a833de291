"""`autocomp preview --task T --n N [--seed S] [--json]`."""

from __future__ import annotations

import json

import click

from autocomp.cli import options
from autocomp.concepts.load import load_task
from autocomp.preview import format_preview, preview


@click.command("preview")
@click.option("--task", "task_ref", required=True, help="Built-in task name or task YAML file.")
@click.option("--n", "n", type=int, required=True, help="Complexity N.")
@click.option("--seed", type=options.JSON_INT, default=0, show_default=True)
@click.option("--examples", type=int, default=4, show_default=True,
              help="Negatives shown per benchmark.")
@click.option("--max-negatives", type=options.COUNT, default=None,
              help="Refuse a benchmark with more negatives per concept than this "
                   "(default 100,000 or $AUTOCOMP_MAX_NEGATIVES).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def preview_cmd(task_ref, n, seed, examples, max_negatives, as_json):
    """Show one concept: its minimal caption, negatives with categories, and counts."""
    p = preview(load_task(task_ref), n, seed, examples, max_negatives)
    click.echo(json.dumps(p, indent=2) if as_json else format_preview(p))

"""`autocomp chance [--task T ...] [--json]`."""

from __future__ import annotations

import json

import click

from autocomp.concepts.files import builtin_tasks
from autocomp.concepts.load import load_task
from autocomp.negatives.chance import chance_table, format_chance_table


@click.command("chance")
@click.option("--task", "tasks", multiple=True,
              help="Task name or YAML file (repeatable); default: every built-in task.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of the table.")
def chance(tasks, as_json):
    """Chance levels computed from the negatives, in the layout of Table 4."""
    loaded = [load_task(t) for t in (tasks or builtin_tasks())]
    for task in loaded:
        if not task.counts_follow_n:
            raise click.UsageError(f"'{task.name}' is a scene task: its chance differs per "
                                   "concept (autocomp preview shows one; autocomp eval prints "
                                   "each benchmark's)")
    from autocomp.core.progress import Progress

    table = {}
    with Progress("chance", len(loaded), "task") as done:
        for task in loaded:  # one task at a time: a line every ~10 s off a terminal
            table.update(chance_table([task]))
            done.update(1, task.name)
    click.echo(json.dumps(table, indent=2) if as_json else format_chance_table(table))

"""`autocomp demo`: the embedded default job (CPU, no model weights)."""

from __future__ import annotations

from pathlib import Path

import click

from autocomp.concepts.sampling import write_concepts
from autocomp.concepts.task import builtin_tasks, load_task
from autocomp.negatives.chance import chance_table, format_chance_table
from autocomp.preview import format_preview, preview


@click.command("demo")
@click.option("--out", type=click.Path(path_type=Path), default=Path("runs/demo"),
              show_default=True, help="Folder for the concept records.")
@click.option("--count", type=int, default=100, show_default=True, help="Concepts per task and N.")
@click.option("--seed", type=int, default=0, show_default=True)
def demo(out, count, seed):
    """Sample concepts of every built-in task, preview one per N, print the chance table."""
    tasks = [load_task(p) for p in builtin_tasks().values()]
    for task in tasks:
        path, counts = write_concepts(task, task.n, count, seed, out)
        click.echo(f"== {task.name}: {sum(counts.values())} concepts -> {path}")
        for n in task.n:
            click.echo(format_preview(preview(task, n, seed, examples=3)))
        click.echo()
    click.echo(format_chance_table(chance_table(tasks)))

"""`autocomp concepts --task T --n N --count K --seed S --output DIR`."""

from __future__ import annotations

import click

from autocomp.cli import options
from autocomp.concepts.load import load_task
from autocomp.concepts.stage import write_concepts


@click.command("concepts")
@click.option("--task", "task_ref", required=True, help="Built-in task name or task YAML file.")
@click.option("--n", "ns", type=int, multiple=True,
              help="Complexity N (repeatable); default: every N the task allows.")
@click.option("--count", type=click.IntRange(min=1), required=True, help="Concepts per N.")
@click.option("--seed", type=options.JSON_INT, default=0, show_default=True)
@options.output(required=True)
def concepts(task_ref, ns, count, seed, output):
    """Sample concepts and write them as JSON-lines records under OUT/concepts/."""
    task = load_task(task_ref)
    path, counts = write_concepts(task, ns or task.n, count, seed, output)
    per_n = ", ".join(f"N={n}: {k}" for n, k in counts.items())
    click.echo(f"wrote {sum(counts.values())} concepts of task '{task.name}' ({per_n}) to {path}")

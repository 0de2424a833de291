"""`autocomp vocab list` and `autocomp vocab check FILE...`."""

from __future__ import annotations

from pathlib import Path

import click

from autocomp.concepts.files import builtin_tasks
from autocomp.concepts.load import load_task
from autocomp.concepts.parse import parse_task
from autocomp.concepts.vocab import (
    builtin_vocabularies,
    drawn_alike,
    drawn_alike_in,
    load_vocabulary,
    parse_vocabulary,
    read_yaml,
)
from autocomp.core.errors import AutocompError


@click.group()
def vocab():
    """Vocabularies and task definitions."""


@vocab.command("list")
def list_():
    """List the built-in vocabularies and tasks."""
    click.echo("Vocabularies:")
    for name, path in builtin_vocabularies().items():
        v = load_vocabulary(path)
        click.echo(f"  {name:<14} {v.kind:<11} {len(v):>4} entries  {v.description}")
    click.echo("Tasks:")
    for name, path in builtin_tasks().items():
        t = load_task(path)
        ns = ",".join(map(str, t.n))
        click.echo(f"  {name:<14} {t.kind:<10} objects={t.objects.name} values={t.values.name} "
                   f"N={ns}  {t.description}")
    click.echo("Scene tasks:")
    for name, path in builtin_tasks("scenes").items():
        t = load_task(path)
        attrs = ",".join(v.name for v in t.attributes)
        click.echo(f"  {name:<14} scene      objects={t.objects.name} attributes={attrs} "
                   f"relations={t.relations.name} cells={len(t.cells())}  {t.description}")


@vocab.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
def check(files):
    """Check vocabulary or task files; print one line per problem."""
    failed, said = 0, set()
    for path in files:
        try:
            data = read_yaml(path)
            if isinstance(data, dict) and data.get("kind") == "scene":
                from autocomp.concepts.scenes import parse_scene_task

                t = parse_scene_task(data, path)
                click.echo(f"ok: {path}: scene task '{t.name}' ({len(t.cells())} design "
                           f"cells, n_O in {list(t.n)})")
                _warn_alike(t)
            elif isinstance(data, dict) and "entries" not in data and "values" in data:
                t = parse_task(data, path)
                click.echo(f"ok: {path}: task '{t.name}' ({t.kind}, N={list(t.n)})")
                _warn_alike(t)
            else:
                v = parse_vocabulary(data, path)
                from autocomp.contracts import vocabulary_kind_problem

                broken = vocabulary_kind_problem(v, data["entries"])
                if broken:
                    raise AutocompError(broken, file=path)
                click.echo(f"ok: {path}: vocabulary '{v.name}' ({v.kind}, {len(v)} entries)")
                for line in drawn_alike(v):
                    click.echo(f"warning: {line}", err=True)
        except AutocompError as exc:
            if str(exc) in said:  # a task naming a vocabulary already reported above
                click.echo(f"error: {path}: names {exc.file}, whose problem is above",
                           err=True)
            else:
                click.echo(f"error: {exc}", err=True)
            said.add(str(exc))
            failed += 1
    if failed:
        raise SystemExit(1)


def _warn_alike(task) -> None:
    for line in drawn_alike_in(task):
        click.echo(f"warning: {line}", err=True)

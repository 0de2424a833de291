"""`autocomp status DIR`: per stage expected / done / passed, and the survival funnel."""

from __future__ import annotations

import json
from pathlib import Path

import click


@click.command("status")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--check", is_flag=True,
              help="One line and the exit status only, for job scripts: 0 every stage done, "
                   "3 unfinished (or not started), 4 another process is running a stage.")
def status(run_dir, as_json, check):
    """Show how far RUN_DIR has come and what survived each stage."""
    from autocomp.report.summary import format_summary, summarize
    from autocomp.run import Run

    if check:
        line, code = _check(run_dir)
        click.echo(line)
        raise SystemExit(code)

    summary = summarize(Run.open(run_dir), figures=False, write=False)  # reads only
    click.echo(json.dumps(summary, indent=1) if as_json else format_summary(summary))


def _check(run_dir: Path) -> tuple[str, int]:
    from autocomp.core import registry
    from autocomp.core.layout import RunLayout
    from autocomp.core.locks import held_by
    from autocomp.report.summary import stage_status
    from autocomp.run import Run

    layout = RunLayout(run_dir)
    if not layout.config.exists():
        return f"{run_dir}: not started", 3
    for name in registry.stage_names():
        pid = held_by(layout.stage_lock(name))
        if pid:
            return f"{run_dir}: stage {name} is being run by another process (pid {pid})", 4
    rows = stage_status(Run.open(run_dir))
    left = [f"{r['stage']} {r['done']:,}/{r['expected']:,}" for r in rows
            if r["expected"] is not None and r["done"] < r["expected"]]
    if not any(r["stage"] == "build" and not r.get("partial") for r in rows):
        left.append("build")
    if left:
        return f"{run_dir}: unfinished: {', '.join(left)}", 3
    return f"{run_dir}: done", 0

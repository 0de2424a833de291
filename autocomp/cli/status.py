"""`autocomp status DIR`: per stage expected / done / passed, and the survival funnel."""

from __future__ import annotations

import json
import time
from pathlib import Path

import click


@click.command("status")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--check", is_flag=True,
              help="One line and the exit status only, for job scripts: 0 every stage done, "
                   "3 unfinished (or not started), 4 another process is running a stage.")
@click.option("--wait", "wait", type=click.FloatRange(0, 7 * 86400), default=0.0,
              metavar="SECONDS",
              help="With --check: while a stage is held, wait up to this long for it to be "
                   "free (a lock file whose holder's heartbeat stopped counts as free).")
@click.option("--failure", is_flag=True,
              help="For job scripts: the failure a launched process recorded (the one a "
                   "retry cannot fix first), one line, exiting with its status; 0 if none.")
@click.option("--launch", default=None, metavar="ID",
              help="With --failure: only the failures of this launch (the id the job "
                   "script put in $AUTOCOMP_LAUNCH before launching; no clock is read).")
@click.option("--since", type=float, default=0.0, metavar="EPOCH",
              help="With --failure: only failures recorded at or after this time (this "
                   "host's clock against each worker's: prefer --launch across hosts).")
def status(run_dir, as_json, check, wait, failure, launch, since):
    """Show how far RUN_DIR has come and what survived each stage."""
    from autocomp.report.summary import format_summary, summarize
    from autocomp.run import Run

    if failure:
        from autocomp.runtime.failures import worst

        got = worst(run_dir, since, launch)
        if got is None:
            click.echo(f"{run_dir}: no failure recorded")
            raise SystemExit(0)
        again = (f" (the same failure ended {got['again']} earlier launch(es))"
                 if got.get("again") else "")
        rank = "" if got.get("rank") is None else f" on rank {got['rank']}"
        click.echo(f"exit {got['code']} ({got['meaning']}){rank}: {got['message']}{again}")
        raise SystemExit(int(got["code"]))
    if check:
        line, code = _check(run_dir, watch=wait > 0)
        deadline = time.monotonic() + wait
        while code == 4 and time.monotonic() < deadline:
            time.sleep(min(2.0, max(deadline - time.monotonic(), 0.0)))
            line, code = _check(run_dir, watch=True)
        if code == 4 and wait:
            line += f" (still, after {wait:g} s)"
        click.echo(line)
        raise SystemExit(code)

    summary = summarize(Run.open(run_dir), figures=False, write=False)  # reads only
    click.echo(json.dumps(summary, indent=1) if as_json else format_summary(summary))


def _check(run_dir: Path, watch: bool = False) -> tuple[str, int]:
    from autocomp.core import registry
    from autocomp.core.locks import held_by
    from autocomp.core.run_paths import RunPaths
    from autocomp.report.summary import stage_status
    from autocomp.run import Run

    paths = RunPaths(run_dir)
    if not paths.config.exists():
        return f"{run_dir}: not started", 3
    for name in registry.stage_names():
        holder = held_by(paths.stage_lock(name), watch)
        if holder:
            return f"{run_dir}: stage {name} is being run by another process ({holder})", 4
    rows = stage_status(Run.open(run_dir))
    left = [f"{r['stage']} {r['done']:,}/{r['expected']:,}" for r in rows
            if r["expected"] is not None and r["done"] < r["expected"]]
    if not any(r["stage"] == "build" and not r.get("partial") for r in rows):
        left.append("build")
    if left:
        return f"{run_dir}: unfinished: {', '.join(left)}", 3
    return f"{run_dir}: done", 0

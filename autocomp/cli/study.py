"""`autocomp study STUDY.yaml -o OUT`: a validity study in one command."""

from __future__ import annotations

from pathlib import Path

import click

from autocomp.cli import options


@click.command("study")
@click.argument("study_file", type=click.Path(path_type=Path))
@options.output(required=True, help="Folder for results/, figures/ and the model cache.")
@click.option("--device", default="cpu", show_default=True, help="cpu, cuda, ...")
def study(study_file, output, device):
    """Score a models file's models on a run's benchmarks and on the real benchmarks they
    are compared with (a study file: configs/studies/validity.yaml), then print the rank
    agreement of every benchmark against each real one and draw its figure. Run again to
    resume: what was scored is kept."""
    from autocomp.cli.report import print_tables
    from autocomp.report.study import read_study, run_study

    got = run_study(read_study(study_file), output, device,
                    say=lambda line: click.echo(line, err=True))
    print_tables(got["tables"], [], "markdown", False)
    for path in got["figures"]:
        click.echo(f"figure: {path}")

"""`autocomp review RUN_DIR`: the human validation page; `--report` for what it recorded."""

from __future__ import annotations

from pathlib import Path

import click

from autocomp.cli import options


@click.command("review")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--mode", type=click.Choice(["validate", "test"]), default="validate",
              show_default=True,
              help="validate: judge images against their captions (concordance with the "
                   "validators); test: answer Swap and Confusion items (human accuracy).")
@click.option("--per-cell", type=click.IntRange(min=1), default=None,
              help="Concepts per (task, N) in validate mode, items per benchmark in test "
                   "mode [default: 50, or what the run's sample was drawn with].")
@click.option("--seed", type=options.JSON_INT, default=None,
              help="Seed of the sample [default: 0, or the run's sample's].")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to serve on (another address lets other machines in).")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="Port (0: any free port).")
@click.option("--allow-host", multiple=True, metavar="NAME",
              help="Another name the page may be opened at (e.g. a reverse proxy's); "
                   "requests naming any other host are refused (DNS rebinding).")
@click.option("--review-dir", type=click.Path(path_type=Path), default=None,
              help="Where the sample and the judgments are kept [default: RUN_DIR/review]; "
                   "another folder for a run that is read-only or shared.")
@click.option("--report", "report_only", is_flag=True,
              help="Print concordance (validate) or human accuracy (test) and exit.")
@click.option("--t2i", "t2i_dir", type=click.Path(path_type=Path, file_okay=False),
              default=None, help="With --report: an `autocomp t2i` output folder that scored "
                                 "this run's images (-g run); prints how the Likert ratings "
                                 "correlate with each of its metrics.")
@options.table_format
def review(run_dir, mode, per_cell, seed, host, port, allow_host, review_dir, report_only,
           t2i_dir, table_format):
    """Serve a page that shows a balanced sample of RUN_DIR's images to human judges and
    records each judgment in RUN_DIR/review/judgments.jsonl (resumable; annotators by
    name). With --report, print what the judgments say."""
    from autocomp.review.judgments import Judgments
    from autocomp.review.sample import load_or_draw, sample_path
    from autocomp.run import Run

    run = Run.open(run_dir)
    folder = review_dir or run.paths.review
    judgments = Judgments(folder / "judgments.jsonl")
    if report_only:
        return _report(run, mode, judgments, table_format, sample_path(folder, mode), t2i_dir)
    _writable(folder, review_dir is None)
    sample = load_or_draw(run, mode, per_cell, seed, folder)
    from autocomp.review.server import Review, make_server

    try:
        server = make_server(Review(run.dir, sample, judgments), host, port,
                             allow_hosts=allow_host)
    except OSError as exc:
        from autocomp.core.errors import AutocompError

        raise AutocompError(f"cannot serve on {host}:{port} ({exc.strerror or exc}): pass "
                            "--port 0 for any free port") from None
    url = f"http://{host}:{server.server_address[1]}/"
    click.echo(f"review ({mode}, {len(sample['units'])} units, sample {sample['id']}): {url}")
    click.echo(f"judgments: {judgments.path}; stop with Ctrl-C (nothing is lost)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def _writable(folder: Path, default: bool) -> None:
    """The review folder can take the sample and judgments, or one line saying so (and,
    for the run's own folder, which option keeps them elsewhere)."""
    from autocomp.core.errors import AutocompError
    from autocomp.core.records import write_problem

    problem = write_problem(folder)
    if problem:
        hint = ": pass --review-dir DIR to keep the sample and judgments elsewhere" \
            if default else ""
        raise AutocompError(f"cannot write the review folder ({problem}){hint}", file=folder)


def _report(run, mode, judgments, fmt, path, t2i_dir=None):
    import json

    from autocomp.core.errors import AutocompError
    from autocomp.review.report import (
        accuracy_tables,
        concordance,
        concordance_tables,
        human_accuracy,
    )

    if not path.is_file():
        raise AutocompError(f"no {mode} review yet: run `autocomp review {run.dir} --mode "
                            f"{mode}` and judge some units", file=path)
    sample = json.loads(path.read_text(encoding="utf-8"))
    latest = judgments.latest(mode, sample["id"])
    if not latest:
        raise AutocompError(f"no {mode} judgments on this run's sample yet",
                            file=judgments.path)
    annotators = sorted({who for who, _ in latest})
    click.echo(f"{len(latest)} judgments by {len(annotators)} annotator(s) "
               f"({', '.join(annotators)}) on {len(sample['units'])} units\n")
    tables = (concordance_tables(concordance(sample, latest)) if mode == "validate"
              else accuracy_tables(human_accuracy(sample, latest)))
    if t2i_dir is not None and mode == "validate":
        from autocomp.review.report import rating_correlations, rating_table
        from autocomp.t2i.compare import image_scores

        scores = image_scores(t2i_dir)
        if not scores:
            raise AutocompError(f"no scored images in {t2i_dir} (run `autocomp t2i "
                                f"{run.dir} -g run -o {t2i_dir}` first)", file=t2i_dir)
        tables = [*tables, rating_table(rating_correlations(sample, latest, scores, run.dir))]
    for table in tables:
        click.echo(table.render(fmt))
        click.echo()

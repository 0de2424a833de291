"""`autocomp judges RUN_DIR`: answerers, detectors, the validation cascade and human
annotators measured against the exact truth of a run of the embedded generator."""

from __future__ import annotations

from pathlib import Path

import click

from autocomp.cli import options


@click.command("judges")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--judges", "judges_file", type=click.Path(path_type=Path, dir_okay=False),
              default=None, help="A YAML file of judges (name, answerer, detector); by "
                                 "default one: the run's own validators.")
@options.output(required=True, help="Folder for each judge's scores (resumed when run again).")
@options.prompt_selection("Images")
@click.option("--review-dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Human judgments of `autocomp review --mode validate` to set beside the "
                   "judges [default: RUN_DIR/review, when it holds some].")
@options.device
@click.option("--batch-size", type=click.IntRange(min=1), default=8, show_default=True,
              help="Images per scoring batch.")
@options.table_format
@options.as_json
def judges(run_dir, judges_file, output, patterns, tracks, per_group, review_dir, device,
           batch_size, table_format, as_json):
    """How often each judge says what the image shows, per skill (aspect) and N: precision
    and recall of the flaws it flags, disagreement with the truth and Cohen's kappa, each
    with its 95% interval; each judge after the first against the first (drift); human
    judgments of the run beside them."""
    import json

    from autocomp.report.judges import HUMANS, judge_tables, verdicts
    from autocomp.run import Run
    from autocomp.t2i.judging import JudgeSpec, read_judges, score_judges

    run = Run.open(run_dir)
    specs = read_judges(judges_file) if judges_file else [JudgeSpec("validators")]
    scored = score_judges(run.dir, specs, output, patterns, tuple(tracks) or None, per_group,
                          device, batch_size)
    rows, notes = [], []
    for name, records in scored.items():
        got, unknown = verdicts(records, name)
        rows += got
        if unknown:
            notes.append(f"{name}: {unknown:,} questions whose truth the drawing cannot tell "
                         "(a texture with no room to show, sizes drawn smaller) left out")
    names = list(scored)
    humans = _humans(run, review_dir, output / _folder(names[0]))
    if humans:
        rows += humans["rows"]
        names.append(HUMANS)
        notes.append(humans["note"])
    tables = judge_tables(rows, names, notes)
    if as_json:
        click.echo(json.dumps({"tables": [t.to_dict() for t in tables]}, indent=1))
        return
    click.echo("\n\n".join(t.render(table_format) for t in tables))


def _folder(name: str) -> str:
    from autocomp.t2i.generate import folder_of

    return folder_of(name)


def _humans(run, review_dir: Path | None, judge_folder: Path) -> dict | None:
    """The human majority verdicts of the run's validate review, joined by image to the
    records the first judge scored (the truth is in them; None where nobody judged)."""
    import json

    from autocomp.review.judgments import Judgments
    from autocomp.review.report import human_verdicts
    from autocomp.review.sample import sample_path
    from autocomp.t2i.compare import image_scores

    folder = review_dir or run.paths.review
    path = sample_path(folder, "validate")
    if not path.is_file():
        if review_dir is not None:
            from autocomp.core.errors import AutocompError

            raise AutocompError("no validate review here (run `autocomp review --mode "
                                "validate` first)", file=path)
        return None
    sample = json.loads(path.read_text(encoding="utf-8"))
    latest = Judgments(folder / "judgments.jsonl").latest("validate", sample["id"])
    if not latest:
        return None
    return human_verdicts(sample, latest, image_scores(judge_folder), run.dir)

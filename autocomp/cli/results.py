"""`autocomp results check DIR...`: every result holds what others need to trust it."""

from __future__ import annotations

from pathlib import Path

import click


@click.group("results")
def results():
    """Results others can trust: check them against the results schema."""


@results.command("check")
@click.argument("folders", nargs=-1, required=True, type=click.Path(path_type=Path))
def check(folders):
    """Check every result under FOLDERS (results folders, or runs: their results/) against
    the results schema: its fields and provenance (model weights, version, benchmark
    fingerprint, seed, prompt, tie rule, precision, hardware), its predictions file, and
    the accuracy those predictions give back. One line per problem; exit 1 if any."""
    from autocomp.core.errors import AutocompError
    from autocomp.eval.schema import check_folder

    total, bad = 0, 0
    for folder in folders:
        folder = results_folder(folder)
        found = check_folder(folder)
        if not found:
            raise AutocompError("no result files (*.json from `autocomp eval`)", file=folder)
        for path, problems in found.items():
            total += 1
            bad += bool(problems)
            for problem in problems:
                click.echo(f"{path}: {problem}")
    if bad:
        raise AutocompError(f"{bad} of {total} results fail the results schema (above)")
    click.echo(f"{total} results: every one whole (fields, provenance, predictions)")


def results_folder(folder: Path) -> Path:
    """A results folder as given, or a run's results/."""
    from autocomp.core.errors import AutocompError
    from autocomp.core.run_paths import RunPaths

    folder = Path(folder)
    if not folder.is_dir():
        raise AutocompError("no such folder", file=folder)
    if RunPaths(folder).config.is_file() and (folder / "results").is_dir():
        return folder / "results"
    return folder


@results.command("verify")
@click.argument("folders", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--sample", "k", type=click.IntRange(1, 10_000), default=20, show_default=True,
              help="Items re-scored per result, drawn at random each time (the record "
                   "keeps the seed and the items).")
@click.option("--seed", type=int, default=None,
              help="Draw the sample with this seed (to repeat a verification); default: "
                   "fresh randomness.")
@click.option("--source", type=click.Path(path_type=Path), default=None,
              help="Where the benchmarks are, when not where the results say (a moved run).")
@click.option("--model", "models", multiple=True, metavar="SPEC",
              help="Only the results of these models [default: all].")
@click.option("--device", default="auto", show_default=True, help="cpu, cuda, ...")
def verify_cmd(folders, k, seed, source, models, device):
    """Re-score a sample of each result's items from its recorded inputs (benchmark,
    model, tie rule, precision) with nothing cached; a result whose sample matches (the
    same outcomes, scores within 0.001) is marked verified (<benchmark>.verified.json,
    which the leaderboard reads)."""
    from autocomp.core.errors import AutocompError
    from autocomp.core.progress import Progress
    from autocomp.eval.schema import check_file, result_files
    from autocomp.eval.summary import read_cells
    from autocomp.eval.verify import verify

    todo = []
    for folder in folders:
        root = results_folder(folder)
        unread = {Path(p): why for p, why in read_cells(root)[1]}
        for path in result_files(root):
            problems = check_file(path)
            stray = None if problems else unread.get(path)
            if stray:  # a copy the report and leaderboard do not read either
                click.echo(f"left out: {path}: {stray}", err=True)
                continue
            if problems:
                raise AutocompError(f"fails the results schema first ({problems[0]}): "
                                    "`autocomp results check`", file=path)
            if not models or json_field(path, "model") in models:
                todo.append(path)
    if not todo:
        raise AutocompError("no result to verify")
    matched = 0
    with Progress("verify", len(todo), "result") as bar:
        for path in todo:
            got = verify(path, k, device, source, seed)
            matched += got["verified"]
            status = "verified" if got["verified"] else "DIFFERS: " + "; ".join(got["differ"][:3])
            click.echo(f"{got['model']} {got['benchmark']}: {got['items']} items {status}")
            bar.update(1)
    click.echo(f"{matched} of {len(todo)} results verified")
    if matched < len(todo):
        raise AutocompError(f"{len(todo) - matched} result(s) did not re-score as recorded")


def json_field(path: Path, key: str):
    import json

    return json.loads(Path(path).read_text(encoding="utf-8")).get(key)

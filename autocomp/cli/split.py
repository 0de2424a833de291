"""`autocomp split RUN_DIR [--corpus FILE --column NAME]`: train / val / test by concept,
and the seen / unseen labels of the concepts outside train (bench/splits.json)."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("split")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--corpus", type=click.Path(path_type=Path), default=None,
              help="Label test concepts against this training-caption corpus (.txt, .jsonl, "
                   ".csv, .tsv or .parquet) instead of the run's train split.")
@click.option("--column", default=None,
              help="The corpus's caption column (default: the config's split.corpus_column, "
                   "caption).")
def split(run_dir, corpus, column):
    """Assign a run's concepts to train / val / test (its config's split section) and label
    each concept outside train seen compounds, unseen compounds or unseen atoms."""
    from autocomp.bench.splits import SEEN, SPLITS, make_splits
    from autocomp.report.seen import against_text
    from autocomp.run import Run

    run = Run.open(run_dir)
    got = make_splits(run, corpus, column)
    counts = ", ".join(f"{got['counts'].get(s, 0):,} {s} ({100 * got['shares'][s]:.0f}%)"
                       for s in SPLITS)
    share = got.get("held_share")
    if share:  # distinct compounds, a relation and its inverse reading one
        held = (f"{share['held']:,} of {share['of']:,} distinct compounds held out "
                f"({100 * share['held'] / max(share['of'], 1):.1f}%, asked "
                f"{100 * run.config.split.hold_out_fraction:g}%)")
    else:
        held = f"{len(got['held_out']):,} held out"
    click.echo(f"concepts: {counts} (hold out: {got['hold_out']}, {held})")
    asked = " / ".join(f"{100 * got['fractions'][s]:.0f}%" for s in SPLITS)
    total = sum(got["counts"].values())
    if got["forced_test"] > got["fractions"]["test"] * total:
        click.echo(f"asked {asked}: {got['forced_test']:,} concepts hold a held-out "
                   f"{got['hold_out'].rstrip('s')} and must be test, more than test's share "
                   "holds; the free ones split train : val as asked")
    else:
        click.echo(f"asked {asked}: {got['forced_test']:,} concepts hold a held-out unit "
                   "(all in test); the shares hold, up to the spread of a hash")
    against = got["seen_against"]
    where = (against_text(against) if "corpus" in against
             else f"the {against['train']:,} train concepts")
    seen = ", ".join(f"{got['seen_counts'].get(s, 0):,} {s}" for s in SEEN)
    click.echo(f"outside train, against {where}: {seen}")
    click.echo(f"-> {run.paths.bench / 'splits.json'}")

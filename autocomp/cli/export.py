"""`autocomp export RUN_DIR --output DIR [--export-format benchmarks|hf|parquet|webdataset|
training]`."""

from __future__ import annotations

from pathlib import Path

import click

from autocomp.cli import options

FORMATS = ("benchmarks", "hf", "parquet", "webdataset", "training")


@click.command("export")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--export-format", "fmt", type=click.Choice(FORMATS), default="benchmarks",
              show_default=True,
              help="benchmarks: every benchmark of the run, a dataset config each, with "
                   "its negatives, a dataset card and harness adapters; hf, parquet, "
                   "webdataset: the released Auto-Comp layout (no negatives); training: the "
                   "train split as fine-tuning data (open_clip/NegCLIP CSV with hard and "
                   "image negatives, grouped batches, chat SFT JSON; docs/train.md).")
@options.output(required=True)
@click.option("--max-negatives", type=options.COUNT, default=None,
              help="Keep at most K negatives an item (a seeded subset, recorded); default: "
                   "all (benchmarks only).")
@click.option("--seed", type=options.JSON_INT, default=0, show_default=True,
              help="Seed of the --max-negatives subset.")
@click.option("--push-to-hub", "hub_id", default=None, metavar="REPO",
              help="Upload the folder to this Hugging Face dataset repo (benchmarks only).")
@click.option("--no-audit", is_flag=True, help="Leave the blind audit out of the card.")
@click.option("--split", type=click.Choice(("train", "val")), default="train",
              show_default=True, help="The split a training export is made of.")
@click.option("--batch-size", type=click.IntRange(min=2), default=256, show_default=True,
              help="Rows per grouped batch of a training export.")
def export(run_dir, fmt, output, max_negatives, seed, hub_id, no_audit, split, batch_size):
    """Write a run's benchmarks (or its validated samples, or its train split) for others
    to load."""
    click.echo(f"export {run_dir} as {fmt}")
    if fmt == "benchmarks":
        _benchmarks(run_dir, output, max_negatives, seed, hub_id, not no_audit)
        return
    if fmt == "training":
        from autocomp.publish.training import export_training

        got = export_training(run_dir, output, split, seed, batch_size, max_negatives)
        left = sum(got["negatives_left_out"].values())
        click.echo(f"{got['rows']:,} {split} images, {got['negatives']:,} hard negatives "
                   f"({left:,} left out: " + (", ".join(
                       f"{n:,} {why}" for why, n in got["negatives_left_out"].items())
                       or "none") + f"), {got['images_with_image_negative']:,} with an image "
                   f"negative, {got['batches']:,} batches, {got['sft_conversations']:,} SFT "
                   f"conversations -> {output}")
        return
    if max_negatives is not None or hub_id:
        raise click.UsageError("--max-negatives and --push-to-hub go with --export-format "
                               "benchmarks")
    from autocomp.bench.export import export_run

    got = export_run(run_dir, fmt, output)
    click.echo(f"{got['rows']} concepts ({got['minimal']} minimal, {got['contextual']} "
               f"contextual images) -> {got['out']} [{fmt}]")
    if got["tasks_bundled"]:
        click.echo(f"own tasks bundled in {Path(got['out']) / 'tasks'}: "
                   f"{', '.join(got['tasks_bundled'])} (`autocomp eval` reads them there)")


def _benchmarks(run_dir, output, max_negatives, seed, hub_id, audit):
    from autocomp.publish.export import export_benchmarks

    got = export_benchmarks(run_dir, output, max_negatives, seed, hub_id, audit)
    rows = sum(c["rows"] for c in got["configs"].values())
    ratio = got["bytes"] / got["images"]["bytes"] if got["images"]["bytes"] else 0
    click.echo(f"{len(got['configs'])} configs, {rows:,} items, {got['bytes']:,} bytes "
               f"({ratio:.2f} x the images' own {got['images']['bytes']:,}) -> {output}")
    click.echo(f"card: {Path(output) / 'README.md'}; load with "
               f"datasets.load_dataset('{output}', CONFIG)")
    if hub_id:
        from autocomp.publish.hub import push

        click.echo(push(Path(output), hub_id))

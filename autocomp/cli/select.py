"""`autocomp select RUN...`: model-selection metrics (Auto-Comp Tables 15 and 16)."""

from __future__ import annotations

from pathlib import Path

import click

from autocomp.cli import options


@click.command("select")
@click.argument("runs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--model", default="open_clip:ViT-B-32-quickgelu@openai", show_default=True,
              help="The dual encoder for semantic diversity and CLIPScore (any eval spec).")
@options.device
@options.batch_size
@click.option("--cache", "cache_dir", type=click.Path(path_type=Path), default=None,
              help="Keep the embeddings in this folder (default: in memory).")
@click.option("--all-captions", is_flag=True,
              help="Use every caption; by default each (task, N) group is cut to its "
                   "smallest size among the runs, since Distinct-n falls as a group grows.")
@click.option("--seed", type=options.JSON_INT, default=0, show_default=True,
              help="Seed of the draw that cuts the groups.")
@options.table_format
@options.as_json
def select(runs, model, device, batch_size, cache_dir, all_captions, seed, table_format,
           as_json):
    """Caption diversity of each run's LLM writer (Distinct-2/3/4, 1 - mean pairwise
    embedding similarity) and CLIPScore of its images, for RUNS side by side."""
    from autocomp.core.records import dumps
    from autocomp.report.select import Encoder, RunView, diversity_table, faithfulness_table

    views = [RunView(r) for r in runs]
    encoder = Encoder(model, device, batch_size, cache_dir)
    div, div_data = diversity_table(views, encoder, seed, equal=not all_captions)
    faith, faith_data = faithfulness_table(views, encoder)
    if as_json:
        click.echo(dumps({"model": model, "diversity": div_data, "faithfulness": faith_data}))
        return
    for table in (div, faith):
        click.echo(table.render(table_format))
        click.echo()

"""Options every command spells the same way (CLIP_benchmark's names where it has one:
`--output`, `--batch_size`, `--skip_existing`, `--model`, `--device`)."""

from __future__ import annotations

from pathlib import Path

import click

TABLE_FORMATS = ("md", "csv", "latex")
# integers that land in JSON files stay within what every JSON reader holds exactly
# (JavaScript's numbers: 2^53 - 1)
JSON_INT = click.IntRange(-(2 ** 53 - 1), 2 ** 53 - 1)
COUNT = click.IntRange(1, 2 ** 53 - 1)


def output(required: bool = False, help: str = "Output folder."):
    """-o/--output (also --out): where a command writes. No default when required: click
    >= 8.2 takes an explicit `default=None` as a value and would not enforce `required`."""
    default = {} if required else {"default": None}
    return click.option("-o", "--output", "--out", "output", type=click.Path(path_type=Path),
                        required=required, help=help, **default)


def _device(ctx, param, value):
    """Refuses a CUDA device the machine lacks; "auto" stays "auto" until a backend that
    runs on torch is built (models.devices.resolve_device), so a command whose scorers need
    no model never imports torch."""
    from autocomp.models.devices import checked_device

    return "auto" if value in (None, "auto") else checked_device(value)


device = click.option("--device", default="auto", show_default=True, callback=_device,
                      help="cpu, cuda, cuda:1 ...; auto: cuda when there is one, else cpu.")
batch_size = click.option("--batch-size", "--batch_size", "batch_size",
                          type=click.IntRange(min=1), default=None,
                          help="Images or captions per forward pass (default: the model "
                               "family's: 64 for dual encoders, 16 for chat LLMs, 8 for VLMs).")
skip_existing = click.option("--skip-existing", "--skip_existing", "skip_existing",
                             is_flag=True, help="Leave cells whose result file exists.")
as_json = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
precision = click.option("--precision", type=click.Choice(["fp32", "bf16", "fp16"]),
                         default="fp32", show_default=True,
                         help="Dual encoders' forward passes under torch.autocast in this "
                              "precision (cached apart from fp32 vectors; the paper's numbers "
                              "are fp32).")
workers = click.option("--workers", type=click.IntRange(min=0), default=None,
                       help="Threads that read and decode images while the model encodes "
                            "(default: one per core, at most 8).")


def figures(help: str):
    """--figure/--no-figure, also spelled --figures/--no-figures (report, compass report)."""
    return click.option("--figure/--no-figure", "--figures/--no-figures", "figure",
                        default=True, show_default=True, help=help)
table_format = click.option("--table-format", "table_format", type=click.Choice(TABLE_FORMATS),
                            default="md", show_default=True, help="How tables are printed.")


def source_format(help: str = "The benchmark's format (default: detected)."):
    """--source-format: which reader opens a benchmark (the registry's formats)."""
    from autocomp.core.registry import names

    return click.option("--source-format", "source_format", type=click.Choice(names("format")),
                        default=None, help=help)


def prompt_selection(what: str):
    """--tasks, --track, --per-group: which of a run's prompts (t2i) or images (judges)."""
    def apply(fn):
        fn = click.option("--per-group", type=click.IntRange(min=1), default=None,
                          help="At most this many concepts per task and N.")(fn)
        fn = click.option("--track", "tracks", multiple=True,
                          type=click.Choice(["minimal", "contextual"]),
                          help=f"{what} of these tracks only [default: both].")(fn)
        return click.option("--tasks", "patterns", multiple=True, metavar="GLOB",
                            help=f"{what} of these <task>-n<N> groups only (e.g. "
                                 "'shape_color-n*').")(fn)
    return apply

"""`autocomp audit SOURCE...`: blind scorers and structural checks per benchmark."""

from __future__ import annotations

import json
from pathlib import Path

import click

from autocomp.cli import options


@click.command("audit")
@click.argument("sources", nargs=-1, required=True, type=click.Path(path_type=Path))
@options.source_format("The sources' format (default: detected per source).")
@click.option("--images", type=click.Path(path_type=Path), default=None,
              help="The folder of the images (SugarCrepe, CREPE, ARO, tables): only for the "
                   "image checks (unreadable files, duplicate images); the text checks read "
                   "the captions alone.")
@click.option("--columns", default=None,
              help="With --source-format columns: image=COL,positive=COL,negatives=COL[+COL...].")
@click.option("--skip-missing", is_flag=True, help="Leave out items whose image is missing.")
@click.option("--benchmark", "patterns", multiple=True, help="Only benchmarks matching a glob.")
@click.option("--lm", default=None, help="Also a causal LM's log-likelihood (id or folder).")
@click.option("--choice", default=None,
              help="Also the multiple-choice LLM (blind:choice@MODEL: id, folder or "
                   "openai:MODEL).")
@options.device
@options.as_json
def audit_cmd(sources, source_format, images, columns, skip_missing, patterns, lm, choice, device,
              as_json):
    """How much of each benchmark a text-only model solves, and structural anomalies."""
    from autocomp.audit import audit, format_audit
    from autocomp.core.errors import AutocompError
    from autocomp.formats import open_suite
    from autocomp.formats.columns import parse_mapping

    extra = [f"blind:lm@{lm}"] * bool(lm) + [f"blind:choice@{choice}"] * bool(choice)
    suites = []
    for source in sources:  # all read first: a bad one stops before any model runs
        try:
            suites.append(open_suite(source, source_format, images, parse_mapping(columns),
                                     skip_missing, text_only=images is None))
        except AutocompError as exc:
            if len(sources) == 1 or str(source) in str(exc):
                raise
            raise AutocompError(f"{source}: {exc}") from None
    chosen = [s for s in (_matching(s, patterns) for s in suites) if s is not None]
    if not chosen:  # the patterns hold across all sources, not each
        known = ", ".join(b.name for s in suites for b in s.benchmarks)
        raise AutocompError(f"no benchmark matching {', '.join(patterns)} (known: {known})")
    rows = []
    for suite in chosen:
        rows += [{"source": str(suite.source), **r}
                 for r in audit(suite, extra, device, check_images=images is not None)]
    click.echo(json.dumps(rows, indent=1) if as_json else format_audit(rows))


def _matching(suite, patterns):
    from autocomp.core.errors import AutocompError

    try:
        return suite.select(patterns)
    except AutocompError:
        return None

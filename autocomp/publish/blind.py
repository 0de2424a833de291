"""The blind audit of what an export holds: the text-only scorers (audit.py) on every
config's items with the negatives the export keeps, so the card's evidence of no
text-only shortcut is about the published items, not the run's fuller ones."""

from __future__ import annotations

from autocomp.formats.suite import LoadedBenchmark, Suite
from autocomp.publish.rows import kept


def _subset(item: dict, k: int | None, seed: int) -> dict:
    if "negatives" not in item:
        return item
    negs = item["negatives"]
    keep = kept(item["id"], [n["caption"] for n in negs], k, seed)
    return {**item, "negatives": [negs[i] for i in keep]}


def exported_suite(run, configs: list, k: int | None, seed: int) -> Suite:
    """The run's benchmarks (`configs`) as the export has them (negatives subset when K is
    given)."""
    benches = []
    for config in configs:
        b = config.bench
        benches.append(LoadedBenchmark(
            b.name, b.task, b.n, b.track, b.kind,
            lambda b=b: (_subset(item, k, seed) for item in b.items())))
    return Suite("run", run.dir, run.dir, benches, run.tasks)


def audit_rows(run, configs: list, k: int | None, seed: int) -> list[dict]:
    from autocomp.audit import audit

    return audit(exported_suite(run, configs, k, seed))

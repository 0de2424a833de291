"""The stage contract: a list of work items with stable ids, processed in batches.

A stage names its work (`items`, the same list in the same order on every rank), turns a
batch of items into one record per item (`process`), and counts its merged records
(`stats`). The runner owns sharding, resume, batching, progress, merging and timing.
Heavy models are created on the first `process` call, never in `__init__`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from autocomp.runtime.run import Run


@dataclass(frozen=True)
class Item:
    id: str
    data: dict = field(default_factory=dict)


class Stage:
    name: str = ""
    batch_size: int = 16

    def __init__(self, run: Run, device: str = "cpu"):
        self.run = run
        self.device = device

    def items(self) -> list[Item]:
        raise NotImplementedError

    def process(self, batch: Sequence[Item]) -> list[dict]:
        raise NotImplementedError

    def stats(self, records: list[dict]) -> dict:
        return {"records": len(records)}

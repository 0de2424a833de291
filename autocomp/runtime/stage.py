"""The stage contract. The runtime knows no domain: it runs the Stage objects it is handed.

A stage has a `name` (its folder in the run directory), `needs` (the stages whose records
it reads: a stage whose input has not run is refused) and `parallel`:
- an ItemStage (parallel) names its work (`items`, the same list in the same order on
  every rank), turns a batch of items into one record per item (`process`) and counts its
  merged records (`stats`); the runner owns sharding, resume, batching, progress, merging
  and timing;
- a plain Stage runs once, in the launching process (`run_once`), and returns its
  counters.
Heavy models are created on the first `process` call, never in `__init__`, and dropped by
`release` when the stage ends (the runner calls it, then frees what the models held), so
one process never holds two stages' models at once.
"""

from __future__ import annotations

import gc
from collections.abc import Sequence
from dataclasses import dataclass, field

from autocomp.core.run_paths import RunPaths


class Deferred:
    """What `process` may return instead of its records: they are ready once `waits` are
    (e.g. image files a writer thread is encoding). The runner takes them after it has
    handed the stage the next batch, so the writing overlaps the next batch's work, and
    a killed process never records a file that was not written."""

    def __init__(self, records: list[dict], waits: Sequence = ()):
        self.records, self.waits = records, list(waits)

    def result(self) -> list[dict]:
        for w in self.waits:
            w.result()  # a failed write raises here, before anything is recorded
        return self.records


@dataclass(frozen=True)
class Item:
    id: str
    data: dict = field(default_factory=dict)


class Stage:
    name: str = ""
    needs: tuple[str, ...] = ()
    parallel: bool = False

    def __init__(self, run, device: str = "cpu"):
        self.run = run  # what the stage reads its inputs and settings from (domain-defined)
        self.device = device

    @property
    def paths(self) -> RunPaths:
        return self.run.paths

    def run_once(self) -> dict:
        """A stage that is not parallel does all its work here; returns its counters."""
        raise NotImplementedError

    def release(self) -> None:
        """Drop every reference this stage holds to its models (called when it ends)."""


def close(*backends) -> None:
    """Stop what a backend runs beside its references (a vLLM engine's worker process)."""
    for backend in backends:
        stop = getattr(backend, "close", None)
        if callable(stop):
            stop()


def free_memory() -> None:
    """Collect what released stages left (cycles included), drop torch.compile's caches
    (a compiled denoiser holds graphs and their buffers) and hand the CUDA cache back, so
    the next stage's models find the memory free. Touches torch only when it is loaded."""
    import sys

    dynamo = sys.modules.get("torch._dynamo")
    if dynamo is not None:
        dynamo.reset()
    gc.collect()
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()
        torch.cuda.empty_cache()


class ItemStage(Stage):
    parallel = True
    batch_size: int = 16

    def items(self) -> list[Item]:
        raise NotImplementedError

    def process(self, batch: Sequence[Item]) -> list[dict] | Deferred:
        raise NotImplementedError

    def cost(self, item: Item) -> float:
        """The item's relative cost: the runner balances the ranks' total cost."""
        return 1.0

    def stratum(self, item: Item) -> str:
        """A class of items (e.g. their track) that every rank should get an equal share of."""
        return ""

    def stats(self, records: list[dict]) -> dict:
        return {"records": len(records)}

    def disk_per_item(self) -> tuple[float, int]:
        """(bytes, files) one item writes beyond its records' lines: none by default."""
        return RECORD_BYTES, 0

    def batch_option(self) -> tuple[str, int]:
        """(the config field that sets the batch a GPU holds at once, its value): what a
        stage out of GPU memory names."""
        return f"{self.name}.batch_size", self.batch_size


RECORD_BYTES = 3000.0  # a record's line in a part file and again in merged.jsonl

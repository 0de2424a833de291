"""The captions stage: each concept's minimal caption, and its contextual caption written,
checked, retried and kept or dropped (Auto-Comp Phase 1)."""

from __future__ import annotations

from collections.abc import Sequence

from autocomp.captions.writers import write_with_retries
from autocomp.core.registry import instantiate
from autocomp.core.run_records import CaptionRecord
from autocomp.runtime.stage import Item, ItemStage


class CaptionStage(ItemStage):
    name = "captions"
    needs = ("concepts",)

    def __init__(self, run, device: str = "cpu"):
        super().__init__(run, device)
        self.batch_size = run.config.captions.batch_size
        self._writer = None

    @property
    def writer(self):
        if self._writer is None:
            self._writer = instantiate("writer", self.run.config.captions.writer, self.device)
        return self._writer

    def items(self) -> list[Item]:
        return [Item(c.id, {"concept": c}) for c in self.run.read("concepts")]

    def process(self, batch: Sequence[Item]) -> list[dict]:
        concepts = []
        for it in batch:
            c = it.data["concept"]
            concepts.append((it.id, c.scene, self.run.tasks[c.task], c.seed))
        written = write_with_retries(self.writer, concepts, self.run.config.captions.retries)
        out = []
        for cid, graph, task, _ in concepts:
            w = written[cid]
            passed = w["caption"] is not None
            out.append(CaptionRecord(
                cid, task.name, graph.n_objects, passed, task.minimal_caption(graph),
                w["caption"], w["check"], w["attempts"], w["tried"],
                "" if passed else f"contextual caption failed the check after "
                                  f"{w['attempts']} attempts").to_dict())
        return out

    def stats(self, records: list[dict]) -> dict:
        passed = sum(r["passed"] for r in records)
        return {"passed": passed, "dropped": len(records) - passed,
                "attempts": sum(r["attempts"] for r in records)}

"""The captions stage: each concept's minimal caption, and its contextual caption written,
checked, retried and kept or dropped (Auto-Comp Phase 1)."""

from __future__ import annotations

from collections.abc import Sequence

from autocomp.captions.writers import write_with_retries
from autocomp.core.registry import instantiate
from autocomp.core.run_records import CaptionRecord
from autocomp.runtime.stage import Item, ItemStage, close


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

    def batch_option(self) -> tuple[str, int]:
        """The LLM's own batch (the prompts it generates for at once) where the writer
        has one, else the stage's."""
        options = self.run.config.captions.writer.options
        if "batch_size" in options:
            return "captions.writer.options.batch_size", int(options["batch_size"])
        return "captions.batch_size", self.batch_size

    def release(self) -> None:
        close(self._writer)
        self._writer = None

    def items(self) -> list[Item]:
        """Every drawn concept; a swap partner is captioned with its original (its captions
        are derived from the original's, so the pair differs only in the swapped words)."""
        concepts = self.run.read("concepts")
        partners = {c.partner_of: c for c in concepts if c.partner_of}
        return [Item(c.id, {"concept": c, "partner": partners.get(c.id)})
                for c in concepts if not c.partner_of]

    def process(self, batch: Sequence[Item]) -> list[dict]:
        concepts = []
        for it in batch:
            c = it.data["concept"]
            concepts.append((it.id, c.scene, self.run.tasks[c.task], c.seed))
        written = write_with_retries(self.writer, concepts, self.run.config.captions.retries)
        out = []
        for it, (cid, graph, task, _) in zip(batch, concepts, strict=True):
            w = written[cid]
            passed = w["caption"] is not None
            partner = it.data.get("partner")
            out.append(CaptionRecord(
                cid, task.name, graph.n_objects, passed, task.minimal_caption(graph),
                w["caption"], w["check"], w["attempts"], w["tried"],
                "" if passed else f"contextual caption failed the check after "
                                  f"{w['attempts']} attempts",
                partner_captions(partner, graph, task, w) if partner else None).to_dict())
        return out

    def stats(self, records: list[dict]) -> dict:
        partners = [r["partner"] for r in records if r.get("partner")]
        if partners:
            return {**self._stats(records), "swap_partners": len(partners),
                    "swap_partners_contextual": sum(p["contextual"] is not None
                                                    for p in partners)}
        return self._stats(records)

    def _stats(self, records: list[dict]) -> dict:
        passed = sum(r["passed"] for r in records)
        return {"passed": passed, "dropped": len(records) - passed,
                "attempts": sum(r["attempts"] for r in records)}


def partner_captions(partner, graph, task, written: dict) -> dict:
    """The swap partner's captions: its minimal caption, and its original's contextual
    caption with the partner's words written into the matched spans, checked against the
    partner's graph (None when the original has none or the swapped words fail)."""
    from autocomp.language.check import CheckResult, check_caption
    from autocomp.negatives.contextual import substitute

    out = {"id": partner.id, "minimal": task.minimal_caption(partner.scene),
           "contextual": None, "check": None}
    if written["caption"] is None:
        return out
    text = substitute(written["caption"], CheckResult.from_dict(written["check"]),
                      partner.scene, task.noun)
    check = check_caption(text, partner.scene, task.noun, task.object_forms)
    if check.passed:
        out.update(contextual=text, check=check.to_dict())
    return out

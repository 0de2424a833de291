"""The validation stage: every image through the check cascade; evidence into the record."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from autocomp.core.registry import instantiate
from autocomp.core.run_records import ValidationRecord
from autocomp.runtime.stage import Item, ItemStage, close
from autocomp.validators.base import CheckResult
from autocomp.validators.checks import Sample, cascade, detect_all, validate_images


class ValidateStage(ItemStage):
    name = "validation"
    needs = ("images",)

    def __init__(self, run, device: str = "cpu"):
        super().__init__(run, device)
        cfg = run.config.validate
        self.batch_size = cfg.batch_size
        self._detector = self._answerer = None
        self.checks = cascade(run.config.validate.checks)

    def batch_option(self) -> tuple[str, int]:
        return "validate.batch_size", self.batch_size

    @property
    def detector(self):
        if self._detector is None:
            self._detector = instantiate("detector", self.run.config.validate.detector,
                                         self.device)
            if hasattr(self._detector, "want_masks"):  # segment only when a check reads it
                self._detector.want_masks(any(c.needs_masks for c in self.checks))
        return self._detector

    @property
    def answerer(self):
        if self._answerer is None:
            self._answerer = instantiate("answerer", self.run.config.validate.answerer,
                                         self.device)
        return self._answerer

    def release(self) -> None:
        close(self._detector, self._answerer)
        self._detector = self._answerer = None

    def items(self) -> list[Item]:
        concepts = {c.id: c for c in self.run.read("concepts")}
        return [Item(r.id, {"image": r, "concept": concepts[r.concept]})
                for r in self.run.read("images")]

    def stratum(self, item: Item) -> str:
        """Each rank gets an equal share of each track and object count (the VQA work)."""
        image = item.data["image"]
        return f"{image.track}-{image.n}"

    def process(self, batch: Sequence[Item]) -> list[dict]:
        arrays = {}
        for it in batch:
            try:
                arrays[it.id] = load_rgb(self.run.dir / it.data["image"].image)
            except (OSError, ValueError, SyntaxError) as exc:  # PIL raises all three
                arrays[it.id] = exc
        ready = [it for it in batch if not isinstance(arrays[it.id], Exception)]
        samples = [Sample(arrays[it.id], it.data["concept"].scene,
                          self.run.tasks[it.data["concept"].task], it.data["image"].track,
                          detections, self.answerer)
                   for it, detections in zip(ready, self._detect(ready, arrays), strict=True)]
        checked = dict(zip((it.id for it in ready), validate_images(samples, self.checks),
                           strict=True))
        loaded = getattr(self.detector, "evidence", None) if ready else None
        for results in checked.values():  # the detector's models and the dtypes they loaded
            if loaded is not None and results and results[0].name == "objects":
                results[0].evidence["detector"] = loaded()
        out = []
        for it in batch:
            img, concept = it.data["image"], it.data["concept"]
            results = checked.get(it.id)
            if results is None:
                reason = f"cannot read image {img.image}: {arrays[it.id]}"
                results = [CheckResult("objects", False, reason,
                                       {"error": type(arrays[it.id]).__name__})]
            failed = next((r.name for r in results if not r.passed), None)
            out.append(ValidationRecord(
                it.id, concept.id, self.run.tasks[concept.task].name, concept.n, img.track,
                img.image, failed is None, failed, [r.to_dict() for r in results],
                img.generator).to_dict())
        return out

    def _detect(self, ready: Sequence[Item], arrays: dict) -> list:
        """The detections of each readable image: in one call for a detector that takes a
        batch (GroundingDINO), image by image otherwise."""
        if not ready:
            return []
        return detect_all(self.detector, [arrays[it.id] for it in ready],
                          [list(it.data["concept"].scene.names) for it in ready])

    def stats(self, records: list[dict]) -> dict:
        failed: dict[str, int] = {}
        for r in records:
            if r["failed_at"]:
                failed[r["failed_at"]] = failed.get(r["failed_at"], 0) + 1
        return {"passed": sum(r["passed"] for r in records), "failed_at": failed}


def load_rgb(path) -> np.ndarray:
    from PIL import Image

    with Image.open(path) as im:
        im.load()
        return np.asarray(im.convert("RGB"))

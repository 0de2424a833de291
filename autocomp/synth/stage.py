"""The images stage: one image per concept and track (minimal, contextual), both from the
concept's seed. Images are written with a temp name and a rename, then recorded."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from autocomp.core.records import TRACKS, atomic_open
from autocomp.core.registry import instantiate
from autocomp.core.scene import SceneGraph
from autocomp.runtime.stage import Item, ItemStage
from autocomp.synth.base import ImageRequest


def save_png(image, path: Path) -> None:
    with atomic_open(path, "wb") as fh:
        image.save(fh, format="PNG")


class ImageStage(ItemStage):
    name = "images"
    needs = ("captions",)

    def __init__(self, run, device: str = "cpu"):
        super().__init__(run, device)
        self.batch_size = run.config.generate.batch_size
        self._generator = None

    @property
    def generator(self):
        if self._generator is None:
            self._generator = instantiate("generator", self.run.config.generate.generator,
                                          self.device)
        return self._generator

    def items(self) -> list[Item]:
        concepts = {r["id"]: r for r in self.run.records("concepts")}
        out = []
        for cap in self.run.records("captions"):
            if not cap["passed"]:
                continue
            for track in TRACKS:
                out.append(Item(f"{cap['id']}-{track}", {
                    "concept": concepts[cap["id"]], "track": track, "prompt": cap[track]}))
        return out

    def process(self, batch: Sequence[Item]) -> list[dict]:
        requests = []
        for it in batch:
            c = it.data["concept"]
            requests.append(ImageRequest(it.id, SceneGraph.from_dict(c["graph"]),
                                         self.run.tasks[c["task"]], it.data["track"], c["seed"],
                                         it.data["prompt"]))
        images = self.generator.generate(requests)
        out = []
        for it, req, gen in zip(batch, requests, images, strict=True):
            rel = self.layout.image(it.id)
            save_png(gen.image, self.run.dir / rel)
            out.append({"id": it.id, "concept": it.data["concept"]["id"],
                        "task": req.task.name, "n": req.graph.n_objects, "track": req.track,
                        "seed": req.seed, "image": rel, "width": gen.image.width,
                        "height": gen.image.height, "faults": gen.faults, "truth": gen.truth,
                        **({"generation": gen.meta} if gen.meta else {})})
        return out

    def stats(self, records: list[dict]) -> dict:
        faults: dict[str, int] = {}
        for r in records:
            for f in r["faults"]:
                faults[f["kind"]] = faults.get(f["kind"], 0) + 1
        return {"faults": faults}

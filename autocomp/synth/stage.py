"""The images stage: one image per concept and track (minimal, contextual), both from the
concept's seed. Images are written with a temp name and a rename, then recorded."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from autocomp.core.records import TRACKS, atomic_open
from autocomp.core.registry import instantiate
from autocomp.core.run_records import ImageRecord
from autocomp.core.workers import Workers
from autocomp.runtime.stage import Deferred, Item, ItemStage
from autocomp.synth.base import ImageRequest


def save_png(image, path: Path) -> None:
    with atomic_open(path, "wb") as fh:
        image.save(fh, format="PNG")


class PngWriter:
    """Encodes and writes PNGs on `threads` threads (0: at once, in the calling thread).
    PNG encoding of a 1024 px photo takes ~0.35 s of CPU, which a GPU would otherwise
    wait for between batches; Pillow releases the GIL while it compresses."""

    def __init__(self, threads: int = 4):
        self.workers = Workers(threads, "png")

    def save(self, image, path: Path):
        """A future whose result() returns once the file is whole on disk."""
        return self.workers.submit(save_png, image, path)


def png_bytes(generator, options: dict) -> float:
    """Bytes of one PNG of `generator` (a class) at the options' size: its stated
    png_bytes_per_pixel (1.0 where it states none) times the pixels."""
    size = int({**generator.defaults(), **options}.get("size", 1024))
    return float(getattr(generator, "png_bytes_per_pixel", 1.0)) * size * size


class ImageStage(ItemStage):
    name = "images"
    needs = ("captions",)

    def __init__(self, run, device: str = "cpu", writers: int = 4):
        super().__init__(run, device)
        self.batch_size = run.config.generate.batch_size
        self._generator = None
        self.writer = PngWriter(writers)

    @property
    def generator(self):
        if self._generator is None:
            self._generator = instantiate("generator", self.run.config.generate.generator,
                                          self.device)
        return self._generator

    def release(self) -> None:
        self._generator = None

    def items(self) -> list[Item]:
        concepts = {c.id: c for c in self.run.read("concepts")}
        out = []
        for cap in self.run.read("captions"):
            if not cap.passed:
                continue
            for track in TRACKS:
                out.append(Item(f"{cap.id}-{track}", {
                    "concept": concepts[cap.id], "track": track,
                    "prompt": cap.caption(track)}))
        return out

    def stratum(self, item: Item) -> str:
        """Each rank gets an equal share of both tracks (a scene costs more to draw)."""
        return item.data["track"]

    def process(self, batch: Sequence[Item]) -> Deferred:
        requests = []
        for it in batch:
            c = it.data["concept"]
            requests.append(ImageRequest(it.id, c.scene, self.run.tasks[c.task],
                                         it.data["track"], c.seed, it.data["prompt"]))
        images = self.generator.generate(requests)
        out, writes = [], []
        for it, req, gen in zip(batch, requests, images, strict=True):
            rel = self.paths.image(it.id)
            writes.append(self.writer.save(gen.image, self.run.dir / rel))
            out.append(ImageRecord(
                it.id, it.data["concept"].id, req.task.name, req.graph.n_objects, req.track,
                req.seed, rel, gen.image.width, gen.image.height, gen.faults, gen.truth,
                gen.meta or None).to_dict())
        return Deferred(out, writes)

    def disk_per_item(self) -> tuple[float, int]:
        """A PNG and its record: the mean size of up to 64 of this run's written images
        where there are 8 or more, else the generator's stated bytes per pixel."""
        from autocomp.core.registry import resolve
        from autocomp.runtime.stage import RECORD_BYTES

        written = []
        for path in (self.run.dir / "images").rglob("*.png"):
            written.append(path.stat().st_size)
            if len(written) >= 64:
                break
        if len(written) >= 8:
            return sum(written) / len(written) + RECORD_BYTES, 1
        spec = self.run.config.generate.generator
        return png_bytes(resolve("generator", spec.name), spec.options) + RECORD_BYTES, 1

    def batch_option(self) -> tuple[str, int]:
        return "generate.batch_size", self.batch_size

    def stats(self, records: list[dict]) -> dict:
        faults: dict[str, int] = {}
        for r in records:
            for f in r["faults"]:
                faults[f["kind"]] = faults.get(f["kind"], 0) + 1
        return {"faults": faults}


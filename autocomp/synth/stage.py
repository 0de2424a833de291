"""The images stage: one image per concept and track (minimal, contextual), both from the
concept's seed. Images are written with a temp name and a rename, then recorded."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product
from pathlib import Path

from autocomp.core.records import TRACKS, atomic_open
from autocomp.core.registry import instantiate
from autocomp.core.run_records import ImageRecord
from autocomp.core.workers import Workers
from autocomp.runtime.stage import Deferred, Item, ItemStage, close, free_memory
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
    """Every concept's image on each track, drawn by the run's generator and by each it is
    compared with (generate.compare: image "<concept>-<track>@<label>"), from one seed."""

    name = "images"
    needs = ("captions",)

    def __init__(self, run, device: str = "cpu", writers: int = 4):
        super().__init__(run, device)
        self.batch_size = run.config.generate.batch_size
        self._generators: dict = {}
        self.writer = PngWriter(writers)

    def generator_for(self, label: str | None):
        """The generator labelled `label` (None: the run's own), made on first use. One is
        held at a time: the one before is dropped and its memory freed first (two
        diffusion pipelines would not fit one GPU), and the items come generator by
        generator, so each is made once per rank."""
        if label not in self._generators:
            if self._generators:
                close(*self._generators.values())
                self._generators = {}
                free_memory()
            spec = dict(self.run.config.generate.generators())[label]
            self._generators[label] = instantiate("generator", spec, self.device)
        return self._generators[label]

    @property
    def generator(self):
        return self.generator_for(None)

    def release(self) -> None:
        self._generators = {}

    def items(self) -> list[Item]:
        concepts = {c.id: c for c in self.run.read("concepts")}
        labels = [label for label, _ in self.run.config.generate.generators()]
        passed = [cap for cap in self.run.read("captions") if cap.passed]
        return [Item(f"{cap.id}-{track}" + (f"@{label}" if label else ""), {
                    "concept": concepts[cap.id], "track": track, "generator": label,
                    "prompt": cap.caption(track)})
                for label, cap, track in product(labels, passed, TRACKS)]

    def stratum(self, item: Item) -> str:
        """Each rank gets an equal share of both tracks (a scene costs more to draw) and of
        each generator."""
        label = item.data["generator"]
        return item.data["track"] if label is None else f"{item.data['track']}@{label}"

    def process(self, batch: Sequence[Item]) -> Deferred:
        requests = []
        for it in batch:
            c = it.data["concept"]
            requests.append(ImageRequest(it.id, c.scene, self.run.tasks[c.task],
                                         it.data["track"], c.seed, it.data["prompt"]))
        images: dict[str, object] = {}
        for label in dict.fromkeys(it.data["generator"] for it in batch):  # in batch order
            mine = [req for it, req in zip(batch, requests, strict=True)
                    if it.data["generator"] == label]
            images.update(zip((r.id for r in mine), self.generator_for(label).generate(mine),
                              strict=True))
        out, writes = [], []
        for it, req in zip(batch, requests, strict=True):
            gen, rel = images[it.id], self.paths.image(it.id)
            writes.append(self.writer.save(gen.image, self.run.dir / rel))
            out.append(ImageRecord(
                it.id, it.data["concept"].id, req.task.name, req.graph.n_objects, req.track,
                req.seed, rel, gen.image.width, gen.image.height, gen.faults, gen.truth,
                gen.meta or None, it.data["generator"]).to_dict())
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


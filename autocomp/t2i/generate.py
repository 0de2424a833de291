"""The prompts of a run and the images each text-to-image model makes of them.

A prompt is a concept's caption on one track (`<concept id>-minimal`, `-contextual`); each
model draws K images of it, image k from seed `image_seed(concept seed, k)` (k = 0 is the
concept's own seed, as the run's images stage uses), recorded with the image. A model is
a generator backend of the registry with its options (the run config's `generate`
section: `procedural`, `diffusers` with a hub id or folder, ...), a folder of images
someone else made, named `<prompt id>-<k>.png` (or `<prompt id>.png` for k = 0), or the
run's own images (`run`: k = 0 only, with their truth where the generator recorded it; the
images a human review rates).

Images and their records go to `<out>/<model>/images/` and `<out>/<model>/images.jsonl`,
a record per finished batch: a killed command resumes without drawing an image twice.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from autocomp.core.errors import AutocompError
from autocomp.core.log import package_logger
from autocomp.core.own_files import open_own
from autocomp.core.records import TRACKS, read_jsonl

log = package_logger(__name__)
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp")


@dataclass(frozen=True)
class Prompt:
    id: str  # <concept id>-<track>
    concept: str
    task: str
    n: int
    track: str
    text: str
    seed: int  # the concept's
    graph: object  # its SceneGraph


@dataclass(frozen=True)
class Model:
    """A text-to-image model to score: a generator backend (name + options) or a folder."""
    name: str
    generator: object = None  # config.Backend
    folder: Path | None = None
    own: bool = False  # the run's own images

    def describe(self) -> str:
        if self.own:
            return "the run's own images"
        if self.folder is not None:
            return f"images in {self.folder}"
        opts = ", ".join(f"{k}={v}" for k, v in sorted(self.generator.options.items()))
        return self.generator.name + (f" ({opts})" if opts else "")


def image_seed(seed: int, k: int) -> int:
    """Image k's seed: the concept's for k = 0, then a hash of both."""
    if k == 0:
        return int(seed)
    return int(hashlib.sha256(f"t2i:{seed}:{k}".encode()).hexdigest()[:8], 16)


def prompts(run, patterns=(), tracks=TRACKS, per_group: int | None = None) -> list[Prompt]:
    """The run's prompts whose `<task>-n<N>` matches a glob of `patterns` (all when none),
    on `tracks`, at most `per_group` concepts per task and N (the first drawn)."""
    from fnmatch import fnmatch

    concepts = {c.id: c for c in run.read("concepts")}
    taken: dict[tuple, int] = {}
    out = []
    for cap in run.read("captions"):
        c = concepts.get(cap.id)
        if c is None or not cap.passed or c.partner_of:
            continue
        group = f"{c.task}-n{c.n}"
        if patterns and not any(fnmatch(group, p) for p in patterns):
            continue
        if per_group is not None and taken.get(group, 0) >= per_group:
            continue
        taken[group] = taken.get(group, 0) + 1
        for track in tracks:
            text = cap.caption(track)
            if text:
                out.append(Prompt(f"{c.id}-{track}", c.id, c.task, c.n, track, text, c.seed,
                                  c.scene))
    return out


def draw(model: Model, run, todo: list[Prompt], k: int, out: Path, device: str = "auto",
         batch_size: int = 8, progress=None) -> list[dict]:
    """Every (prompt, k) image of `model`, drawn now or found from before; one record
    each: id, prompt, k, seed, image (relative to `out`), faults, truth, generation."""
    from autocomp.runtime.launch import clean_orphans
    from autocomp.runtime.parts import repair

    folder = out / folder_of(model.name)
    records_path = folder / "images.jsonl"
    repair(records_path, "a records file")  # a line torn by a kill: its image is drawn again
    if folder.is_dir():
        clean_orphans(folder)  # half-written PNGs of a killed draw
    done = {r["id"]: r for r in read_jsonl(records_path)} if records_path.exists() else {}
    wanted = [(p, j) for p in todo for j in range(k)]
    if model.folder is not None:
        return _from_folder(model, wanted, folder)
    if model.own:
        return _from_run(run, wanted)
    missing = [(p, j) for p, j in wanted if f"{p.id}-{j}" not in done]
    if missing:
        _draw_missing(model, run, missing, out, device, batch_size, done, progress)
    left = [f"{p.id}-{j}" for p, j in wanted if f"{p.id}-{j}" not in done]
    if left:
        log.info(f"note   {model.name}: {len(left):,} of {len(wanted):,} images could not be "
                 f"drawn (e.g. {left[0]}); scored without them, tried again next time")
    return [done[f"{p.id}-{j}"] for p, j in wanted if f"{p.id}-{j}" in done]


def _draw_missing(model: Model, run, missing, out: Path, device, batch_size: int, done: dict,
                  progress) -> None:
    """Draw `missing` (prompt, k) images in batches, appending a record per image; a batch
    the generator refuses (no layout found for a seed, say) is drawn image by image, and an
    image it still refuses is logged and left out."""
    from autocomp.core.registry import instantiate
    from autocomp.synth.base import ImageRequest
    from autocomp.synth.stage import save_png

    gen = instantiate("generator", model.generator, device)
    folder = out / folder_of(model.name)
    (folder / "images").mkdir(parents=True, exist_ok=True)

    def made(batch):
        reqs = [ImageRequest(p.concept, p.graph, run.tasks[p.task], p.track,
                             image_seed(p.seed, j), p.text) for p, j in batch]
        try:
            return list(zip(batch, reqs, gen.generate(reqs), strict=True))
        except AutocompError as exc:
            if len(batch) > 1:
                return [got for one in batch for got in made([one])]
            log.info(f"skip   {model.name} {batch[0][0].id}-{batch[0][1]}: {exc}")
            return []

    with open_own(folder / "images.jsonl", "a", "a records file") as fh:
        for i in range(0, len(missing), batch_size):
            batch = missing[i:i + batch_size]
            for (p, j), req, image in made(batch):
                rel = f"{folder_of(model.name)}/images/{p.id}-{j}.png"
                save_png(image.image, out / rel)
                rec = {"id": f"{p.id}-{j}", "prompt": p.id, "k": j, "seed": req.seed,
                       "image": rel, "faults": image.faults, "truth": image.truth,
                       "generation": image.meta or None}
                fh.write(json.dumps(rec, sort_keys=True) + "\n")
                done[rec["id"]] = rec
            fh.flush()
            if progress is not None:
                progress(len(batch))


def _from_folder(model: Model, wanted, folder: Path) -> list[dict]:
    """Records of the images found in `model.folder` ({prompt id}-{k}.png, or
    {prompt id}.png for k = 0); missing images are counted and named, not guessed."""
    if not model.folder.is_dir():
        raise AutocompError(f"model '{model.name}': no folder {model.folder}")
    files, odd = _images_in(model.folder)
    out, missing = [], []
    for p, j in wanted:
        path = files.get(f"{p.id}-{j}") or (files.get(p.id) if j == 0 else None)
        if path is not None and not _readable(path):  # only the images asked for are read
            odd.setdefault("not a readable image", []).append(path.name)
            path = None
        if path is None:
            missing.append(f"{p.id}-{j}")
            continue
        out.append({"id": f"{p.id}-{j}", "prompt": p.id, "k": j, "seed": None,
                    "image": str(path), "faults": None, "truth": None,
                    "generation": {"folder": str(model.folder)}})
    for why, names in odd.items():
        log.info(f"note   {model.name}: {len(names):,} file(s) in {model.folder} left out: "
                 f"{why} (e.g. {names[0]})")
    if missing:
        log.info(f"note   {model.name}: {len(missing):,} of {len(wanted):,} images not in "
                 f"{model.folder} (e.g. {missing[0]}.png); scored without them")
    return out


def _images_in(folder: Path) -> tuple[dict[str, Path], dict[str, list[str]]]:
    """(stem -> path, why -> names left out) of the image files of `folder`: regular files
    inside it. A link out of the folder, a FIFO or a device (which would block a read) or a
    directory is left out and counted, never followed or fatal; whether a file is an image
    is asked of the ones scored (_readable)."""
    import os
    import stat

    root = folder.resolve()
    files: dict[str, Path] = {}
    odd: dict[str, list[str]] = {}
    for path in sorted(folder.iterdir()):
        if path.suffix.lower() not in IMAGE_SUFFIXES:
            continue
        try:
            target = path.resolve()
            mode = os.stat(target).st_mode
        except OSError as exc:  # a broken link, a loop of links
            odd.setdefault(f"cannot be looked up ({exc.strerror})", []).append(path.name)
            continue
        if not target.is_relative_to(root):
            odd.setdefault("a link out of the folder", []).append(path.name)
            continue
        if not stat.S_ISREG(mode):
            odd.setdefault("not a regular file", []).append(path.name)
            continue
        files[path.stem] = target
    return files, odd


def _readable(path: Path) -> bool:
    """Whether PIL reads `path` as an image (a text file named .png is not)."""
    from PIL import Image

    try:
        with Image.open(path) as image:
            image.verify()
    except Exception:  # noqa: BLE001 (PIL raises many error classes for a file that is no image)
        return False
    return True


def _from_run(run, wanted) -> list[dict]:
    """Records of the run's own images (image k = 0 of each prompt; the others and any
    image the run did not draw are counted)."""
    images = {r.id: r for r in run.read("images")}
    out, missing = [], 0
    for p, j in wanted:
        r = images.get(p.id) if j == 0 else None
        if r is None:
            missing += 1
            continue
        out.append({"id": f"{p.id}-0", "prompt": p.id, "k": 0, "seed": r.seed,
                    "image": str((run.dir / r.image).resolve()), "faults": r.faults,
                    "truth": r.truth or None, "generation": r.generation})
    if missing:
        log.info(f"note   run: {missing:,} of {len(wanted):,} images not in the run "
                 "(it draws one per prompt: k = 0)")
    return out


def folder_of(name: str) -> str:
    """The output folder's name for a model (file-name safe)."""
    from autocomp.eval.cache import slug

    return slug(name, 60)

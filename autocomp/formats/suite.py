"""What every format reader returns: a Suite of benchmarks (name, task, N, track, kind, a
stream of items), the folder their images lie under, and the helpers the readers share."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from autocomp.core.errors import AutocompError


@dataclass(frozen=True)
class LoadedBenchmark:
    name: str
    task: str
    n: int
    track: str
    kind: str
    load: Callable[[], Iterable[dict]] = field(compare=False, repr=False)

    @property
    def slug(self) -> str:
        return self.name.replace("/", "-")

    def items(self):
        yield from self.load()

    def fingerprint(self) -> str:
        """A digest of the items as read (ids, images, captions, everything), so a result
        can tell whether the benchmark it scored is still this one."""
        import hashlib

        import orjson

        h = hashlib.sha256()
        for item in self.items():
            h.update(orjson.dumps(item, option=orjson.OPT_SORT_KEYS,
                                  default=str) + b"\n")
        return h.hexdigest()[:32]


@dataclass
class Suite:
    format: str
    source: Path
    root: Path  # item image paths are relative to it (absolute ones must lie inside it)
    benchmarks: list
    tasks: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)

    def select(self, patterns) -> Suite:
        import fnmatch

        if not patterns:
            return self
        keep = [b for b in self.benchmarks
                if any(fnmatch.fnmatch(b.name, p) or fnmatch.fnmatch(b.slug, p)
                       for p in patterns)]
        if not keep:
            raise AutocompError(f"no benchmark matching {', '.join(patterns)} (known: "
                                f"{', '.join(b.name for b in self.benchmarks)})",
                                file=self.source)
        return Suite(self.format, self.source, self.root, keep, self.tasks, self.info)


def need_images(images, fmt: str, what: str):
    """The --images folder a format cannot do without, or one line asking for it."""
    if images is None:
        raise AutocompError(f"a {fmt} benchmark needs --images DIR (the folder of its {what} "
                            "images)")
    return images


class ImageRoot:
    """Resolves item image names under one folder: refuses paths outside it and files that
    are not regular files; collects missing ones (a one-line error, or skipped and counted
    with skip_missing)."""

    def __init__(self, root: Path, skip_missing: bool = False):
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise AutocompError("no such image folder", file=root)
        self.skip_missing = skip_missing
        self.missing: list[tuple[str, str]] = []  # (item id, name)

    def resolve(self, name: str, item_id: str, where) -> str | None:
        """The absolute path of `name`, or None when it is missing and skip_missing."""
        if not isinstance(name, str) or not name.strip() or "\0" in name:
            raise AutocompError(f"item {item_id}: expected an image file name, got "
                                f"{name[:80] if isinstance(name, str) else name!r}",
                                file=where)
        try:
            path = (self.root / name).resolve()
            if not path.is_relative_to(self.root):
                raise AutocompError(f"item {item_id}: image '{name}' lies outside the image "
                                    f"folder {self.root}", file=where)
            exists = path.exists()
        except OSError as exc:  # a name too long for the file system, a loop of links
            raise AutocompError(f"item {item_id}: image {name[:80]!r} cannot be looked up "
                                f"({exc.strerror or exc})", file=where) from None
        if not exists:
            self.missing.append((item_id, name))
            return None
        if not path.is_file():
            raise AutocompError(f"item {item_id}: image '{name}' is not a regular file",
                                file=where)
        return str(path)

    def check(self, total: int, where) -> None:
        if self.missing and not self.skip_missing:
            item, name = self.missing[0]
            raise AutocompError(f"{len(self.missing)} of {total} images are missing under "
                                f"{self.root} (first: '{name}', item {item}); pass "
                                "--skip-missing to leave those items out", file=where)


def normalise_space(text: str) -> str:
    """Leading, trailing and repeated whitespace (newlines too) to single spaces."""
    return " ".join(text.split())


def output_base(source: Path, fmt: str = "") -> Path:
    """Where results and the cache go by default: inside an autocomp run (format "run"),
    else beside the benchmark, never inside it (a dataset folder stays as it was
    downloaded): `data.jsonl` -> `data.autocomp/`, `~/data/sugarcrepe/` ->
    `~/data/sugarcrepe.autocomp/`, a hub id in the working folder
    (`hf:AutoComp/AutoComp-Minimal-N2-C` -> `./AutoComp-Minimal-N2-C.autocomp/`)."""
    text = str(source)
    if text.startswith("hf:") or not Path(text).exists():
        return Path.cwd() / f"{text.rstrip('/').rsplit('/', 1)[-1]}.autocomp"
    source = Path(source).resolve()
    if fmt == "run":
        return source
    name = source.name if source.is_dir() else source.stem
    return source.parent / f"{name}.autocomp"

"""Benchmarks in other projects' formats, read as the same items the harness scores.

A Suite is what `autocomp eval`, `autocomp audit` and `autocomp report` work on: a list of
benchmarks (name, task, N, track, kind, a stream of items), the folder image paths are
relative to, and what loading found (counts, normalised captions, flagged rows). An item
is {id, task, n, image, positive, negatives: [{caption, category, same_meaning}], ...}, the
layout of an autocomp run's bench files; an item may carry `crop` (x, y, w, h).

Formats (`--format`, detected when not given):
  run         an autocomp run directory (config.yaml + bench/)
  sugarcrepe  a folder with SugarCrepe's JSON files (add_att.json ... swap_obj.json)
  crepe       CREPE productivity CSVs (a folder of them, or one file)
  columns     any JSONL / JSON / CSV / parquet file with a column mapping
  autocomp-hf released Auto-Comp data or `autocomp export --format hf` folders (Hugging
              Face datasets; negatives rebuilt from the concept)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from autocomp.errors import AutocompError

FORMATS = ("run", "sugarcrepe", "crepe", "columns", "autocomp-hf")


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


def detect_format(source: Path) -> str:
    from autocomp.external.sugarcrepe import SUBSETS

    if str(source).startswith("hf:"):
        return "autocomp-hf"
    source = Path(source)
    if source.is_dir():
        if (source / "config.yaml").is_file() and (source / "bench").is_dir():
            return "run"
        if any((source / f).is_file() for f in ("dataset_dict.json", "state.json",
                                                 "dataset_info.json")):
            return "autocomp-hf"
        for folder in (source, source / "data"):
            if any((folder / f"{s}.json").is_file() for s in SUBSETS):
                return "sugarcrepe"
        if any(source.rglob("*.csv")):
            return "crepe"
    elif source.suffix.lower() == ".csv":
        return "crepe"
    elif source.suffix.lower() in (".jsonl", ".json", ".parquet"):
        return "columns"
    raise AutocompError(f"cannot tell its format: give --format ({', '.join(FORMATS)})",
                        file=source)


def open_suite(source, fmt: str | None = None, images=None, columns: dict | None = None,
               skip_missing: bool = False) -> Suite:
    """The benchmarks of `source` in format `fmt` (detected when None); `images` is the
    folder their image files are under (COCO val2017 for SugarCrepe, Visual Genome's
    images for CREPE)."""
    fmt = fmt or detect_format(source)
    if fmt == "autocomp-hf":
        from autocomp.external.autocomp_hf import load_autocomp_hf

        return load_autocomp_hf(source, Path(images) if images else None)
    if fmt == "columns" and str(source).startswith("hf:"):
        from autocomp.external.columns import load_columns

        return load_columns(source, columns or {}, Path(images) if images else None,
                            skip_missing)
    source = Path(source)
    if not source.exists():
        raise AutocompError("no such file or folder", file=source)
    if fmt == "run":
        from autocomp.eval.benchmarks import find_benchmarks
        from autocomp.runtime.run import Run

        run = Run.open(source)
        return Suite("run", run.dir, run.dir, find_benchmarks(run.dir), run.tasks)
    if fmt in ("sugarcrepe", "crepe") and images is None:
        raise AutocompError(f"a {fmt} benchmark needs --images DIR (the folder of its "
                            f"{'COCO val2017' if fmt == 'sugarcrepe' else 'Visual Genome'} "
                            "images)")
    if fmt == "sugarcrepe":
        from autocomp.external.sugarcrepe import load_sugarcrepe

        return load_sugarcrepe(source, Path(images), skip_missing)
    if fmt == "crepe":
        from autocomp.external.crepe import load_crepe

        return load_crepe(source, Path(images), skip_missing)
    if fmt == "columns":
        from autocomp.external.columns import load_columns

        return load_columns(source, columns or {}, Path(images) if images else None,
                            skip_missing)
    raise AutocompError(f"unknown format '{fmt}' (known: {', '.join(FORMATS)})")


def output_base(source: Path) -> Path:
    """Where results and the cache go by default: the folder itself, beside a file
    (`data.jsonl` -> `data.autocomp/`), or for a hub id in the working folder
    (`hf:AutoComp/AutoComp-Minimal-N2-C` -> `./AutoComp-Minimal-N2-C.autocomp/`)."""
    text = str(source)
    if text.startswith("hf:") or not Path(text).exists():
        return Path.cwd() / f"{text.rstrip('/').rsplit('/', 1)[-1]}.autocomp"
    source = Path(source)
    return source if source.is_dir() else source.parent / f"{source.stem}.autocomp"


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
        if not isinstance(name, str) or not name.strip():
            raise AutocompError(f"item {item_id}: expected an image file name, got {name!r}",
                                file=where)
        path = (self.root / name).resolve()
        if not path.is_relative_to(self.root):
            raise AutocompError(f"item {item_id}: image '{name}' lies outside the image "
                                f"folder {self.root}", file=where)
        if not path.exists():
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

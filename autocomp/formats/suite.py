"""What every format reader returns: a Suite of benchmarks (name, task, N, track, kind, a
stream of items), the folder their images lie under, and the helpers the readers share."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from autocomp.core.errors import AutocompError

# a format plugin imports its helpers from here (docs/extending.md): re-exported
from autocomp.formats.images import ImageCells as ImageCells
from autocomp.formats.images import ImageRoot as ImageRoot
from autocomp.formats.images import crop_problem as crop_problem
from autocomp.formats.images import image_root as image_root


@dataclass(frozen=True)
class LoadedBenchmark:
    name: str
    task: str
    n: int
    track: str
    kind: str
    load: Callable[[], Iterable[dict]] = field(compare=False, repr=False)
    # how its results aggregate: {"by": breakdown, "min_count": k} for a macro accuracy,
    # {"seed_group": name, "seed": k} for one seed of a randomly perturbed benchmark
    meta: dict = field(default_factory=dict, compare=False, repr=False)
    generator: str | None = None  # a compared generator's images (generate.compare)

    @property
    def slug(self) -> str:
        return self.name.replace("/", "-")

    def items(self):
        yield from self.load()

    def fingerprint(self) -> str:
        """A digest of the items as read (ids, images, captions, everything), so a result
        can tell whether the benchmark it scored is still this one."""
        digest = ItemDigest()
        for item in self.items():
            digest.add(item)
        return digest.hexdigest()


class ItemDigest:
    """LoadedBenchmark.fingerprint item by item: eval takes it while it scores, instead of
    reading (and enumerating the negatives of) every item once more before."""

    def __init__(self):

        self.h = hashlib.sha256()

    def add(self, item: dict) -> None:
        import orjson

        self.h.update(orjson.dumps(item, option=orjson.OPT_SORT_KEYS, default=str) + b"\n")

    def hexdigest(self) -> str:
        return self.h.hexdigest()[:32]


@dataclass
class Suite:
    format: str
    source: Path
    root: Path  # item image paths are relative to it (absolute ones must lie inside it)
    benchmarks: list
    tasks: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)
    also: tuple = ()  # other folders its images lie in (embedded ones beside --images)

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
        return Suite(self.format, self.source, self.root, keep, self.tasks, self.info,
                     self.also)

    def first(self, rows: int) -> Suite:
        """Each benchmark cut to its first `rows` items, as read (VL-CheckList's
        evaluate.py scores the first MAX_NUM / 2 rows of each file); the cut is stated in
        the info every result carries, and the items' fingerprint is of the cut."""
        import dataclasses
        import itertools

        cut = [dataclasses.replace(b, load=lambda b=b: itertools.islice(b.load(), rows))
               for b in self.benchmarks]
        return Suite(self.format, self.source, self.root, cut, self.tasks,
                     {**self.info, "first_rows": rows}, self.also)


def only_items(bench, ids) -> LoadedBenchmark:
    """A benchmark (of any format) cut to the items with these ids, in their order."""
    return LoadedBenchmark(bench.name, bench.task, bench.n, bench.track, bench.kind,
                           lambda: (it for it in bench.items() if it["id"] in ids),
                           getattr(bench, "meta", None) or {},
                           getattr(bench, "generator", None))


def own_files(folder: Path, pattern: str) -> list[Path]:
    """The regular files under `folder` matching `pattern` (rglob), sorted, leaving out any
    that lead out of it (a symlink to elsewhere): a folder reader reads its own files."""
    root = Path(folder).resolve()
    return sorted(p for p in Path(folder).rglob(pattern)
                  if p.is_file() and p.resolve().is_relative_to(root))


def json_rows(path: Path) -> list:
    """The objects of a JSON file holding one list (ColorSwap's data/test.json); a UTF-8
    byte-order mark is allowed; anything else is one error naming the file."""
    import json

    raw = path.read_bytes()
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        rows = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise AutocompError(f"not UTF-8 text (byte {exc.start + 1})", file=path) from None
    except json.JSONDecodeError as exc:
        raise AutocompError(f"not valid JSON: {exc}", file=path) from None
    if not isinstance(rows, list):
        raise AutocompError(f"expected a JSON list of rows, got {type(rows).__name__}",
                            file=path)
    return rows


def parquet_rows(path: Path, batch_size: int = 64):
    """The rows of a parquet file as dicts, read in batches; a file that is not parquet, or
    is cut short (a truncated download), is one error naming it, not pyarrow's traceback."""
    from autocomp.core.backend import require

    pq = require("pyarrow.parquet", "formats", "parquet")
    import pyarrow as pa

    try:
        for batch in pq.ParquetFile(path).iter_batches(batch_size=batch_size):
            yield from batch.to_pylist()
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise AutocompError(f"not a readable parquet file ({' '.join(str(exc).split())[:200]};"
                            " a download cut short?)", file=path) from None


def jsonl_rows(path: Path):
    """The objects of a JSONL file (a UTF-8 byte-order mark at its start is allowed); a
    line that is not UTF-8 or not JSON is one error naming it."""
    import json

    with open(path, "rb") as fh:
        for i, raw in enumerate(fh, start=1):
            if i == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise AutocompError(f"not UTF-8 text (byte {exc.start + 1} of the line: "
                                    f"{raw[exc.start:exc.start + 1]!r}); save the file as "
                                    "UTF-8", file=path, entry=f"line {i}") from None
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as exc:
                    raise AutocompError(f"not valid JSON: {exc}", file=path,
                                        entry=f"line {i}") from None


def undecoded(ds):
    """A datasets.Dataset whose Image columns give {bytes, path}, not decoded images."""
    from datasets import Image

    for name, feature in ds.features.items():
        if isinstance(feature, Image):
            ds = ds.cast_column(name, Image(decode=False))
    return ds


def normalise_space(text: str) -> str:
    """Leading, trailing and repeated whitespace (newlines too) to single spaces."""
    return " ".join(text.split())


def spaced(*texts) -> bool:
    """Whether any caption as released changes under normalise_space (the audit's
    Whitespace column counts the items a reader flags with it: item["raw_spaces"])."""
    return any(isinstance(t, str) and t != normalise_space(t) for t in texts)


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

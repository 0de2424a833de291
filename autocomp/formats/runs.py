"""The benchmarks of a run directory, read as a stream of items."""

from __future__ import annotations

import fnmatch
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from autocomp.bench.store import expand, is_compact
from autocomp.core.errors import AutocompError
from autocomp.core.families import contract_example
from autocomp.core.records import numbered_jsonl
from autocomp.core.run_paths import RunPaths
from autocomp.core.scene import SceneGraph


@dataclass
class Selection:
    """The items of one split of a run (bench/splits.json): which are kept, each labelled
    with its split and, outside train, its seen label (item["breakdown"]["seen"]); what
    was left out is counted per split as the items are read."""

    wanted: tuple[str, ...]
    split_of: dict
    seen_of: dict
    against: dict
    digest: str = ""  # of the split and the labels (a benchmark's fingerprint holds it)
    left_out: dict = field(default_factory=dict)
    kept: int = 0

    def __post_init__(self):
        if not self.digest:
            import hashlib
            import json

            text = json.dumps([self.wanted, self.split_of, self.seen_of], sort_keys=True)
            self.digest = hashlib.sha256(text.encode()).hexdigest()[:16]

    def split(self, row: dict, where: str) -> str:
        got = self.split_of.get(row.get("concept"))
        if got is None:
            raise AutocompError(f"concept {row.get('concept')!r} has no split in "
                                "bench/splits.json (written before the run grew?): "
                                "`autocomp split RUN` writes it again", file=where)
        return got

    def summary(self) -> dict:
        """What the result says of its selection."""
        return {"split": "+".join(self.wanted), "items": self.kept,
                "left_out": dict(sorted(self.left_out.items())),
                "seen_against": self.against}


@dataclass(frozen=True)
class Benchmark:
    name: str  # "<task>-n<N>/<track>-<kind>", "...@<label>" on a compared generator
    task: str
    n: int
    track: str
    kind: str
    path: Path
    tasks: dict | None = field(default=None, compare=False, repr=False)  # name -> Task

    @property
    def slug(self) -> str:
        return self.name.replace("/", "-")

    max_negatives: int | None = field(default=None, compare=False, repr=False)
    selection: Selection | None = field(default=None, compare=False, repr=False)
    # the run whose cache/negatives/ keeps what its compact rows enumerate (None: none)
    run_dir: Path | None = field(default=None, compare=False, repr=False)
    generator: str | None = None  # the compared generator whose images it holds (label)

    def fingerprint(self) -> str:
        """A digest of the stored file (and of what its compact rows are enumerated under),
        so a result can tell whether the benchmark it scored is still this one."""
        import hashlib

        head = f"n={self.n} max_negatives={self.max_negatives}\n"
        if self.selection is not None:  # another split, or new labels: another benchmark
            head += f"selection={self.selection.digest}\n"
        h = hashlib.sha256(head.encode())
        with open(self.path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        return h.hexdigest()[:32]

    def rows(self) -> Iterator[tuple[str, dict]]:
        """("file:line", stored row) for each row of the file, compact or full."""
        for number, row in numbered_jsonl(self.path):
            if not isinstance(row, dict):
                raise AutocompError(f"expected an item (a JSON object), got "
                                    f"{type(row).__name__}", file=f"{self.path}:{number}")
            yield f"{self.path}:{number}", row

    def expand(self, row: dict, where: str) -> dict:
        """The full item of a stored row: a compact row's negatives are enumerated again,
        after checking it against this file's N and the run's build.max_negatives."""
        if not is_compact(row):
            return row
        task = (self.tasks or {}).get(row.get("task")) if isinstance(row.get("task"),
                                                                     str) else None
        if task is None:
            raise AutocompError(f"a compact item of task {str(row.get('task'))[:60]!r} needs "
                                "the run's config to enumerate its negatives", file=where)
        return expand(row, task, n=self.n, limit=self.max_negatives, where=where)

    def items(self) -> Iterator[dict]:
        """The items as the full store holds them (compact rows are expanded, once per
        benchmark: bench/expanded.py); with a selection, those of its splits only, each
        labelled."""
        from autocomp.bench.expanded import expanded

        sel = self.selection
        rows = self.rows() if sel is None else self._selected(sel)
        first = next(rows, None)
        if first is None:
            return
        rows = itertools.chain([first], rows)
        cache = self._cache_file() if is_compact(first[1]) else None
        for item in expanded(rows, self.expand, cache):
            if sel is None:
                yield item
                continue
            split = sel.split_of[item["concept"]]  # a copy: the expansion may be shared
            seen = sel.seen_of.get(item["concept"])
            yield {**item, "split": split, **({} if seen is None else {
                "breakdown": {**(item.get("breakdown") or {}), "seen": seen}})}

    def _selected(self, sel: Selection) -> Iterator[tuple[str, dict]]:
        """The rows of the selection's splits, the others counted."""
        sel.left_out, sel.kept = {}, 0
        for where, row in self.rows():
            split = sel.split(row, where)
            if split not in sel.wanted:
                sel.left_out[split] = sel.left_out.get(split, 0) + 1
                continue
            sel.kept += 1
            yield where, row

    def _cache_file(self) -> Path | None:
        task = (self.tasks or {}).get(self.task)
        if self.run_dir is None or task is None:
            return None
        from autocomp.bench.expanded import cache_file, cache_key
        from autocomp.negatives.generate import negative_limit

        split = "all" if self.selection is None else "+".join(self.selection.wanted)
        # the limit in force ($AUTOCOMP_MAX_NEGATIVES too): a row above it is refused
        limit = negative_limit(self.max_negatives)
        return cache_file(self.run_dir, self.name, split,
                          cache_key(f"{self.fingerprint()} limit={limit}", task))


@contract_example("small_run")
def open_run(source, images, columns, skip_missing: bool, text_only=False):
    """An autocomp run directory as a Suite (its images lie inside it)."""
    from autocomp.formats.suite import Suite
    from autocomp.run import Run

    run = Run.open(source)
    return Suite("run", run.dir, run.dir, find_benchmarks(run.dir), run.tasks)


def find_benchmarks(run_dir: Path, patterns=(), split: str | None = "test") -> list[Benchmark]:
    """Every benchmark file under RUN_DIR/bench (or matching one of `patterns`). A run
    with splits (bench/splits.json) gives the items of `split` (train, val, test, or all),
    labelled seen / unseen."""
    paths = RunPaths(run_dir)
    bench = paths.bench
    tasks = limit = None
    if paths.config.is_file():
        from autocomp.run import Run

        run = Run.open(Path(run_dir))
        tasks, limit = run.tasks, run.config.build.max_negatives
    if not bench.is_dir():
        raise AutocompError("no benchmarks here: build them first (`autocomp run CONFIG` or "
                            "`autocomp build RUN_DIR`)", file=bench)
    selection = _selection(bench, split)
    out = []
    for f, path in paths.benchmark_files():
        b = Benchmark(f.name, f.task, f.n, f.track, f.kind, path, tasks, limit,
                      None if selection is None else replace(selection),
                      Path(run_dir) if tasks is not None else None, f.generator)
        if not patterns or any(fnmatch.fnmatch(b.name, p) or fnmatch.fnmatch(b.slug, p)
                                for p in patterns):
            out.append(b)
    if not out:
        what = f" matching {', '.join(patterns)}" if patterns else ""
        raise AutocompError(f"no benchmark files{what}", file=bench)
    return out


def _selection(bench: Path, split: str | None) -> Selection | None:
    from autocomp.bench.splits import NO_SPLITS, SPLITS, read_splits

    data = read_splits(bench)
    if data is None:
        if split not in (None, "test", "all"):
            raise AutocompError(f"{NO_SPLITS}; so no {split} items", file=bench)
        return None
    wanted = SPLITS if split in (None, "all") else (split,)
    if split not in (None, "all", *SPLITS):
        raise AutocompError(f"unknown split {split!r} (known: {', '.join(SPLITS)}, all)")
    if not any(s in wanted for s in data["split"].values()):  # n = 0 results otherwise
        raise AutocompError(f"the run's {split} split holds no concept (split.{split} is 0, "
                            "or every concept went elsewhere: `autocomp split RUN` prints "
                            "the counts): nothing to score", file=bench / "splits.json")
    return Selection(wanted, data["split"], data.get("seen") or {},
                     data.get("seen_against") or {})


def negative_graph(graph: SceneGraph, task, edit: dict, parts=None) -> SceneGraph:
    """The scene graph a negative states, rebuilt from the positive and the negative's edit;
    `parts`: the positive's (names, values) when the caller has them (one item's many
    negatives)."""
    names, values = parts or (list(graph.names), task.values_of(graph))
    if "slot" in edit:  # N = 1 variation
        if edit["field"] == "value":
            return task.rebuild(graph, names, [edit["to"]])
        return task.rebuild(graph, [edit["to"]], values)
    return task.rebuild(graph, [names[i] for i in edit["objects"]],
                        [values[j] for j in edit[task.value_key]])

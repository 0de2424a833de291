"""The benchmarks of a run directory, read as a stream of items."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from autocomp.bench.store import expand, is_compact
from autocomp.core.errors import AutocompError
from autocomp.core.layout import RunLayout
from autocomp.core.records import numbered_jsonl
from autocomp.core.scene import SceneGraph


@dataclass(frozen=True)
class Benchmark:
    name: str  # "<task>-n<N>/<track>-<kind>"
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

    def fingerprint(self) -> str:
        """A digest of the stored file (and of what its compact rows are enumerated under),
        so a result can tell whether the benchmark it scored is still this one."""
        import hashlib

        h = hashlib.sha256(f"n={self.n} max_negatives={self.max_negatives}\n".encode())
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
        """The items as the full store holds them (compact rows are expanded)."""
        for where, row in self.rows():
            yield self.expand(row, where)


def open_run(source, images, columns, skip_missing: bool, text_only=False):
    """An autocomp run directory as a Suite (its images lie inside it)."""
    from autocomp.formats.suite import Suite
    from autocomp.run import Run

    run = Run.open(source)
    return Suite("run", run.dir, run.dir, find_benchmarks(run.dir), run.tasks)


def find_benchmarks(run_dir: Path, patterns=()) -> list[Benchmark]:
    """Every benchmark file under RUN_DIR/bench (or matching one of `patterns`)."""
    layout = RunLayout(run_dir)
    bench = layout.bench
    tasks = limit = None
    if layout.config.is_file():
        from autocomp.run import Run

        run = Run.open(Path(run_dir))
        tasks, limit = run.tasks, run.config.build.max_negatives
    if not bench.is_dir():
        raise AutocompError("no benchmarks here: build them first (`autocomp run CONFIG` or "
                            "`autocomp build RUN_DIR`)", file=bench)
    out = []
    for f, path in layout.benchmark_files():
        b = Benchmark(f.name, f.task, f.n, f.track, f.kind, path, tasks, limit)
        if not patterns or any(fnmatch.fnmatch(b.name, p) or fnmatch.fnmatch(b.slug, p)
                                for p in patterns):
            out.append(b)
    if not out:
        what = f" matching {', '.join(patterns)}" if patterns else ""
        raise AutocompError(f"no benchmark files{what}", file=bench)
    return out


def negative_graph(graph: SceneGraph, task, edit: dict) -> SceneGraph:
    """The scene graph a negative states, rebuilt from the positive and the negative's edit."""
    names, values = list(graph.names), task.values_of(graph)
    if "slot" in edit:  # N = 1 variation
        if edit["field"] == "value":
            return task.rebuild(graph, names, [edit["to"]])
        return task.rebuild(graph, [edit["to"]], values)
    return task.rebuild(graph, [names[i] for i in edit["objects"]],
                        [values[j] for j in edit[task.value_key]])

"""The benchmarks of a run directory, read as a stream of items."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from autocomp.bench.store import expand, is_compact
from autocomp.core.errors import AutocompError
from autocomp.core.layout import RunLayout
from autocomp.core.records import read_jsonl
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

    def items(self) -> Iterator[dict]:
        """The items as the full store holds them (compact rows are expanded)."""
        for row in read_jsonl(self.path):
            if is_compact(row):
                if not self.tasks or row["task"] not in self.tasks:
                    raise AutocompError(f"a compact item of task '{row['task']}' needs the "
                                        "run's config to enumerate its negatives",
                                        file=self.path)
                row = expand(row, self.tasks[row["task"]])
            yield row


def open_run(source, images, columns, skip_missing: bool):
    """An autocomp run directory as a Suite (its images lie inside it)."""
    from autocomp.formats.suite import Suite
    from autocomp.run import Run

    run = Run.open(source)
    return Suite("run", run.dir, run.dir, find_benchmarks(run.dir), run.tasks)


def find_benchmarks(run_dir: Path, patterns=()) -> list[Benchmark]:
    """Every benchmark file under RUN_DIR/bench (or matching one of `patterns`)."""
    layout = RunLayout(run_dir)
    bench = layout.bench
    tasks = None
    if layout.config.is_file():
        from autocomp.run import Run

        tasks = Run.open(Path(run_dir)).tasks
    if not bench.is_dir():
        raise AutocompError("no benchmarks here: build them first (`autocomp run CONFIG` or "
                            "`autocomp build RUN_DIR`)", file=bench)
    out = []
    for f, path in layout.benchmark_files():
        b = Benchmark(f.name, f.task, f.n, f.track, f.kind, path, tasks)
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

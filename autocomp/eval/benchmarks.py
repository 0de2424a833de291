"""The benchmarks of a run directory, read as a stream of items."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from autocomp.bench.store import expand, is_compact
from autocomp.errors import AutocompError
from autocomp.negatives.generate import rebuild, values_of
from autocomp.records import read_jsonl
from autocomp.scene import SceneGraph


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


def find_benchmarks(run_dir: Path, patterns=()) -> list[Benchmark]:
    """Every benchmark file under RUN_DIR/bench (or matching one of `patterns`)."""
    bench = Path(run_dir) / "bench"
    tasks = None
    if (Path(run_dir) / "config.yaml").is_file():
        from autocomp.runtime.run import Run

        tasks = Run.open(Path(run_dir)).tasks
    if not bench.is_dir():
        raise AutocompError("no benchmarks here: build them first (`autocomp run CONFIG` or "
                            "`autocomp build RUN_DIR`)", file=bench)
    out = []
    for path in sorted(bench.glob("*-n*/*-*.jsonl")):
        task, n = path.parent.name.rsplit("-n", 1)
        track, kind = path.stem.split("-", 1)
        b = Benchmark(f"{path.parent.name}/{path.stem}", task, int(n), track, kind, path,
                      tasks)
        if not patterns or any(fnmatch.fnmatch(b.name, p) or fnmatch.fnmatch(b.slug, p)
                                for p in patterns):
            out.append(b)
    if not out:
        what = f" matching {', '.join(patterns)}" if patterns else ""
        raise AutocompError(f"no benchmark files{what}", file=bench)
    return out


def negative_graph(graph: SceneGraph, task, edit: dict) -> SceneGraph:
    """The scene graph a negative states, rebuilt from the positive and the negative's edit."""
    names, values = list(graph.names), values_of(graph, task)
    if "slot" in edit:  # N = 1 variation
        if edit["field"] == "value":
            return rebuild(graph, task, names, [edit["to"]])
        return rebuild(graph, task, [edit["to"]], values)
    vkey = "relations" if task.is_relation else "values"
    return rebuild(graph, task, [names[i] for i in edit["objects"]],
                   [values[j] for j in edit[vkey]])

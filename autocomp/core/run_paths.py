"""RunPaths: every path of a run directory, in one place.

    config.yaml                          resolved config + provenance
    <stage>/part-<rank>.jsonl            one rank's records of a stage (append-only)
    <stage>/merged.jsonl                 all ranks, in the stage's input order
    stats/<name>.json                    per-stage counters (same config, same bytes)
    stats/timing/<stage>[.rank-<r>].json wall-clock (the only files that vary)
    images/<shard>/<id>.png              both tracks of every concept
    bench/sets/<set>.jsonl               validated images per track; paired concepts
    bench/<task>-n<N>/<track>-<kind>.jsonl   benchmark items (-<kind>@<label>: the same
                                         items on a compared generator's images)
    figures/<name>.png                   the run's figures
    review/                              human validation: samples and judgments
    cache/                               eval's vectors (the default --cache)
    cache/negatives/<digest>.<key>.jsonl  a compact benchmark's enumerated negatives
    .locks/<stage>.lock                  held by the process running that stage

The run's paths are a plain value: it names paths, it reads and writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

CONFIG = "config.yaml"
MERGED = "merged.jsonl"
PART_GLOB = "part-*.jsonl"


def part_name(rank: int) -> str:
    return f"part-{rank:05d}.jsonl"


@dataclass(frozen=True)
class BenchFile:
    """One benchmark file of a run: bench/<task>-n<N>/<track>-<kind>.jsonl, or
    <track>-<kind>@<label>.jsonl for the same items on a compared generator's images
    (generate.compare)."""

    task: str
    n: int
    track: str
    kind: str
    generator: str | None = None

    @property
    def name(self) -> str:
        at = f"@{self.generator}" if self.generator else ""
        return f"{self.task}-n{self.n}/{self.track}-{self.kind}{at}"

    @property
    def relative(self) -> str:
        return f"bench/{self.name}.jsonl"

    @classmethod
    def parse(cls, name: str) -> BenchFile:
        """The file of a benchmark name ("shape_color-n2/minimal-swap", "...-swap@sd35")."""
        folder, _, stem = name.partition("/")
        task, _, n = folder.rpartition("-n")
        stem, _, label = stem.partition("@")
        track, _, kind = stem.partition("-")
        return cls(task, int(n), track, kind, label or None)


@dataclass(frozen=True)
class RunPaths:
    root: Path

    def __init__(self, root) -> None:
        object.__setattr__(self, "root", Path(root))

    @property
    def config(self) -> Path:
        return self.root / CONFIG

    @property
    def config_lock(self) -> Path:
        return self.root / ".config.lock"

    def stage_lock(self, stage: str) -> Path:
        """Held by the process running `stage` (core/locks.py)."""
        return self.root / ".locks" / f"{stage}.lock"

    def stage_dir(self, stage: str) -> Path:
        return self.root / stage

    def merged(self, stage: str) -> Path:
        return self.root / stage / MERGED

    def part(self, stage: str, rank: int) -> Path:
        return self.root / stage / part_name(rank)

    def parts(self, stage: str) -> list[Path]:
        return sorted((self.root / stage).glob(PART_GLOB))

    def has_records(self, stage: str) -> bool:
        return self.merged(stage).exists() or bool(self.parts(stage))

    def stats(self, name: str) -> Path:
        return self.root / "stats" / f"{name}.json"

    @property
    def timing_dir(self) -> Path:
        return self.root / "stats" / "timing"

    def timing(self, stage: str, rank: int | None = None) -> Path:
        suffix = "" if rank is None else f".rank-{rank}"
        return self.timing_dir / f"{stage}{suffix}.json"

    def rank_timings(self, stage: str) -> list[Path]:
        return list(self.timing_dir.glob(f"{stage}.rank-*.json"))

    @staticmethod
    def image(image_id: str) -> str:
        """An image's path relative to the run: images/<shard>/<id>.png."""
        return f"images/{image_id[:2]}/{image_id}.png"

    @property
    def bench(self) -> Path:
        return self.root / "bench"

    def positive_set(self, name: str) -> Path:
        return self.bench / "sets" / f"{name}.jsonl"

    def benchmark_files(self) -> list[tuple[BenchFile, Path]]:
        """Every benchmark file of the run, sorted by path."""
        out = []
        for path in sorted(self.bench.glob("*-n*/*-*.jsonl")):
            task, _, n = path.parent.name.rpartition("-n")
            stem, _, label = path.stem.partition("@")
            track, _, kind = stem.partition("-")
            if task and n.isdigit():
                out.append((BenchFile(task, int(n), track, kind, label or None), path))
        return out

    def figure(self, name: str, suffix: str = ".png") -> Path:
        return self.root / "figures" / f"{name}{suffix}"

    def negatives_cache(self, digest: str, key: str) -> Path:
        """The enumerated negatives of one benchmark and split (`digest`) under `key`
        (bench/expanded.py)."""
        return self.root / "cache" / "negatives" / f"{digest}.{key}.jsonl"

    @property
    def review(self) -> Path:
        return self.root / "review"

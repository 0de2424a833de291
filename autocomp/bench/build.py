"""The build stage: positive sets and benchmark items (Auto-Comp Phase 3).

  bench/sets/{minimal,contextual,paired}.jsonl   validated images of each track; paired:
      the concepts whose minimal AND contextual images both passed (one line per concept)
  bench/<task>-n<N>/<track>-<kind>.jsonl   one item per validated image: the image, its
      positive caption and every negative (caption, edit, category, same_meaning); stored
      compact by default (what the negatives are made from; they are enumerated again
      when read: bench/store.py) or full (build.store).
      N >= 2: swap and confusion; N = 1: vary_value and vary_object.
Minimal negatives are rendered by the minimal template; contextual ones are substituted
into the writer's caption inside the spans the check matched, so each differs from its
positive only there. Items say whether their concept is in the paired set.
"""

from __future__ import annotations

import json
from collections import defaultdict
from contextlib import ExitStack
from itertools import product

from autocomp.bench.pairs import KIND, winoground_items
from autocomp.bench.store import compact_item, expand
from autocomp.core.bulk_gc import paused
from autocomp.core.errors import AutocompError
from autocomp.core.records import TRACKS, atomic_open, dumps, write_jsonl, write_text
from autocomp.core.run_paths import BenchFile
from autocomp.core.scene import SceneGraph
from autocomp.negatives.generate import graph_count_problem
from autocomp.run import Run
from autocomp.runtime.stage import Stage


def item_kinds(task, graph: SceneGraph, wanted, limit: int | None = None):
    """(kinds, over): the wanted benchmark kinds the task defines at the concept's N that
    get an item, and those left out because the concept's negatives would pass `limit`
    (scene concepts only: the config check refuses such N for the other tasks)."""
    defined = task.negative_kinds(graph.n_objects)
    kinds = [k for k in wanted if k in defined]
    over = [k for k in kinds if graph_count_problem(graph, task, k, limit)]
    return [k for k in kinds if k not in over], over


class BuildStage(Stage):
    name = "build"
    needs = ("validation",)

    def __init__(self, run: Run, device: str = "cpu", store: str | None = None,
                 partial: bool = False):
        super().__init__(run, device)
        self.store, self.partial = store, partial

    def run_once(self) -> dict:
        missing = unfinished(self.run)
        if missing and not self.partial:
            raise AutocompError(
                f"the earlier stages are not finished ({'; '.join(missing)} done): resume "
                f"the run first (`autocomp run {self.run.dir / 'config.yaml'}`), or build "
                "from what is there with `autocomp build --partial`", file=self.run.dir)
        if missing:
            import warnings

            warnings.warn(f"{self.run.dir}: building a partial run ({'; '.join(missing)} "
                          "done); its benchmarks are marked partial", stacklevel=2)
        stats = build(self.run, self.store, partial=missing)
        if self.run.config.split is not None:  # train / val / test and the seen labels
            from autocomp.bench.splits import make_splits

            made = make_splits(self.run)
            stats["splits"] = {"counts": made["counts"], "seen": made["seen_counts"]}
        return stats


def unfinished(run: Run) -> list[str]:
    """The parallel stages before build whose items are not all done ("validation: 16 of
    316")."""
    from autocomp.core import registry

    out = []
    for name in registry.stage_names():
        if name == BuildStage.name:
            break
        stage = registry.make_stage(name, run)
        if not stage.parallel:
            continue
        ids = {it.id for it in stage.items()}
        done = len(ids & {r.get("id") for r in run.records(name)})
        if done < len(ids):
            out.append(f"{name}: {done:,} of {len(ids):,}")
    return out


def build(run: Run, store: str | None = None, partial: list[str] | None = None) -> dict:
    """Write the positive sets and the benchmark items; returns the counts (Table 2).
    `store`: compact (negatives enumerated when read) or full (bench/store.py); default:
    the config's build.store. Items stream to their files, so memory does not grow with
    them."""
    from autocomp.core.progress import Progress, busy

    store = store or run.config.build.store
    with busy("build: reading the run's records"):
        concepts = {c.id: c for c in run.read("concepts")}
        captions = {c.id: c for c in run.read("captions")}
        seeds = {r.id: r.seed for r in run.read("images")}
        # generator label (None: the run's own) -> concept -> track -> validation record
        passed: dict[str | None, dict] = {label: defaultdict(dict)
                                           for label, _ in run.config.generate.generators()}
        for v in run.read("validation"):
            if v.passed and v.generator in passed:
                passed[v.generator][v.concept][v.track] = v
        compared = {label: by for label, by in passed.items() if label is not None}
        passed = passed[None]
    made = _Made(run, store, seeds)
    with _Writers(run.paths.root) as out, paused(), \
            Progress("build", len(concepts), "concept") as bar:  # no GC: plain data
        for cid, concept in concepts.items():  # concept order = config order
            bar.update()
            tracks = passed.get(cid, {})
            if tracks and not concept.partner_of:  # a partner: in winoground items only
                made.positives(concept, captions[cid], tracks)
                made.items(out, concept, captions[cid], tracks)
            for label, by in compared.items():  # the same items, on each one's images
                if by.get(cid) and not concept.partner_of:
                    made.items(out, concept, captions[cid], by[cid], label)
        if KIND in run.config.build.benchmarks:
            for bench_file, item in winoground_items(concepts, captions, passed, run.tasks,
                                                     made.ledger.drop):
                out.write(bench_file.relative, item)
    return made.finish(dict(sorted(out.counts.items())), partial,
                       expected_benchmarks(run, concepts, passed))


class _Made:
    """What the build writes besides the items: the positive sets and Table 2's counts, and
    what it left out (concepts over build.max_negatives, per benchmark file)."""

    def __init__(self, run: Run, store: str, seeds: dict):
        self.run, self.store, self.seeds = run, store, seeds
        self.sets: dict[str, list] = {t: [] for t in (*TRACKS, "paired")}
        self.table: dict[str, dict[str, int]] = defaultdict(
            lambda: dict.fromkeys((*TRACKS, "paired"), 0))
        # scene concepts whose negatives of a kind would pass build.max_negatives get no
        # item of that kind (the config check refuses such N for other tasks beforehand)
        self.skipped: dict[str, int] = defaultdict(int)
        self.ledger = Ledger()

    def positives(self, concept, cap, tracks: dict) -> None:
        """The concept's image on each track it passed on (and the pair, when both)."""
        task = self.run.tasks[concept.task]
        key = f"{task.name} N={concept.n}"
        for track, v in tracks.items():
            self.sets[track].append({"id": v.id, "concept": concept.id, "task": task.name,
                                     "n": concept.n, "track": track, "image": v.image,
                                     "caption": cap.caption(track), "seed": self.seeds[v.id]})
            self.table[key][track] += 1
        if all(t in tracks for t in TRACKS):
            self.sets["paired"].append({"concept": concept.id, "task": task.name,
                                        "n": concept.n, **{t: tracks[t].image for t in TRACKS},
                                        **{f"{t}_caption": cap.caption(t) for t in TRACKS}})
            self.table[key]["paired"] += 1

    def items(self, out, concept, cap, tracks: dict, generator: str | None = None) -> None:
        """An item per benchmark kind the task defines at the concept's N and track (on the
        images of the compared generator `generator`: its own benchmark files)."""
        task, graph, build = self.run.tasks[concept.task], concept.scene, self.run.config.build
        paired = all(t in tracks for t in TRACKS)
        kinds, over = item_kinds(task, graph, build.benchmarks, build.max_negatives)
        for kind in over:
            if generator is None:  # Table 2's count is the run's own generator's
                self.skipped[f"{task.name} {kind}"] += 1
            for track in tracks:
                self.ledger.drop(BenchFile(task.name, concept.n, track, kind, generator),
                                 ABOVE_MAX_NEGATIVES)
        minimal = task.minimal_caption(graph) if kinds and "minimal" in tracks else None
        for kind, track in product(kinds, tracks):
            row = compact_item(tracks[track], concept, cap, task, track, kind, paired, minimal)
            out.write(BenchFile(task.name, concept.n, track, kind, generator).relative,
                      expand(row, task, limit=build.max_negatives)
                      if self.store == "full" else row)

    def finish(self, files: dict, partial, expected: dict) -> dict:
        """The positive sets and stats/build.json written (stale benchmark files of an
        earlier build removed); the stats returned."""
        paths = self.run.paths
        for name, rows in self.sets.items():
            write_jsonl(paths.positive_set(name), rows)
        for bench_file, old in paths.benchmark_files():  # a rebuild leaves none stale
            if bench_file.relative not in files:
                old.unlink()
        stats = {"stage": "build",
                 "validated": {k: dict(v) for k, v in sorted(self.table.items())},
                 "sets": {k: len(v) for k, v in self.sets.items()}, "benchmarks": files,
                 "store": self.store}
        if partial:
            stats["partial"] = partial  # stages unfinished when it was built
        if self.skipped:
            stats["skipped_above_max_negatives"] = dict(sorted(self.skipped.items()))
        stats.update(self.ledger.summary(files, expected))
        write_text(paths.stats("build"), json.dumps(stats, indent=1))
        return stats


ABOVE_MAX_NEGATIVES = "above build.max_negatives"


class Ledger:
    """What the build left out after concepts were drawn, per benchmark file and reason,
    so no table reads a subset as the whole benchmark (stats/build.json: dropped, missing;
    read back by bench/ledger.py)."""

    def __init__(self):
        self.dropped: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))

    def drop(self, bench_file: BenchFile, reason: str, count: int = 1) -> None:
        self.dropped[bench_file.name][reason] += count

    def summary(self, files: dict[str, int], expected: dict[str, str]) -> dict:
        """{"dropped": name -> {kept, drawn, reasons}, "missing": name -> why}: benchmarks
        written with items left out, and benchmarks the config asks for that were not
        written at all."""
        out: dict = {}
        dropped = {}
        for name, reasons in sorted(self.dropped.items()):
            kept = files.get(BenchFile.parse(name).relative, 0)
            dropped[name] = {"kept": kept, "drawn": kept + sum(reasons.values()),
                             "reasons": dict(sorted(reasons.items()))}
        missing = {name: why for name, why in expected.items()
                   if BenchFile.parse(name).relative not in files}
        if dropped:
            out["dropped"] = dropped
        if missing:
            out["missing"] = dict(sorted(missing.items()))
        return out


def expected_benchmarks(run: Run, concepts: dict, passed: dict) -> dict[str, str]:
    """Every benchmark file the config asks for (a task x N drawn, a kind the task defines
    there, a track), with why it would be empty: how many concepts reached that track."""
    drawn: dict[tuple, list] = defaultdict(list)
    for cid, c in concepts.items():
        if not c.partner_of:
            drawn[(c.task, c.n)].append(cid)
    out = {}
    for (task_name, n), ids in drawn.items():
        task = run.tasks[task_name]
        graph = concepts[ids[0]].scene
        defined = task.negative_kinds(graph.n_objects)
        kinds = [k for k in run.config.build.benchmarks
                 if k in defined or (k == KIND and "swap" in defined)]
        ok = {track: sum(track in passed.get(cid, {}) for cid in ids) for track in TRACKS}
        for kind in kinds:
            for track in TRACKS:
                out[BenchFile(task_name, n, track, kind).name] = _why_empty(
                    kind, track, len(ids), ok[track])
    return out


def _why_empty(kind: str, track: str, drawn: int, validated: int) -> str:
    if not validated:
        return f"none of the {drawn:,} concepts drawn has a validated {track} image"
    if kind == KIND:
        return f"no pair of a concept and its swap has both {track} images validated"
    return f"all {validated:,} validated {track} items are {ABOVE_MAX_NEGATIVES}"


class _Writers:
    """One atomically written file per benchmark, opened at its first item; all are renamed
    into place when the build ends, none when it fails."""

    def __init__(self, run_dir):
        self.run_dir, self.counts, self.handles = run_dir, {}, {}
        self.stack = ExitStack()

    def __enter__(self):
        self.stack.__enter__()
        return self

    def __exit__(self, *exc):
        return self.stack.__exit__(*exc)

    def write(self, rel: str, row: dict) -> None:
        if rel not in self.handles:
            self.handles[rel] = self.stack.enter_context(atomic_open(self.run_dir / rel))
            self.counts[rel] = 0
        self.handles[rel].write(dumps(row) + "\n")
        self.counts[rel] += 1

"""Evaluate models x benchmarks: one result JSON per cell (CLIP_benchmark style).

results/<model>/<benchmark>.json              {benchmark, model, pretrained, metrics, n_items,
                                              chance, autocomp_version, ...}
results/<model>/<benchmark>.predictions.jsonl one line per item
(<model> and <benchmark>: slug and hash, `folder_name`)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autocomp import __version__
from autocomp.core.errors import AutocompError
from autocomp.core.log import package_logger
from autocomp.core.progress import busy
from autocomp.eval.cell_progress import CellProgress
from autocomp.eval.harness import Harness, write_json
from autocomp.eval.modelset import load_model_set, model_labels, record_models
from autocomp.eval.provenance import provenance
from autocomp.eval.read_once import Digesting, ReadOnce
from autocomp.eval.result_files import (
    Cell,
    Fingerprints,
    drop_legacy,
    finished,
    result_file,
    result_state,
)
from autocomp.eval.score_checks import UnusableScores
from autocomp.formats.runs import find_benchmarks
from autocomp.formats.suite import LoadedBenchmark

__all__ = ["Request", "evaluate", "evaluate_request", "finished", "load_model_set",
           "model_labels", "result_file", "result_state"]
log = package_logger(__name__)


@dataclass
class Request:
    """What to score and how: `models` (specs) on the benchmarks of `run_dir` matching
    `patterns`, results under `out`.

    run_dir      an autocomp run, or a benchmark in another format (`fmt`: sugarcrepe,
                 crepe, columns, ...; detected when None) whose images lie under `images`
                 (`columns`, `skip_missing`: how a table is read); `suite`: already opened
    labels       spec -> a models file's label, into each result and, with the models'
                 order, into OUT/models.yaml, which `autocomp report` follows
    progress_every  a cell running longer logs a progress line this often (None: never;
                 negative: ~10 s, $AUTOCOMP_PROGRESS_EVERY)
    ties         strict, aware or argmax: the rule every accuracy follows when the
                 positive ties a negative (eval/metrics.py); each result says which, and
                 a result of another rule is done again
    rank, world_size, share   this process's part of a distributed eval (eval/shares.py)
    items        score only the items with these ids (None: every item)
    """

    run_dir: Path
    models: list[str]
    out: Path
    patterns: tuple = ()
    cache_dir: Path | None = None
    skip_existing: bool = False
    device: str = "cpu"
    batch_size: int | None = None
    rank: int = 0
    world_size: int = 1
    fmt: str | None = None
    images: Path | None = None
    columns: dict | None = None
    skip_missing: bool = False
    suite: object = None
    progress_every: float | None = -1.0
    precision: str = "fp32"
    workers: int | None = None
    share: object = None
    labels: dict | None = None
    ties: str = "strict"
    split: str | None = "test"  # a run with splits: the items of this split (or all)
    items: frozenset | None = None

    def __post_init__(self):
        from autocomp.eval.metrics import TIES

        if self.ties not in TIES:
            raise AutocompError(f"unknown tie rule '{self.ties}' (known: {', '.join(TIES)})")
        if self.progress_every is not None and self.progress_every < 0:
            from autocomp.core.progress import every

            self.progress_every = every()
        self.models = list(dict.fromkeys(self.models))
        self.labels = self.labels or {}

    def scorer(self, spec: str):
        from autocomp.eval.scorers import load_scorer

        return load_scorer(spec, device=self.device, batch_size=self.batch_size,
                           precision=self.precision)


def evaluate(run_dir: Path, models: list[str], out: Path, patterns=(), **options) -> list[dict]:
    """Score `models` on the benchmarks of `run_dir` (options: the fields of Request);
    one result per cell written, and returned."""
    return evaluate_request(Request(Path(run_dir), list(models), Path(out), tuple(patterns),
                                    **options))


def evaluate_request(req: Request) -> list[dict]:
    from autocomp.eval.suite_contract import checked_at_open
    from autocomp.formats import open_suite
    from autocomp.runtime.launch import clean_orphans

    if req.out.is_dir():
        clean_orphans(req.out)  # predictions of a killed eval (autocomp's own temp files)
    suite = req.suite or open_suite(req.run_dir, req.fmt, req.images, req.columns,
                                    req.skip_missing)
    checked_at_open(suite, req.fmt)  # a plugin format's first items, before any scoring
    benches = (find_benchmarks(suite.root, req.patterns, req.split) if suite.format == "run"
               else suite.select(req.patterns).benchmarks)
    if req.items is not None:  # a sample re-scored (`autocomp results verify`)
        from autocomp.formats.suite import only_items

        benches = [only_items(b, req.items) for b in benches]
    light = {m for m in req.models if req.scorer(m).light}  # every spec checked up front
    session = Session(req, suite, light)
    if req.world_size > 1 and req.share is not None and req.cache_dir is not None:
        from autocomp.eval.shares import encode_shares

        todo = [b for b in benches if not (req.skip_existing and all(
            finished(Cell(m, b).path(req.out), session.prints[b], req.ties)
            for m in req.models))]
        encode_shares(req.models, todo, suite, req.cache_dir, req.rank, req.world_size,
                      req.share, req.scorer)
    # light scorers benchmark by benchmark, all of them on one reading of its items; the
    # others model by model (one model's weights in memory at a time)
    order = [Cell(m, b) for b in benches for m in req.models if m in light]
    order += [Cell(m, b) for m in req.models if m not in light for b in benches]
    results = [r for cell in order[req.rank::req.world_size]
               if (r := session.score(cell)) is not None]
    session.close()
    if results:  # per-dataset micro/macro averages, from every cell there
        from autocomp.eval.summary import write_summaries

        write_summaries(req.out)
        if req.rank == 0:
            record_models(req.out, req.models, req.labels)
    _failures(req.models, session.failed)
    return results


def _failures(models: list[str], failed: dict) -> None:
    """Models that could not load or be scored (a NaN score): one alone raises its own
    error; several, a count."""
    if not failed:  # each reason was logged on its "fail" line
        return
    if len(models) == 1:
        raise next(iter(failed.values()))
    # the status of the models' own errors when they agree (81: every one lacks weights)
    classes = {type(e) for e in failed.values()}
    error = classes.pop() if len(classes) == 1 else AutocompError
    if len(failed) == len(models):
        raise error(f"no model could be loaded or scored ({', '.join(failed)}; the reasons "
                   "are above): "
                   "nothing was scored")
    raise error(f"{len(failed)} of {len(models)} models could not be loaded or scored "
               f"({', '.join(failed)}; the reasons are above); the other "
               f"{len(models) - len(failed)} models' results are written")


class Session:
    """The cells of one eval: loaded harnesses (one heavy model at a time), models that
    failed to load, benchmark fingerprints, the items light scorers share."""

    def __init__(self, req: Request, suite, light: set):
        self.req, self.suite, self.light = req, suite, light
        self.prints = Fingerprints()
        self.by_model: dict = {}
        self.failed: dict = {}
        self.reading: dict = {}  # the benchmark the light scorers are on, read once
        self.ledgers = {}
        if suite.format == "run":
            from autocomp.bench.ledger import read_ledger

            self.ledgers = read_ledger(suite.root).get("dropped", {})

    def harness(self, model: str):
        """The model's harness, loaded now if it is not (None: it cannot load)."""
        if model in self.failed:
            return None
        if model not in self.by_model:
            for m in [m for m in self.by_model if m not in self.light]:
                self.by_model.pop(m).close()
            scorer = self.req.scorer(model)
            log.info(f"load   {model}")
            try:
                with busy(f"load {model}"):
                    scorer.load()
            except AutocompError as exc:  # one model that cannot load stops no other
                self.failed[model] = exc
                if len(self.req.models) > 1:  # alone, its error says why
                    log.info(f"fail   {model}: {exc}")
                return None
            self.by_model[model] = Harness(scorer, self.suite.root, self.suite.tasks,
                                           self.req.cache_dir, workers=self.req.workers,
                                           also=self.suite.also, ties=self.req.ties)
        return self.by_model[model]

    def score(self, cell: Cell) -> dict | None:
        """One cell scored and its result written (None: skipped, or its model failed)."""
        req, target = self.req, cell.path(self.req.out)
        if req.skip_existing:
            state = result_state(target, self.prints[cell.bench], req.ties)
            if state == "done":
                log.info(f"skip   {cell.model} {cell.bench.name} (exists)")
                return None
            if state != "missing":
                log.info(f"redo   {cell.model} {cell.bench.name} ({state})")
        harness = self.harness(cell.model)
        if harness is None:
            return None
        before = dict(getattr(harness.scorer, "stats", None) or {})
        before["picked"] = len(getattr(harness.scorer, "picked", ()))
        bench, digesting = cell.bench, None  # a loaded benchmark's fingerprint, as read
        if cell.bench not in self.prints and isinstance(cell.bench, LoadedBenchmark):
            bench = digesting = Digesting(cell.bench)
        if cell.model in self.light:
            if cell.bench.name not in self.reading:
                self.reading = {cell.bench.name: ReadOnce(bench)}
            bench = self.reading[cell.bench.name]
        try:
            with CellProgress(f"{cell.model} {cell.bench.name}", req.progress_every,
                              harness.scorer) as progress:
                got = harness.run(bench, target.with_suffix(".predictions.jsonl"), progress)
        except UnusableScores as exc:  # nothing written; the model scores nothing more
            where = "" if str(exc).startswith("benchmark ") else \
                f"benchmark {cell.bench.name}: "
            self.failed[cell.model] = type(exc)(f"model {cell.model}: {where}{exc}")
            log.info(f"fail   {self.failed[cell.model]}")
            self.by_model.pop(cell.model).close()
            return None
        if digesting is not None and digesting.fingerprint is not None:
            self.prints[cell.bench] = digesting.fingerprint
        result = self.result(cell, harness.scorer, got, before)
        write_json(target, result)
        drop_legacy(cell, req.out)
        log.info(f"done   {cell.model} {cell.bench.name}: {_scores_line(got['metrics'])} "
                 f"n={got['n_items']} {got['seconds']:.1f}s")
        return result

    def result(self, cell: Cell, s, got: dict, before: dict) -> dict:
        """The result JSON of a scored cell (and its notes, logged)."""
        suite, bench = self.suite, cell.bench
        result = {"benchmark": bench.name, "model": cell.model, "family": s.family,
                  "model_type": s.model_type, "baseline": s.baseline,
                  "name": s.name, "pretrained": s.pretrained, "task": bench.task,
                  "n": bench.n, "track": bench.track, "kind": bench.kind,
                  "metrics": got["metrics"], "ties": self.req.ties, "n_items": got["n_items"],
                  "captions": got["captions"],
                  "chance": got["metrics"]["chance"], "seconds": got["seconds"],
                  "encoded": got["encoded"], "format": suite.format,
                  "benchmark_fingerprint": self.prints[bench],
                  "precision": getattr(s, "precision", "fp32"),
                  "run": str(suite.source), "autocomp_version": __version__,
                  **provenance(s)}
        if getattr(bench, "generator", None):  # the same items on another generator's images
            result["generator"] = bench.generator
        if self.req.labels.get(cell.model):
            result["label"] = self.req.labels[cell.model]
        meta = getattr(bench, "meta", None)
        if meta:  # how the benchmark aggregates (a macro rule, a seed of a group)
            result["meta"] = meta
            if "by" in meta:
                from autocomp.eval.metrics import macro_accuracy

                result["macro_accuracy"] = macro_accuracy(got["metrics"], meta)
        task = suite.tasks.get(bench.task) if suite.tasks else None
        if getattr(task, "aspect", None) is not None:  # what the values are, for labels
            result["aspect"] = {"name": task.aspect.name, "plural": task.aspect.plural}
        if suite.info:
            result["source_info"] = suite.info
        if getattr(bench, "selection", None) is not None:  # a split: what it kept, why
            result["selection"] = bench.selection.summary()
        if suite.format == "run" and self.ledgers.get(bench.name):  # left out by the build
            result["dropped"] = self.ledgers[bench.name]
        if got["skipped"]:  # items left out (no negatives: right whatever the model does)
            result["skipped_items"] = got["skipped"]
            log.info(f"note   {bench.name}: items left out: "
                     + ", ".join(f"{n:,} with {why}" for why, n in got["skipped"].items()))
        if got.get("identical"):  # ties the model's context made (truncated captions)
            result["identical_text_ties"] = got["identical"]
            log.info(f"note   {cell.model} {bench.name}: {got['identical']:,} items where "
                     "a negative scores exactly as the positive (the same text embedding: "
                     "identical within the model's context?); counted wrong, as ties are")
        if getattr(s, "stats", None) is not None:  # e.g. blind:choice's invalid answers
            result["scorer_stats"] = {k: v - before.get(k, 0) for k, v in s.stats.items()}
        if hasattr(s, "position_bias"):  # a multiple-choice test taker's preferred places
            result["position_bias"] = s.position_bias(before["picked"])
        return result

    def close(self) -> None:
        for h in self.by_model.values():
            h.close()


def _scores_line(m: dict) -> str:
    rule = f"ties {m.get('ties', 'strict')}"
    if m.get("image_score") is not None:  # items of several images
        return (f"text {_f(m['text_score'])} image {_f(m['image_score'])} group "
                f"{_f(m['group_score'])} ({rule}; chance {_f(m['chance_text'])}/"
                f"{_f(m['chance_image'])}/{_f(m['chance_group'])})")
    other = "" if m.get("ties") == "aware" else f", tie-aware {_f(m['accuracy_tie_aware'])}"
    return f"acc {_f(m['accuracy'])} ({rule}{other}, chance {_f(m['chance'])})"


def _f(x) -> str:
    """As the report prints it (half up: chance 6.25 is 6.3 in both)."""
    from autocomp.eval.metrics import r1

    return "n/a" if x is None else r1(x)

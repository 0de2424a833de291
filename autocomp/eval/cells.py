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
from autocomp.eval.cache import folder_name
from autocomp.eval.harness import Harness, write_json
from autocomp.eval.modelset import load_model_set, model_labels, record_models
from autocomp.eval.once import Digesting, ReadOnce

__all__ = ["evaluate", "load_model_set", "model_labels", "result_file"]
from autocomp.formats.runs import Benchmark, find_benchmarks
from autocomp.formats.suite import LoadedBenchmark


def result_file(out: Path, model: str, benchmark: str) -> Path:
    """Where the result of `model` on `benchmark` (its name) is written: collision-free,
    as model folders are (subsets "a/b" and "a-b" get their own files)."""
    return Path(out) / folder_name(model) / f"{folder_name(benchmark)}.json"


@dataclass(frozen=True)
class Cell:
    model: str
    bench: Benchmark

    def path(self, out: Path) -> Path:
        return result_file(out, self.model, self.bench.name)

    def legacy_path(self, out: Path) -> Path:
        """Where earlier versions wrote the result ("/" -> "-": "a/b" and "a-b" collided)."""
        return Path(out) / folder_name(self.model) / f"{self.bench.slug}.json"


def evaluate(run_dir: Path, models: list[str], out: Path, patterns=(), cache_dir=None,
             skip_existing: bool = False, device: str = "cpu", batch_size: int | None = None,
             rank: int = 0, world_size: int = 1, echo=print, fmt: str | None = None,
             images=None, columns: dict | None = None, skip_missing: bool = False,
             suite=None, progress_every: float | None = -1.0, precision: str = "fp32",
             workers: int | None = None, share=None,
             labels: dict | None = None, ties: str = "strict") -> list[dict]:
    """Score `models` on the benchmarks of `run_dir`: an autocomp run, or a benchmark in
    another format (`fmt`: sugarcrepe, crepe, columns; detected when None) whose images lie
    under `images`. `labels` (spec -> a models file's label) go into each result and, with
    the models' order, into OUT/models.yaml, which `autocomp report` follows. A cell running
    longer than `progress_every` seconds prints a progress line that often (None: never;
    the default: ~10 s, $AUTOCOMP_PROGRESS_EVERY). `ties`: strict, aware or argmax, the rule
    every accuracy follows when the positive ties a negative (eval/metrics.py); each result
    says which, and a result of another rule is done again."""
    from autocomp.eval.metrics import TIES

    if ties not in TIES:
        raise AutocompError(f"unknown tie rule '{ties}' (known: {', '.join(TIES)})")
    if progress_every is not None and progress_every < 0:
        from autocomp.core.progress import every

        progress_every = every()
    from autocomp.eval.scorers import load_scorer
    from autocomp.formats import open_suite
    from autocomp.runtime.launch import clean_orphans

    if Path(out).is_dir():
        clean_orphans(out)  # predictions of a killed eval (autocomp's own temp files only)
    if suite is None:
        suite = open_suite(run_dir, fmt, images, columns, skip_missing)
    benches = (find_benchmarks(suite.root, patterns) if suite.format == "run"
               else suite.select(patterns).benchmarks)
    light = {m for m in dict.fromkeys(models)  # every spec checked before any model runs
             if load_scorer(m, device=device, batch_size=batch_size, precision=precision).light}
    prints = Fingerprints()
    if world_size > 1 and share is not None and cache_dir is not None:
        from autocomp.eval.shares import encode_shares

        todo = [b for b in benches if not (skip_existing and all(
            finished(Cell(m, b).path(out), prints[b], ties) for m in models))]
        encode_shares(models, todo, suite, cache_dir, rank, world_size, share,
                      lambda spec: load_scorer(spec, device=device, batch_size=batch_size,
                                               precision=precision), echo)
    # light scorers benchmark by benchmark, all of them on one reading of its items; the
    # others model by model (one model's weights in memory at a time)
    order = [Cell(m, b) for b in benches for m in dict.fromkeys(models) if m in light]
    order += [Cell(m, b) for m in dict.fromkeys(models) if m not in light for b in benches]
    cells = order[rank::world_size]
    reading = {}  # the benchmark the light scorers are on, read once (eval/once.py)
    ledgers = {}
    if suite.format == "run":
        from autocomp.bench.ledger import read_ledger

        ledgers = read_ledger(suite.root).get("dropped", {})
    results, by_model, failed = [], {}, {}
    for cell in cells:
        target = cell.path(out)
        if skip_existing:
            state = result_state(target, prints[cell.bench], ties)
            if state == "done":
                echo(f"skip   {cell.model} {cell.bench.name} (exists)")
                continue
            if state != "missing":
                echo(f"redo   {cell.model} {cell.bench.name} ({state})")
        if cell.model in failed:
            continue
        if cell.model not in by_model:
            for m in [m for m in by_model if m not in light]:  # one heavy model at a time
                by_model.pop(m).close()
            scorer = load_scorer(cell.model, device=device, batch_size=batch_size,
                                 precision=precision)
            echo(f"load   {cell.model}")
            try:
                scorer.load()
            except AutocompError as exc:  # one model that cannot load stops no other
                failed[cell.model] = exc
                if len(dict.fromkeys(models)) > 1:  # alone, the error below says why
                    echo(f"fail   {cell.model}: {exc}")
                continue
            by_model[cell.model] = Harness(scorer, suite.root, suite.tasks, cache_dir,
                                           workers=workers, also=suite.also, ties=ties)
        harness = by_model[cell.model]
        before = dict(getattr(harness.scorer, "stats", None) or {})
        bench = cell.bench
        digesting = None  # a loaded benchmark's fingerprint, taken as its items are read
        if cell.bench not in prints and isinstance(cell.bench, LoadedBenchmark):
            bench = digesting = Digesting(cell.bench)
        if cell.model in light:
            if cell.bench.name not in reading:
                reading = {cell.bench.name: ReadOnce(bench)}
            bench = reading[cell.bench.name]
        got = harness.run(bench, target.with_suffix(".predictions.jsonl"),
                          CellProgress(echo, f"{cell.model} {cell.bench.name}", progress_every))
        if digesting is not None and digesting.fingerprint is not None:
            prints[cell.bench] = digesting.fingerprint
        s = harness.scorer
        result = {"benchmark": cell.bench.name, "model": cell.model, "family": s.family,
                  "model_type": s.model_type,
                  "name": s.name, "pretrained": s.pretrained, "task": cell.bench.task,
                  "n": cell.bench.n, "track": cell.bench.track, "kind": cell.bench.kind,
                  "metrics": got["metrics"], "ties": ties, "n_items": got["n_items"],
                  "captions": got["captions"],
                  "chance": got["metrics"]["chance"], "seconds": got["seconds"],
                  "encoded": got["encoded"], "format": suite.format,
                  "benchmark_fingerprint": prints[cell.bench],
                  "precision": getattr(s, "precision", "fp32"),
                  "run": str(suite.source), "autocomp_version": __version__}
        if (labels or {}).get(cell.model):
            result["label"] = labels[cell.model]
        meta = getattr(cell.bench, "meta", None)
        if meta:  # how the benchmark aggregates (a macro rule, a seed of a group)
            result["meta"] = meta
            if "by" in meta:
                from autocomp.eval.metrics import macro_accuracy

                result["macro_accuracy"] = macro_accuracy(got["metrics"], meta)
        task = suite.tasks.get(cell.bench.task) if suite.tasks else None
        if getattr(task, "aspect", None) is not None:  # what the values are, for labels
            result["aspect"] = {"name": task.aspect.name, "plural": task.aspect.plural}
        if suite.info:
            result["source_info"] = suite.info
        if suite.format == "run":  # items the build left out of this benchmark, and why
            entry = ledgers.get(cell.bench.name)
            if entry:
                result["dropped"] = entry
        if got["skipped"]:  # items left out (no negatives: right whatever the model does)
            result["skipped_items"] = got["skipped"]
            echo(f"note   {cell.bench.name}: items left out: "
                 + ", ".join(f"{n:,} with {why}" for why, n in got["skipped"].items()))
        if got.get("identical"):  # ties the model's context made (truncated captions)
            result["identical_text_ties"] = got["identical"]
            echo(f"note   {cell.model} {cell.bench.name}: {got['identical']:,} items where "
                 "a negative scores exactly as the positive (the same text embedding: "
                 "identical within the model's context?); counted wrong, as ties are")
        if getattr(s, "stats", None) is not None:  # e.g. blind:choice's invalid answers
            result["scorer_stats"] = {k: v - before.get(k, 0) for k, v in s.stats.items()}
        write_json(target, result)
        _drop_legacy(cell, out)
        echo(f"done   {cell.model} {cell.bench.name}: {_scores_line(got['metrics'])} "
             f"n={got['n_items']} {got['seconds']:.1f}s")
        results.append(result)
    for h in by_model.values():
        h.close()
    if results:  # per-dataset micro/macro averages, from every cell there
        from autocomp.eval.summary import write_summaries

        write_summaries(out)
        if rank == 0:
            record_models(out, list(dict.fromkeys(models)), labels or {})
    if failed:  # each reason was printed on its "fail" line
        total = len(dict.fromkeys(models))
        if total == 1:
            raise next(iter(failed.values()))
        if len(failed) == total:
            raise AutocompError(f"no model could be loaded ({', '.join(failed)}; the reasons "
                                "are above): nothing was scored")
        raise AutocompError(f"{len(failed)} of {total} models could not be loaded "
                            f"({', '.join(failed)}; the reasons are above); the other "
                            f"{total - len(failed)} models' results are written")
    return results


def _drop_legacy(cell: Cell, out: Path) -> None:
    """The cell's result under its old name goes once the new one is written (the report
    would otherwise read both)."""
    import json

    old = cell.legacy_path(out)
    try:
        same = json.loads(old.read_text(encoding="utf-8")).get("benchmark") == cell.bench.name
    except (OSError, ValueError, AttributeError):
        return
    if same and old != cell.path(out):
        old.unlink(missing_ok=True)
        old.with_suffix(".predictions.jsonl").unlink(missing_ok=True)


class Fingerprints(dict):
    """Benchmark -> its fingerprint, computed once per benchmark when first asked."""

    def __missing__(self, bench) -> str:
        self[bench] = bench.fingerprint()
        return self[bench]


def result_state(path: Path, fingerprint: str | None = None, ties: str = "strict") -> str:
    """"done" (a whole result of the benchmark as it is now), "missing", or why it is done
    again: damaged, or the benchmark changed since it was scored (a result written before
    results carried the benchmark's fingerprint cannot tell, so it is done again too)."""
    import json

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return "missing"
    except (OSError, ValueError):
        return "the result file is damaged"
    if not isinstance(data, dict) or "metrics" not in data:
        return "the result file is damaged"
    if data.get("ties", "strict") != ties:
        return f"it was scored with ties {data.get('ties', 'strict')}, not {ties}"
    if fingerprint is None or data.get("benchmark_fingerprint") == fingerprint:
        return "done"
    if "benchmark_fingerprint" not in data:
        return "the result does not say which version of the benchmark it scored"
    return "the benchmark changed since it was scored"


def finished(path: Path, fingerprint: str | None = None, ties: str = "strict") -> bool:
    """A result file that is there and whole (a truncated one is done again) and, given a
    fingerprint, of the benchmark as it is now, under the tie rule `ties`."""
    return result_state(path, fingerprint, ties) == "done"


class CellProgress:
    """Prints "... items, captions, cache hits" every `every` seconds of a long cell."""

    def __init__(self, echo, label: str, every: float | None):
        self.echo, self.label, self.every = echo, label, every
        self.next = every

    def __call__(self, state: dict) -> None:
        if self.every is None or state["seconds"] < self.next:
            return
        self.next = state["seconds"] + self.every
        enc = state["encoded"]
        rate = state["items"] / max(state["seconds"], 1e-9)
        self.echo(f"...    {self.label}: {state['items']:,} items ({rate:,.0f}/s), "
                  f"{state['captions']:,} captions ({enc['captions']:,} encoded, "
                  f"{state['cache_hits']:,} cache hits), {enc['images']:,} images encoded, "
                  f"{state['seconds']:.0f} s")


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

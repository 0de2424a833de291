"""Result files of eval's cells: where each (model, benchmark) result is written, whether
one there is whole and of the benchmark as it is now, and the fingerprints that tell."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autocomp.eval.cache import folder_name
from autocomp.formats.runs import Benchmark

READER_KEYS = ("folder", "spec", "_path")  # set by the readers, never taken from a file


def result_file(out: Path, model: str, benchmark: str) -> Path:
    """Where the result of `model` on `benchmark` (its name) is written: collision-free,
    as model folders are (subsets "a/b" and "a-b" get their own files)."""
    return Path(out) / folder_name(model) / f"{folder_name(benchmark)}.json"


def misnamed(path: Path, data: dict) -> str | None:
    """Why the result file `path` is not read as a result: None where it is named as eval
    names its (model, benchmark) inside its folder (or named it before issue 48's names).
    A copy under another name (a backup folder, a file naming another model) would
    otherwise count its items twice or borrow another result's predictions."""
    path = Path(path)
    model, benchmark = str(data.get("model")), str(data.get("benchmark"))
    canon = result_file(path.parent.parent, model, benchmark)
    legacy = path.parent.parent / folder_name(model) / f"{benchmark.replace('/', '-')}.json"
    if path in (canon, legacy):
        return None
    return (f"not named as eval names {model!r:.80} on {benchmark!r:.80} "
            f"({canon.parent.name}/{canon.name}): not read")


def one_per_cell(found: list[tuple[Path, dict]], root: Path) -> tuple[list, list]:
    """(the (file, data) read, (file, why) left out) where several well-named files hold
    one (model, benchmark): the one in `root` (where eval wrote) is read and the others
    named in one line each; with none there, none is read (never summed, never chosen
    silently)."""
    from collections import defaultdict

    by_cell: dict = defaultdict(list)
    for path, data in found:
        by_cell[(data.get("model"), data.get("benchmark"))].append((path, data))
    kept, skipped = [], []
    for (model, benchmark), got in by_cell.items():
        if len(got) == 1:
            kept += got
            continue
        home = [(p, d) for p, d in got if Path(p).parent.parent == Path(root)]
        if len(home) == 1:
            kept += home
            skipped += [(p, f"a second file for {model!r:.80} on {benchmark!r:.80} (read: "
                            f"{_rel(home[0][0], root)}): not read") for p, _ in got
                        if p != home[0][0]]
            continue
        names = ", ".join(_rel(p, root) for p, _ in got)
        skipped += [(p, f"{len(got)} files for {model!r:.80} on {benchmark!r:.80} ({names}): "
                        "none read; keep one") for p, _ in got]
    return kept, skipped


def _rel(path: Path, root: Path) -> str:
    try:
        return str(Path(path).relative_to(root))
    except ValueError:
        return Path(path).name


@dataclass(frozen=True)
class Cell:
    model: str
    bench: Benchmark

    def path(self, out: Path) -> Path:
        return result_file(out, self.model, self.bench.name)

    def legacy_path(self, out: Path) -> Path:
        """Where earlier versions wrote the result ("/" -> "-": "a/b" and "a-b" collided)."""
        return Path(out) / folder_name(self.model) / f"{self.bench.slug}.json"


def drop_legacy(cell: Cell, out: Path) -> None:
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

    from autocomp.core.own_files import read_small_json

    try:
        data = read_small_json(path)
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


def recorded_outcome(p: dict, rule: str = "strict") -> float:
    """One item's outcome under a tie rule (`autocomp eval --ties`), as its result counted
    it: strict 1 / 0, argmax 1 / 0 (a tie at the top is right), aware the tie credit
    (1 / the candidates tied at the top). Predictions written before correct_argmax was
    recorded give argmax from the tie credit (non-zero exactly when the positive is on
    top, ties included)."""
    if rule == "aware":  # no credit recorded (a hand-made file): the strict outcome
        return float(p["tie_credit"] or 0.0) if "tie_credit" in p else float(
            bool(p.get("correct")))
    if rule == "argmax":
        if "correct_argmax" in p:
            return float(bool(p["correct_argmax"]))
        return float(bool(p.get("correct")) or (p.get("tie_credit") or 0.0) > 0)
    return float(bool(p.get("correct")))

"""`autocomp compass eval`: score a COMPASS set with any scorer through the eval harness
(same batching, de-duplication and embedding cache as `autocomp eval`)."""

from __future__ import annotations

import json
from pathlib import Path

from autocomp.compass.sets import FILES, check_set, image_root
from autocomp.core.log import package_logger
from autocomp.core.records import write_text
from autocomp.eval.cache import folder_name
from autocomp.formats.runs import Benchmark

log = package_logger(__name__)


def predictions_path(compass_dir: Path, model: str, name: str,
                     results: Path | None = None) -> Path:
    """Where a model's predictions on one of the set's files are: under `results` (a
    folder `compass eval --output` wrote), by default the set's own results/."""
    base = Path(results) if results is not None else Path(compass_dir) / "results"
    return base / folder_name(model) / f"{name}.predictions.jsonl"


def set_and_results(folder: Path) -> tuple[Path, Path]:
    """(the set, its results folder) of what `compass report` was given: a set (its own
    results/), or a results folder `compass eval --output` wrote (set.json names its set)."""
    folder = Path(folder)
    marker = folder / "set.json"
    if not (folder / "manifest.json").is_file() and marker.is_file():
        try:
            return Path(json.loads(marker.read_text(encoding="utf-8"))["set"]), folder
        except (OSError, ValueError, KeyError, TypeError):
            from autocomp.core.errors import AutocompError

            raise AutocompError("cannot be read: a results folder's set.json names its "
                                "set as {\"set\": PATH}", file=marker) from None
    return folder, folder / "results"


def evaluate_compass(compass_dir: Path, models: list[str], cache_dir: Path | None = None,
                     device: str = "cpu", batch_size: int | None = None,
                     skip_existing: bool = False, output: Path | None = None,
                     patterns=(), precision: str = "fp32",
                     workers: int | None = None) -> None:
    """Score the set's files (those matching `patterns`, globs; all by default) with each
    model; predictions under `output` (default: the set's results/; another folder gets a
    set.json naming the set, so `compass report OUTPUT` finds both)."""
    import fnmatch

    from autocomp.core.errors import AutocompError
    from autocomp.eval.harness import Harness
    from autocomp.eval.scorers import load_scorer

    compass_dir = Path(compass_dir)
    manifest = check_set(compass_dir)
    digests, root = manifest.get("files", {}), image_root(manifest, compass_dir)
    names = [n for n in FILES if not patterns or any(fnmatch.fnmatch(n, p) for p in patterns)]
    if not names:
        raise AutocompError(f"no file of the set matches {', '.join(patterns)} (its files: "
                            f"{', '.join(FILES)})", file=compass_dir)
    for m in models:  # every spec checked before the first model runs
        load_scorer(m, device=device, batch_size=batch_size, precision=precision)
    if output is not None and Path(output).resolve() != (compass_dir / "results").resolve():
        Path(output).mkdir(parents=True, exist_ok=True)
        write_text(Path(output) / "set.json",
                   json.dumps({"set": str(compass_dir.resolve())}) + "\n")
    for model in models:
        harness = None
        for name in names:
            out = predictions_path(compass_dir, model, name, output)
            scored = out.with_suffix(".json")  # which file the predictions are of
            if skip_existing and out.exists() and digests.get(name) and _scored(scored) \
                    == digests[name]:
                log.info(f"skip   {model} {name} (exists)")
                continue
            if harness is None:
                out.parent.mkdir(parents=True, exist_ok=True)
                write_text(out.parent / "model.txt", model + "\n")
                scorer = load_scorer(model, device=device, batch_size=batch_size,
                                     precision=precision)
                scorer.load()  # a model that cannot load leaves no cache folder behind
                harness = Harness(scorer, root, {}, cache_dir or compass_dir / "cache",
                                  workers=workers)
            bench = Benchmark(name, "compass", 0, "", name, compass_dir / f"{name}.jsonl")
            got = harness.run(bench, out)
            write_text(scored, json.dumps({"file": f"{name}.jsonl",
                                           "sha256": digests.get(name)}))
            acc = got["metrics"]["accuracy"]
            log.info(f"done   {model} {name}: R@1 {'n/a' if acc is None else f'{acc:.1f}'} "
                 f"n={got['n_items']} {got['seconds']:.1f}s")
        if harness is not None:
            harness.close()


def _scored(path: Path) -> str | None:
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("sha256")
    except (OSError, ValueError, AttributeError):
        return None

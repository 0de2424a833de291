"""`autocomp study STUDY.yaml -o OUT`: a validity study in one command. The models of a
models file are scored on autocomp's benchmarks and on the real benchmarks they are to be
compared with, into one results folder (a killed study resumes: what was scored is kept),
then the rank agreement of every autocomp benchmark (and each task x N pooled) against
each real benchmark (its subsets pooled) is printed with its figure
(report/ranks.py: baselines left out, a two-way bootstrap over models and items).

A study file (configs/studies/validity.yaml is Table 4's 20 encoders against SugarCrepe,
Winoground, ARO, ColorSwap, SugarCrepe++ and VALSE):

  models: FILE             a models file (`- {spec: ..., label: ...}`)
  synthetic:               the run (or export) whose benchmarks are studied
    source: PATH
    benchmarks: [PATTERN]  (default: every benchmark)
  references:              the real benchmarks, each as `autocomp eval` reads it
    - {source: PATH, images: PATH, format: NAME, benchmarks: [PATTERN]}

Relative paths are read from the study file's folder; `~` is the home folder.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from autocomp.core.errors import AutocompError

KEYS = {"models", "synthetic", "references"}
SOURCE_KEYS = {"source", "images", "format", "benchmarks"}


@dataclass
class Source:
    path: Path
    images: Path | None = None
    fmt: str | None = None
    patterns: tuple = ()


@dataclass
class Study:
    models: Path
    synthetic: Source
    references: list[Source] = field(default_factory=list)


def read_study(path: Path) -> Study:
    """The study file, every problem one line naming the file and field."""
    from autocomp.core.yamlio import read_yaml

    path = Path(path)
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise AutocompError("expected a mapping with models, synthetic and references",
                            file=path)
    unknown = sorted(set(data) - KEYS)
    if unknown:
        raise AutocompError(f"unknown key {unknown[0]!r:.60} (known: {', '.join(sorted(KEYS))})",
                            file=path)
    for key in sorted(KEYS):
        if key not in data:
            raise AutocompError(f"field '{key}': missing", file=path)
    if not isinstance(data["models"], str):
        raise AutocompError(f"field 'models': expected a models file's path, got "
                            f"{data['models']!r:.60}", file=path)
    refs = data["references"]
    if not isinstance(refs, list) or not refs:
        raise AutocompError("field 'references': expected a list of {source: PATH, ...}",
                            file=path)
    return Study(_path(path, data["models"]), _source(path, data["synthetic"], "synthetic"),
                 [_source(path, r, f"references[{k}]") for k, r in enumerate(refs)])


def _path(study: Path, value: str) -> Path:
    got = Path(value).expanduser()
    return got if got.is_absolute() else study.parent / got


def _source(study: Path, entry, where: str) -> Source:
    if not isinstance(entry, dict) or not isinstance(entry.get("source"), str):
        raise AutocompError(f"field '{where}': expected {{source: PATH, ...}}, got "
                            f"{entry!r:.60}", file=study)
    unknown = sorted(set(entry) - SOURCE_KEYS)
    if unknown:
        raise AutocompError(f"field '{where}': unknown key {unknown[0]!r:.40} (known: "
                            f"{', '.join(sorted(SOURCE_KEYS))})", file=study)
    patterns = entry.get("benchmarks") or []
    if isinstance(patterns, str):
        patterns = [patterns]
    if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
        raise AutocompError(f"field '{where}.benchmarks': expected a list of patterns",
                            file=study)
    for key in ("images", "format"):
        if entry.get(key) is not None and not isinstance(entry[key], str):
            raise AutocompError(f"field '{where}.{key}': expected a string, got "
                                f"{entry[key]!r:.60}", file=study)
    images = _path(study, entry["images"]) if entry.get("images") else None
    return Source(_path(study, entry["source"]), images, entry.get("format"), tuple(patterns))


def run_study(study: Study, out: Path, device: str = "cpu", say=print) -> dict:
    """Score every model on every source into OUT/results (what is there is kept), then
    the agreement of the synthetic benchmarks with each reference: {"tables", "figures",
    "references"}."""
    from autocomp.eval.cache import slug
    from autocomp.eval.cells import Request, evaluate_request
    from autocomp.eval.modelset import model_entries
    from autocomp.formats import open_suite
    from autocomp.report.gather import gather
    from autocomp.report.rank_figure import agreement_figure
    from autocomp.report.ranks import comparisons
    from autocomp.report.ranks_table import agreement_table

    entries = model_entries(study.models)
    specs, labels = [s for s, _ in entries], {s: lab for s, lab in entries if lab}
    results = Path(out) / "results"
    prefixes: list[str] = []
    for k, source in enumerate([study.synthetic, *study.references]):
        say(f"study: scoring {len(specs)} models on {source.path} "
            f"({k + 1} of {1 + len(study.references)} sources)")
        suite = open_suite(source.path, source.fmt, source.images, None, False)
        evaluate_request(Request(source.path, specs, results, source.patterns,
                                 cache_dir=Path(out) / "cache", skip_existing=True,
                                 device=device, fmt=source.fmt, images=source.images,
                                 labels=labels, suite=suite))
        if k:  # a reference: the datasets its benchmarks are named under
            named = [b.name for b in suite.select(source.patterns).benchmarks]
            prefixes += [p for p in dict.fromkeys(n.split("/", 1)[0] for n in named)
                         if p not in prefixes]
    cells, labels = gather([results], study.models)
    ours = [r for r in cells if r["benchmark"].split("/", 1)[0] not in prefixes]
    tables, figures = [], []
    chosen = [s for s, _ in entries]
    for prefix in prefixes:
        theirs = [r for r in cells if r["benchmark"].split("/", 1)[0] == prefix]
        rows, left = comparisons(ours + theirs, prefix, models=chosen)
        tables.append(agreement_table(rows, left, labels))
        figures += agreement_figure(rows, Path(out) / "figures" /
                                    f"agreement-{slug(prefix, 60)}", labels)[0]
    return {"tables": tables, "figures": figures, "references": prefixes}

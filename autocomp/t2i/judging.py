"""`autocomp judges`: a run's own images scored by each judge (an answerer and a detector)
as `autocomp t2i -g run` scores them, one t2i output folder per judge under OUT (resumed
where a killed command stopped), for report/judges.py to set against the exact truth.

A judges file (YAML) names them:

    judges:
      - {name: pixels}                                  # the run's own validators
      - name: gemma-3-12b
        answerer: {name: transformers, options: {model: google/gemma-3-12b-it}}
      - name: gdino
        detector: {name: grounding-dino+sam2}

A judge leaves out what it keeps of the run's validators (`answerer`, `detector`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autocomp.core.errors import AutocompError


@dataclass(frozen=True)
class JudgeSpec:
    name: str
    answerer: object = None  # config.Backend, or None: the run's
    detector: object = None


def read_judges(path: Path) -> list[JudgeSpec]:
    """The judges of a YAML file; errors name the file and field."""
    from autocomp.core.yamlio import checked_mapping, read_yaml
    from autocomp.t2i.compare import judge_backend, named_entries

    data = checked_mapping(read_yaml(path), path, ("judges",),
                           "expected a mapping with the field judges")
    out = []
    for where, entry, name in named_entries(data, path, "judges", "judge",
                                            ("name", "answerer", "detector"), most=32):
        if name == "humans":
            raise AutocompError("'humans' names the annotators of `autocomp review`: name "
                                "the judge otherwise", file=path, field=f"{where}.name")
        backends = {family: judge_backend(entry[family], family, path, f"{where}.{family}")
                    for family in ("answerer", "detector") if family in entry}
        out.append(JudgeSpec(name, **backends))
    return out


def score_judges(run_dir: Path, judges: list[JudgeSpec], out: Path, patterns=(),
                 tracks=None, per_group: int | None = None, device: str = "auto",
                 batch_size: int = 8) -> dict[str, list[dict]]:
    """Judge name -> the scored records of the run's own images (one per image)."""
    from autocomp.core.records import TRACKS
    from autocomp.run import Run
    from autocomp.t2i.compare import compare
    from autocomp.t2i.generate import Model, folder_of

    if not any(r.truth for r in Run.open(run_dir).read("images")):  # before any scoring
        raise AutocompError("the run's images carry no truth (what was drawn): judges are "
                            "measured on runs of the embedded generator (generate: {name: "
                            "procedural})", file=run_dir)
    own = Model("run", own=True)
    scored = {}
    for judge in judges:
        folder = Path(out) / folder_of(judge.name)
        got: dict = {}
        compare(run_dir, [own], folder, 1, patterns, tracks or TRACKS, per_group, device,
                batch_size=batch_size, answerer=judge.answerer, detector=judge.detector,
                scored_into=got)
        scored[judge.name] = got[own.name]
    return scored

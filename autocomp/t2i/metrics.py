"""The metrics `autocomp t2i` scores each image with: the registry's "metric" family, a
column of Table 16 each, in registration order. A metric is a class with

  column   the table's heading ("TIFA (%)")
  scale    what a perfect image scores (printed as 100 x value / scale: a share in
           percent; CLIPScore, already 100 x cosine, as it is)
  verdict  a score of 1 says faithful and below 1 unfaithful (its precision and recall
           of 'unfaithful' against the exact truth are tabled)
  score(batch, judge) -> one float (or None: does not apply) per image of the batch

Each image of a batch is a `Scored`: its array, prompt, task, the probes as answered
(`rows`: answer, right, dsg, p, geneval, truth), the detections, whether it survived the
validation cascade and GenEval's checks; `judge` holds the models (`judge.vqa`,
`judge.clip`: None unless asked for). The metric contract (metric_problems) runs on
every batch, built-ins included.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from autocomp.core import registry
from autocomp.core.families import required

CLIP_SCALE = 100.0


@dataclass
class Scored:
    """One image as every metric sees it."""

    array: np.ndarray
    prompt: object  # t2i/generate.py Prompt: id, text, graph, task, n, track
    task: object
    rows: list[dict]  # its probes as answered (t2i/score.py; `p`: soft answers)
    detections: list
    survived: bool
    checks: list[bool] = field(default_factory=list)  # GenEval's checks

    @property
    def image(self):
        from PIL import Image

        return Image.fromarray(self.array)


class Metric:
    column: ClassVar[str] = ""
    scale: ClassVar[float] = 1.0
    verdict: ClassVar[bool] = False
    missing: ClassVar[str] = ""  # why an image gets None, as Table 16's note says it

    @required
    def score(self, batch: list[Scored], judge) -> list[float | None]:
        raise NotImplementedError


class Tifa(Metric):
    """TIFA-style: the share of the scene graph's questions answered right."""

    column, verdict = "TIFA (%)", True

    def score(self, batch, judge):
        return [float(np.mean([r["right"] for r in s.rows])) for s in batch]


class Dsg(Metric):
    """DSG-style: the same, a binding counting only when its objects were found."""

    column, verdict = "DSG (%)", True

    def score(self, batch, judge):
        return [float(np.mean([r["dsg"] for r in s.rows])) for s in batch]


class SoftTifaAm(Metric):
    """Soft-TIFA AM (GenEval 2): the mean over the probes of the answerer's probability
    of the expected answer (an atom-level estimate); None where it gives none."""

    column = "Soft-TIFA AM (%)"
    missing = "the answerer gives no probabilities; the transformers and vllm answerers do"

    def score(self, batch, judge):
        return [_soft(s.rows, np.mean) for s in batch]


class SoftTifaGm(Metric):
    """Soft-TIFA GM (GenEval 2): the geometric mean of the same probabilities (a
    prompt-level estimate: near 0 when any probe is); 0 when any probability is 0."""

    column = "Soft-TIFA GM (%)"
    missing = SoftTifaAm.missing

    def score(self, batch, judge):
        return [_soft(s.rows, _geometric_mean) for s in batch]


def _soft(rows: list[dict], mean) -> float | None:
    ps = [r.get("p") for r in rows]
    if not ps or any(p is None for p in ps):
        return None
    return float(min(max(mean(np.asarray(ps, np.float64)), 0.0), 1.0))


def _geometric_mean(ps: np.ndarray) -> float:
    from scipy.stats import gmean

    with np.errstate(divide="ignore"):  # a probability of 0: the mean is 0
        return float(gmean(ps))


class GenEvalChecks(Metric):
    """GenEval-style checks from the detector alone: the share passed."""

    column = "GenEval checks (%)"
    missing = "no check applies (no color or spatial relation, nothing to count)"

    def score(self, batch, judge):
        return [float(np.mean(s.checks)) if s.checks else None for s in batch]


class GenEvalAll(Metric):
    """GenEval's per-image verdict: every check passed."""

    column, verdict = "GenEval all (%)", True
    missing = GenEvalChecks.missing

    def score(self, batch, judge):
        return [float(all(s.checks)) if s.checks else None for s in batch]


class VqaScore(Metric):
    """P("Yes" | image, 'Does this figure show "{prompt}"?') from judge.vqa."""

    column = "VQAScore (%)"
    missing = "no VQAScore model asked for: --vqascore"

    def score(self, batch, judge):
        if judge.vqa is None:
            return [None] * len(batch)
        got = judge.vqa.score_pairs([(s.image, [s.prompt.text]) for s in batch])
        return [float(g[0]) for g in got]


class ClipScore(Metric):
    """100 x max(cos(image, prompt), 0) from judge.clip (Auto-Comp Table 16)."""

    column, scale = "CLIPScore", CLIP_SCALE
    missing = "no dual encoder asked for: --clipscore"

    def score(self, batch, judge):
        if judge.clip is None:
            return [None] * len(batch)
        images = np.asarray(judge.clip.encode_images([s.image for s in batch]), np.float64)
        texts = np.asarray(judge.clip.encode_texts([s.prompt.text for s in batch]), np.float64)
        return [CLIP_SCALE * max(float(c), 0.0) for c in (images * texts).sum(axis=1)]


class Survived(Metric):
    """Whether the image passes the run's validation cascade."""

    column = "Survival (%)"

    def score(self, batch, judge):
        return [float(s.survived) for s in batch]


def metrics() -> dict[str, Metric]:
    """Every registered metric by key, in registration order (one instance each)."""
    return {name: _made(name) for name in registry.names("metric")}


_instances: dict[type, Metric] = {}  # one instance per metric class


def _made(name: str) -> Metric:
    cls = registry.resolve("metric", name)
    if cls not in _instances:
        _instances[cls] = cls()
    return _instances[cls]


def forget(name: str) -> None:
    """Drop the metric instances made so far (registry.unregister: `name` is gone)."""
    _instances.clear()


def scored_by(batch: list[Scored], judge) -> list[dict]:
    """Each metric's value per image of the batch ({key: value}); what a metric gives is
    held to the metric contract on every batch (one number or None per image, in [0,
    scale]), or it is refused in one line naming it."""
    from autocomp.core.plugins import every_batch, plugin_code

    out: list[dict] = [{} for _ in batch]
    for key, metric in metrics().items():
        with plugin_code("metric", key, "scoring images"):
            values = metric.score(batch, judge)
        every_batch("metric", key, metric_problems(metric, values, len(batch)))
        for got, value in zip(out, values, strict=True):
            got[key] = None if value is None else float(value)
    return out


def metric_problems(metric, values, images: int) -> list[str]:
    """The metric contract on what one batch gave: one finite number or None per image, in
    [0, scale]; a column heading; scale a positive number."""
    problems = []
    if not isinstance(metric.column, str) or not metric.column:
        problems.append("it has no column heading (class attribute column)")
    if isinstance(metric.scale, bool) or not isinstance(metric.scale, int | float) \
            or metric.scale <= 0:
        problems.append(f"its scale is {metric.scale!r}, not a positive number")
    if not isinstance(values, list | tuple) or len(values) != images:
        got = len(values) if hasattr(values, "__len__") else type(values).__name__
        return [*problems, f"score() gave {got} values for {images} images (a list, one per "
                           "image)"]
    for v in values:
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, int | float | np.floating) \
                or not np.isfinite(v) or not 0 <= v <= metric.scale:
            problems.append(f"score() gave {v!r}: a value is a number in [0, {metric.scale}] "
                            "or None")
            break
    return problems

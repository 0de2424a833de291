"""Model-selection metrics (Auto-Comp Tables 15 and 16), for several runs side by side.

  Table 15  diversity of the LLM writer's contextual captions, per task and N:
            Distinct-n (n = 2, 3, 4) as Li et al. (2016) define it: distinct word n-grams
            of the group's captions over all their words (tokens); beside it the variant
            over all n-grams (the share of n-grams that are new, which many repositories
            compute under the same name), labelled; semantic diversity: 1 - the mean
            cosine similarity of the captions' text embeddings over all pairs i != j.
  Table 16  faithfulness of the image generator: CLIPScore, the mean over images of
            100 x max(cos(image, prompt caption), 0) (the torchmetrics form, which Table 16's
            numbers follow), per track; beside it the share of images the run's validators
            passed, when the run was validated.
Distinct-n falls as a group grows, so groups are compared at one size: each (task, N) group
is cut to the smallest size it has among the runs, by a seeded draw (`equalize`).
Embeddings come from any dual encoder the harness loads, through its cache.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from pathlib import Path

import numpy as np

from autocomp.core.errors import AutocompError
from autocomp.report.tables import Table

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
ORDERS = (2, 3, 4)


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def distinct_n(texts: list[str], n: int, per: str = "ngrams") -> float | None:
    """Distinct n-grams over every caption's own n-grams, divided by all n-grams (per=
    "ngrams") or, as Li et al. (2016) define Distinct-n, by all words (per="tokens");
    None where there is no n-gram."""
    split = list(map(words, texts))
    grams = [tuple(w[i:i + n]) for w in split for i in range(len(w) - n + 1)]
    if not grams:
        return None
    return len(set(grams)) / (len(grams) if per == "ngrams" else sum(map(len, split)))


def mean_pairwise_cosine(vectors: np.ndarray) -> float | None:
    """The mean of v_i . v_j over all ordered pairs i != j of L2-normalised rows, exactly,
    in O(n): (|sum v|^2 - sum |v_i|^2) / (n (n - 1))."""
    v = np.asarray(vectors, dtype=np.float64)
    n = len(v)
    if n < 2:
        return None
    total = v.sum(axis=0)
    return float((total @ total - (v * v).sum()) / (n * (n - 1)))


def clip_score(image_vectors: np.ndarray, text_vectors: np.ndarray) -> np.ndarray:
    """100 x max(cos, 0) per (image, caption) row pair."""
    cos = (np.asarray(image_vectors, np.float64) * np.asarray(text_vectors, np.float64)).sum(1)
    return 100.0 * np.maximum(cos, 0.0)


class RunView:
    """What the selection tables read from one run directory."""

    def __init__(self, directory: Path):
        from autocomp.run import Run

        self.run = Run.open(directory)
        name = self.run.config.name
        self.label = f"{name} ({_backend(self.run.config.captions.writer)})"
        self.generator = f"{name} ({_backend(self.run.config.generate.generator)})"

    def contextual(self) -> dict[tuple, list[str]]:
        """(task, N) -> the contextual captions that passed the check, in record order."""
        out = defaultdict(list)
        for r in self.run.records("captions"):
            if isinstance(r.get("contextual"), str) and r.get("passed", True):
                out[(r["task"], r["n"])].append(r["contextual"])
        return dict(out)

    def images(self) -> list[dict]:
        """{image, caption, track, passed} for every generated image (passed None when the
        run has no validation records)."""
        captions = {r["id"]: r for r in self.run.records("captions")}
        try:
            verdicts = {r["id"]: r["passed"] for r in self.run.records("validation")}
        except AutocompError:
            verdicts = {}
        out = []
        for r in self.run.records("images"):
            if r.get("generator"):  # a compared generator's (generate.compare)
                continue
            cap = captions.get(r["concept"], {}).get(r["track"])
            if isinstance(cap, str):
                out.append({"image": r["image"], "caption": cap, "track": r["track"],
                            "task": r["task"], "n": r["n"], "passed": verdicts.get(r["id"])})
        return out


def _backend(backend) -> str:
    model = (backend.options or {}).get("model")
    return backend.name + (f" {model}" if model else "")


def equalize(groups: list[dict], seed: int = 0) -> list[dict]:
    """Each run's (task, N) groups cut to that group's smallest size over the runs."""
    sizes = defaultdict(list)
    for g in groups:
        for key, texts in g.items():
            sizes[key].append(len(texts))
    out = []
    for g in groups:
        cut = {}
        for key, texts in g.items():
            k = min(sizes[key])
            cut[key] = (texts if len(texts) == k
                        else random.Random(f"{seed}:{key}").sample(texts, k))
        out.append(cut)
    return out


class Encoder:
    """Text and image vectors from a dual encoder, through the harness's cache."""

    def __init__(self, spec: str, device: str, batch_size: int | None, cache_dir):
        from autocomp.eval.scorers import load_scorer

        self.scorer = load_scorer(spec, device=device, batch_size=batch_size)
        if not self.scorer.embeds_images:
            raise AutocompError(f"'{spec}' has no image and text embeddings; the selection "
                                "metrics need a dual encoder (open_clip:..., hf:...)")
        self.cache_dir = cache_dir

    def texts(self, texts: list[str]) -> np.ndarray:
        return self._with(Path("."), lambda h: h.text_vectors(texts))

    def images(self, root: Path, names: list[str]) -> np.ndarray:
        return self._with(root, lambda h: h.image_vectors(names))

    def _with(self, root: Path, fn):
        from autocomp.eval.harness import Harness

        h = Harness(self.scorer, root, {}, self.cache_dir)
        try:
            return fn(h)
        finally:
            h.close()


def _f(x, digits=2) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def diversity_table(views: list[RunView], encoder: Encoder | None, seed: int = 0,
                    equal: bool = True) -> tuple[Table, list[dict]]:
    groups = [v.contextual() for v in views]
    if equal:
        groups = equalize(groups, seed)
    rows, data = [], []
    for view, g in zip(views, groups, strict=True):
        for (task, n), texts in sorted(g.items()):
            d = {f"distinct_{k}": distinct_n(texts, k, "tokens") for k in ORDERS}
            d.update({f"distinct_{k}_per_ngram": distinct_n(texts, k) for k in ORDERS})
            sim = (mean_pairwise_cosine(encoder.texts(texts))
                   if encoder is not None and texts else None)
            d["semantic_diversity"] = None if sim is None else 1.0 - sim
            data.append({"run": str(view.run.dir), "label": view.label, "task": task, "n": n,
                         "captions": len(texts), **d})
            rows.append([view.label, task, f"N = {n}", str(len(texts)),
                         *[_f(d[f"distinct_{k}"]) for k in ORDERS],
                         *[_f(d[f"distinct_{k}_per_ngram"]) for k in ORDERS],
                         _f(d["semantic_diversity"])])
    header = ["Writer (run)", "Task", "Complexity", "Captions",
              *[f"Distinct-{k} (/ words)" for k in ORDERS],
              *[f"Distinct-{k} (/ {k}-grams)" for k in ORDERS], "Semantic div. (1 - mean cos)"]
    if not rows:
        raise AutocompError("no contextual captions in these runs (the minimal track alone "
                            "has nothing to compare)")
    return Table("Table 15: contextual caption diversity per writer", header, rows), data


def faithfulness_table(views: list[RunView], encoder: Encoder) -> tuple[Table, list[dict]]:
    rows, data = [], []
    for view in views:
        by_track = defaultdict(list)
        for rec in view.images():
            by_track[rec["track"]].append(rec)
        for track, recs in sorted(by_track.items(), key=lambda kv: kv[0] != "minimal"):
            img = encoder.images(view.run.dir, [r["image"] for r in recs])
            txt = encoder.texts([r["caption"] for r in recs])
            scores = clip_score(img, txt)
            judged = [r["passed"] for r in recs if r["passed"] is not None]
            passed = 100.0 * sum(judged) / len(judged) if judged else None
            data.append({"run": str(view.run.dir), "label": view.generator, "track": track,
                         "images": len(recs), "clip_score": float(scores.mean()),
                         "validated_percent": passed})
            rows.append([view.generator, track, str(len(recs)), _f(float(scores.mean())),
                         _f(passed, 1)])
    header = ["Generator (run)", "Track", "Images", "CLIPScore", "Validated (%)"]
    if not rows:
        raise AutocompError("no generated images in these runs")
    return Table(f"Table 16: image faithfulness, CLIPScore with {encoder.scorer.spec}",
                 header, rows), data

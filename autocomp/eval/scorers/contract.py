"""The scorer contract (autocomp/contracts.py has every family's): what a scorer's methods
must return, checked on a few images and captions. A scorer registered by a plugin is
checked when it is loaded (load_scorer), before it scores anything."""

from __future__ import annotations

import numpy as np

ATOL = 1e-4  # batch vs one by one (float32 forward passes in another batch shape)


def scorer_problems(scorer, images, texts) -> list[str]:
    """The contract of a dual encoder (encode_images, encode_texts) or a text scorer
    (score_texts), on a few PIL images and captions."""
    problems: list[str] = []
    if getattr(scorer, "embeds_images", False):
        t = _matrix(scorer.encode_texts(texts), len(texts), "encode_texts", problems)
        v = _matrix(scorer.encode_images(images), len(images), "encode_images", problems)
        if t is None or v is None:
            return problems
        if t.shape[1] != v.shape[1]:
            problems.append(f"caption vectors have {t.shape[1]} dimensions, image vectors "
                            f"{v.shape[1]}")
        for name, x in (("encode_texts", t), ("encode_images", v)):
            norms = np.linalg.norm(x, axis=1)
            if not np.allclose(norms, 1, atol=1e-3):
                problems.append(f"{name} vectors are not L2-normalised (norms "
                                f"{norms.min():.3f}-{norms.max():.3f}); the harness scores "
                                "pairs by their dot product")
        _same(problems, "encode_texts", t, [scorer.encode_texts([x]) for x in texts])
        _same(problems, "encode_images", v, [scorer.encode_images([x]) for x in images])
        _same(problems, "encode_texts called twice", t, [scorer.encode_texts(texts)])
    elif getattr(scorer, "texts_only", False):  # a sentence-embedding model (text:)
        t = _matrix(scorer.encode_texts(texts), len(texts), "encode_texts", problems)
        if t is not None:
            norms = np.linalg.norm(t, axis=1)
            if not np.allclose(norms, 1, atol=1e-3):
                problems.append(f"encode_texts vectors are not L2-normalised (norms "
                                f"{norms.min():.3f}-{norms.max():.3f})")
            _same(problems, "encode_texts", t, [scorer.encode_texts([x]) for x in texts])
            _same(problems, "encode_texts called twice", t, [scorer.encode_texts(texts)])
    elif getattr(scorer, "scoring", None) == "text":
        s = _matrix(scorer.score_texts(texts), len(texts), "score_texts", problems)
        if s is not None:
            _same(problems, "score_texts", s, [scorer.score_texts([x]) for x in texts])
            _same(problems, "score_texts called twice", s, [scorer.score_texts(texts)])
    elif getattr(scorer, "scores_pairs", False):
        _pair_problems(scorer, images, texts, problems)
    else:
        problems.append(f"a scorer whose scoring is {getattr(scorer, 'scoring', None)!r}: "
                        "its contract is item_scorer_problems")
    return problems


def _pair_problems(scorer, images, texts, problems: list[str]) -> None:
    """A pair scorer: one finite score per caption of each image, the same when the
    images come one by one or each caption alone, and the same twice."""
    jobs = [(image, list(texts)) for image in images]
    whole = scorer.score_pairs(jobs)
    if len(whole) != len(jobs):
        problems.append(f"score_pairs gave {len(whole)} answers for {len(jobs)} images")
        return
    m = _matrix(np.stack([np.asarray(w, dtype=np.float32).reshape(-1) for w in whole]),
                len(images), "score_pairs", problems)
    if m is None:
        return
    if m.shape[1] != len(texts):
        problems.append(f"score_pairs gave {m.shape[1]} scores for {len(texts)} captions")
        return
    alone = [np.array([[scorer.score_pairs([(image, [t])])[0][0] for t in texts]])
             for image in images]
    _same(problems, "score_pairs one caption at a time", m, alone)
    _same(problems, "score_pairs called twice", m,
          [np.stack(scorer.score_pairs(jobs)).astype(np.float64)])


def item_scorer_problems(scorer, entries: list[tuple]) -> list[str]:
    """The contract of a scorer that sees whole items, on entries as the harness makes
    them (Harness.item_entries)."""
    problems: list[str] = []
    got = scorer.score_items(entries)
    if not isinstance(got, list) or len(got) != len(entries):
        return [f"score_items returned {type(got).__name__} of "
                f"{len(got) if hasattr(got, '__len__') else '?'} for {len(entries)} entries"]
    for (item, cands, _, _), scores in zip(entries, got, strict=True):
        scores = np.asarray(scores, dtype=np.float64)
        if scores.shape != (len(cands),) or not np.isfinite(scores).all():
            problems.append(f"item {item.get('id')!r}: scores of shape {scores.shape} for "
                            f"{len(cands)} candidates, or not finite")
    whole = [list(map(float, s)) for s in got]
    if whole != [list(map(float, s)) for s in scorer.score_items(entries)]:
        problems.append("score_items gives other scores the second time")
    if whole != [list(map(float, scorer.score_items([e])[0])) for e in entries]:
        problems.append("score_items: a batch differs from the same entries one by one")
    return problems


def _matrix(x, rows: int, name: str, problems: list[str]):
    if not isinstance(x, np.ndarray):
        problems.append(f"{name} returned {type(x).__name__}, not a numpy array")
        return None
    if x.dtype != np.float32:
        problems.append(f"{name} returned {x.dtype}, not float32")
    if x.ndim != 2 or x.shape[0] != rows or x.shape[1] < 1:
        problems.append(f"{name} returned shape {x.shape} for {rows} inputs (rows, size)")
        return None
    if not np.isfinite(x).all():
        problems.append(f"{name} returned non-finite values")
    return np.asarray(x, np.float64)


def _same(problems: list[str], name: str, batch, parts) -> None:
    whole = np.concatenate([np.asarray(p, np.float64) for p in parts])
    if whole.shape != batch.shape or not np.allclose(whole, batch, atol=ATOL):
        problems.append(f"{name}: a batch differs from the same inputs one by one")


def probe_inputs():
    """A few small images and captions for a scorer's contract at load time."""
    from PIL import Image

    images = [Image.new("RGB", (32, 32), c) for c in ((220, 30, 30), (30, 60, 200))]
    return images, ["a red cube", "a blue sphere to the left of a red cube", "two cones"]


def checked_at_load(scorer, family: str, spec: str) -> None:
    """A plugin scorer held to its contract when a model of it is first loaded, in one
    line (item scorers, which need whole items, are checked on every batch of scores:
    eval/score_checks.py)."""
    from autocomp.core.plugins import first_use

    if not any(getattr(scorer, k, False) for k in ("embeds_images", "texts_only",
                                                   "scores_pairs")) \
            and getattr(scorer, "scoring", None) != "text":
        return
    first_use("scorer", family, lambda: scorer_problems(scorer, *probe_inputs()), key=spec,
              about=f"model '{spec}'")

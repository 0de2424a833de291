"""Behaviour contracts per plugin family, as a plugin's own tests (and ours, on every
built-in and every docs/extending.md example: tests/test_contracts.py) check them. Each
returns the list of problems found, empty when the entry keeps its family's contract.

  scorer  dual encoders: finite float32 vectors, one size for images and captions,
          L2-normalised; text scorers: finite float32, one row per caption; both: a batch
          gives what one-by-one calls give, and calling twice gives the same.
  item scorers (they see whole items: reference, vlm, blind:choice): one finite score per
          candidate of each entry, the same twice, and a batch equal to one by one.
  check   returns a CheckResult named as the check (passed a bool, reason a string,
          evidence a JSON-able dict), the same twice, and check_many equal to check one by
          one.
  format  a Suite whose every benchmark yields items the harness accepts: a unique string
          id, a positive caption and negatives with captions (or a matrix item: images,
          captions, truth of matching shape), and images that exist.
  kind    a vocabulary of its entries reads; the procedural generator can draw its look
          (every look field is the generator's own or painted by the kind); drawn by the
          procedural generator on a few shapes, on both tracks, each value changes the
          pixels (no two values draw the same image; a painted value changes the object)
          and the pixels answerer reads every value back.
"""

from __future__ import annotations

import json

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
    elif getattr(scorer, "kind", None) == "text":
        s = _matrix(scorer.score_texts(texts), len(texts), "score_texts", problems)
        if s is not None:
            _same(problems, "score_texts", s, [scorer.score_texts([x]) for x in texts])
            _same(problems, "score_texts called twice", s, [scorer.score_texts(texts)])
    elif getattr(scorer, "scores_pairs", False):
        _pair_problems(scorer, images, texts, problems)
    else:
        problems.append(f"scorer of kind {getattr(scorer, 'kind', None)!r}: its contract "
                        "is item_scorer_problems")
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


def check_problems(check, samples) -> list[str]:
    """The contract of a validation check on a few Samples (validators/checks.py)."""
    from autocomp.validators.base import CheckResult

    problems: list[str] = []
    one = [check.check(s) for s in samples]
    for result in one:
        if not isinstance(result, CheckResult):
            return [f"check() returned {type(result).__name__}, not a CheckResult"]
        if result.name != check.name:
            problems.append(f"a result is named {result.name!r}, the check {check.name!r}")
        if not isinstance(result.passed, bool) or not isinstance(result.reason, str):
            problems.append("a result's passed is not a bool or its reason not a string")
        try:
            json.dumps(result.evidence)
        except TypeError as exc:
            problems.append(f"a result's evidence cannot be written to a record ({exc})")
    if [r.to_dict() for r in one] != [check.check(s).to_dict() for s in samples]:
        problems.append("check() gives another result the second time")
    if [r.to_dict() for r in check.check_many(list(samples))] != [r.to_dict() for r in one]:
        problems.append("check_many() differs from check() one by one")
    if not check.label or not set(check.tracks) <= {"minimal", "contextual"}:
        problems.append("a check needs a label (its funnel column) and tracks among "
                        "minimal, contextual")
    return problems


def suite_problems(suite, limit: int = 200) -> list[str]:
    """The contract of a format: what its opener returned, its first `limit` items per
    benchmark read as the harness reads them."""
    from pathlib import Path

    from autocomp.eval.items import captions_of, image_refs, split_ref
    from autocomp.eval.matrix import is_matrix, truth_of
    from autocomp.formats.suite import Suite

    if not isinstance(suite, Suite):
        return [f"the opener returned {type(suite).__name__}, not a Suite"]
    problems: list[str] = []
    if not suite.benchmarks:
        problems.append("the suite has no benchmark")
    for bench in suite.benchmarks:
        seen: set[str] = set()
        for k, item in enumerate(bench.items()):
            if k >= limit:
                break
            where = f"{bench.name}: item {item.get('id', k)!r}"
            if not isinstance(item.get("id"), str) or item["id"] in seen:
                problems.append(f"{where}: the id is not a string, or repeats")
            seen.add(str(item.get("id")))
            try:
                captions, refs = captions_of(item), image_refs(item)
            except (KeyError, TypeError) as exc:
                problems.append(f"{where}: the harness cannot read it ({exc!r})")
                continue
            if len(captions) < 2 or not all(isinstance(c, str) and c for c in captions):
                problems.append(f"{where}: fewer than two captions, or an empty one")
            if is_matrix(item) and np.asarray(truth_of(item)).shape != (len(refs),
                                                                        len(captions)):
                problems.append(f"{where}: truth is not images x captions")
            for ref in refs:
                path = Path(split_ref(ref)[0])
                where_found = [path] if path.is_absolute() else [
                    Path(folder) / path for folder in (suite.root, *suite.also)]
                if not any(p.is_file() for p in where_found):
                    problems.append(f"{where}: image {ref} is not a file")
    return problems


def kind_problems(name: str, entries: list[dict], shapes=("cube", "sphere", "torus", "capsule"),
                  size: int = 256) -> list[str]:
    """The contract of the kind registered as `name`, on vocabulary entries of it (value
    kinds: `{name, <field>: value}`, drawn on each shape alone; geometry kinds: relation
    entries, drawn between consecutive shapes). Kinds the generator draws only in tasks of
    their own (numerals: alone False) are checked for their look, not drawn here."""
    from autocomp.concepts import drawn
    from autocomp.concepts.task import AttributeTask, RelationTask
    from autocomp.concepts.vocab import load_vocabulary, parse_vocabulary
    from autocomp.core.errors import AutocompError

    kind = drawn.kind(name)
    relation = kind.of == "relations"
    try:
        values = parse_vocabulary({"name": f"{name}-contract", "entries": entries,
                                   "kind": "relations" if relation else "attributes"},
                                  f"<{name} contract>")
    except AutocompError as exc:
        return [f"its entries do not read: {exc}"]
    problem = None if relation else kind.look_problem()
    if problem or not (relation or kind.alone):
        return [problem] if problem else []
    cls = RelationTask if relation else AttributeTask
    task = cls(f"{name}-contract", load_vocabulary("shapes"), values, (2 if relation else 1,))
    drawn_by = [e.name for e in values.entries if e.drawn_by != name]
    if drawn_by:
        return [f"entries {drawn_by} are not drawn by kind '{name}'"]
    groups = [list(shapes[i:i + 2]) for i in range(0, len(shapes) - 1, 2)] if relation else [
        [s] for s in shapes]
    problems: list[str] = []
    for names in groups:
        for track in ("minimal", "contextual"):
            problems += _drawn_and_read(task, names, track, size)
    if not relation:
        problems += _paint_problems(kind, values, shapes[0])
    return problems


def _drawn_and_read(task, names: list[str], track: str, size: int) -> list[str]:
    """Each value of the task drawn on `names` (the same seed): images told apart, each
    value read back by the pixels answerer."""
    import hashlib

    from autocomp.synth.base import ImageRequest
    from autocomp.synth.procedural import ProceduralGenerator
    from autocomp.validators.blobs import ColorBlobDetector
    from autocomp.validators.pixels import PixelAnswerer

    gen, detector, answerer = ProceduralGenerator(size=size), ColorBlobDetector(), PixelAnswerer()
    problems, seen = [], {}
    for value in task.values.names:
        graph = task.graph(names, [value] * task.value_slots(len(names)))
        req = ImageRequest(f"{value}-{track}", graph, task, track, 7, "")
        made = gen.generate_one(req)
        pixels = np.asarray(made.image.convert("RGB"))
        where = f"'{value}' on {' and '.join(names)} ({track})"
        digest = hashlib.sha256(pixels.tobytes()).hexdigest()
        if digest in seen:
            problems.append(f"{where} draws the same image as '{seen[digest]}'")
        seen[digest] = value
        if made.truth.get("unshown"):
            problems.append(f"{where} cannot show: {made.truth['unshown'][0]['why']}")
            continue
        detections = detector.detect(pixels, list(graph.names))
        for q, a in zip(task.questions(graph), answerer.answer(pixels, task.questions(graph),
                                                                detections), strict=True):
            if a["answer"] != q.expected:
                problems.append(f"{where} is read back as '{a['answer']}' ({a['evidence']})")
    return problems


def _paint_problems(kind, values, shape: str) -> list[str]:
    """A painting kind's paint changes the object, value by value."""
    from autocomp.synth.looks import plain_look, render_look, value_look
    from autocomp.synth.shapes import pattern_pitch

    if not kind.paints:
        return []
    box, rgb = (0, 0, 96, 96), (60, 130, 230)
    plain = np.asarray(render_look(shape, box, rgb, plain_look(), 2, pattern_pitch(256))[0])
    return [f"value '{e.name}' does not change the pixels (paint() left the object as it was)"
            for e in values.entries
            if np.array_equal(plain, np.asarray(render_look(
                shape, box, rgb, value_look(e.name, e), 2, pattern_pitch(256))[0]))]

"""The validation cascade of one image (Auto-Comp Phase 2; docs/methods.md section 3).

  objects     detected classes and counts equal the concept's (a pair noun: 1 or 2)
  background  minimal track only: >= 70% of the non-object pixels have grayscale >= 190
              (its options, validate.background in a run config); "object" pixels are
              those inside the detector's boxes (the paper's rule) or, with region
              "masks", inside its segmentation masks (a box where a detection has no mask)
  attributes  every binding question answered with the concept's value
A check runs only if the ones before it passed, as in the paper (later checks would only
be wasted on an image already rejected). Each check is a Check class registered in the
registry's "check" family, whose order is the cascade's. A check with settings declares
them once, as the fields of its `Options` dataclass (core/fields.py: default, range, help):
a run config's `validate.<check name>` section sets them, checked like every option.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from autocomp.concepts.task import Task
from autocomp.core import registry
from autocomp.core.families import required
from autocomp.core.fields import choice, integer, number
from autocomp.core.records import TRACKS
from autocomp.core.scene import SceneGraph
from autocomp.validators.background import background_check
from autocomp.validators.base import CheckResult, Detection


@dataclass(frozen=True)
class BackgroundOptions:
    min_fraction: float = number(0.7, 0.0, 1.0, doc="share of the non-object pixels that "
                                 "must be bright (the paper: 70%)")
    min_gray: int = integer(190, minimum=0, maximum=255, doc="grayscale a bright pixel "
                            "reaches (the paper: 190)")
    region: str = choice("boxes", ("boxes", "masks"), doc="what counts as object: the "
                         "detector's boxes (the paper) or its segmentation masks")


@dataclass(frozen=True)
class Sample:
    """What a check looks at: the image, the concept, the detector's findings."""

    image: np.ndarray
    graph: SceneGraph
    task: object
    track: str
    detections: list[Detection]
    answerer: object


def objects_check(detections: list[Detection], graph: SceneGraph, task: Task) -> CheckResult:
    want = task.object_counts(graph)
    got = Counter(d.label for d in detections if d.label is not None)
    unnamed = [list(d.box) for d in detections if d.label is None]
    problems = []
    for name, count in want.items():
        allowed = {count, 2 * count} if task.noun(name).pair else {count}
        if got.get(name, 0) not in allowed:
            problems.append(f"{name}: expected {count}, found {got.get(name, 0)}")
    for name, count in got.items():
        if name not in want:
            problems.append(f"{name}: not in the concept, found {count}")
    if unnamed:
        problems.append(f"{len(unnamed)} unrecognised blob(s)")
    evidence = {"detections": [d.to_dict() for d in detections]}
    if problems:
        return CheckResult("objects", False, "; ".join(problems), evidence)
    return CheckResult("objects", True, f"found {', '.join(sorted(want))}", evidence)


def attributes_results(samples: list[Sample]) -> list[CheckResult]:
    """The attribute check of several images: all their questions to the answerer at once
    when it takes a batch (`answer_many`), image by image otherwise."""
    if not samples:
        return []
    questions = [s.task.questions(s.graph) for s in samples]
    jobs = [(s.image, qs, s.detections) for s, qs in zip(samples, questions, strict=True)]
    answers = answer_all(samples[0].answerer, jobs)
    return [attributes_result(qs, got, s.detections)
            for s, qs, got in zip(samples, questions, answers, strict=True)]


def answer_all(answerer, jobs: list[tuple]) -> list[list[dict]]:
    """The answers to each (image, questions, detections) job: in one call for an answerer
    that takes a batch (`answer_many`: a VLM), image by image otherwise."""
    many = getattr(answerer, "answer_many", None)
    return many(jobs) if many else [answerer.answer(*job) for job in jobs]


def detect_all(detector, images: list, names: list[list[str]]) -> list:
    """The detections of each image (`names`: the objects to look for in each): in one
    call for a detector that takes a batch (GroundingDINO), image by image otherwise."""
    many = getattr(detector, "detect_many", None)
    if many is not None:
        return many(images, names)
    return [detector.detect(image, n) for image, n in zip(images, names, strict=True)]


def attributes_result(qs, answers, detections) -> CheckResult:
    """Every binding question answered with the concept's value (whole word, no other
    choice); a relation's answer beside what the boxes show."""
    wrong = []
    evidence = {"answers": []}
    for q, a in zip(qs, answers, strict=True):
        ok = names_only(a["answer"], q.expected, q.choices)
        entry = {"question": q.text.split(" Answer with")[0], "expected": q.expected,
                 "answer": a["answer"], "correct": ok, "evidence": a.get("evidence", {})}
        if q.about_relation:
            entry["geometry"] = geometry_cross_check(q, detections, a["answer"])
        evidence["answers"].append(entry)
        if not ok:
            wrong.append(f"{q.text.split(' Answer with')[0]} expected {q.expected}, "
                         f"answered {a['answer']}")
    if wrong:
        return CheckResult("attributes", False, "; ".join(wrong), evidence)
    return CheckResult("attributes", True, f"{len(qs)} of {len(qs)} answers right", evidence)


def geometry_cross_check(q, detections, answer: str) -> dict:
    """The relation the detector's boxes show (GenEval rule), beside the answer, so a
    disagreement between the VQA model and the geometry is visible in the record."""
    from autocomp.validators.pixels import UNKNOWN, read_relation

    def box(name):
        found = [d for d in detections if d.label == name]
        return found[0].box if len(found) == 1 else None

    s, o = box(q.subject), box(q.object)
    if s is None or o is None:
        return {"relation": None, "why": "no single box for each object"}
    seen = read_relation(s, o, q.hints)
    return {"relation": None if seen == UNKNOWN else seen,
            "agrees_with_answer": names_only(answer, seen, q.choices) if seen != UNKNOWN
            else None,
            "agrees_with_concept": seen == q.expected}


def names_only(answer: str, expected: str, choices) -> bool:
    """The answer names the expected value as a whole phrase and no other choice."""
    from autocomp.concepts.vocab import answer_words

    # punctuation set aside on both sides: a value "sky-blue" is answered "sky blue"
    text = f" {answer_words(answer)} "
    named = {c for c in choices if f" {answer_words(c)} " in text}
    # a longer choice containing a shorter one ("light blue" vs "blue") counts as the longer
    named = {c for c in named if not any(
        c != o and f" {answer_words(c)} " in f" {answer_words(o)} " for o in named)}
    return named == {expected}


def object_region(shape: tuple[int, int], detections, region: str = "boxes") -> np.ndarray:
    """The pixels the background check leaves out: the union of the detections' boxes, or
    of their masks (region "masks"; a detection without a mask contributes its box)."""
    if region not in ("boxes", "masks"):
        raise ValueError(f"region must be 'boxes' or 'masks', got {region!r}")
    out = np.zeros(shape, bool)
    for d in detections:
        if region == "masks" and d.mask is not None:
            out |= np.asarray(d.mask, bool)
        else:
            x0, y0, x1, y1 = (int(round(v)) for v in d.box)
            out[max(y0, 0):max(y1, 0), max(x0, 0):max(x1, 0)] = True
    return out


class Check:
    """One check of the cascade (registry family "check"; the registry's order is the
    cascade's order). `tracks`: the tracks it applies to; `label`: its column in the
    survival funnel (Table 3)."""

    name: str = ""
    label: str = ""
    tracks: tuple[str, ...] = TRACKS
    Options: type | None = None  # its settings, declared once (core/fields.py), or None

    def __init__(self, options=None):
        self.options = options if options is not None else (
            self.Options() if self.Options is not None else None)

    @property
    def needs_masks(self) -> bool:
        """Whether it reads the detector's segmentation masks (so the detector makes them)."""
        return False

    @required
    def check(self, s: Sample) -> CheckResult:
        raise NotImplementedError

    def check_many(self, samples: list[Sample]) -> list[CheckResult]:
        """The check of several images; a check whose model takes batches overrides it."""
        return [self.check(s) for s in samples]


class ObjectsCheck(Check):
    """Detected classes and counts equal the concept's (a pair noun: 1 or 2)."""

    name, label = "objects", "Obj."

    def check(self, s: Sample) -> CheckResult:
        return objects_check(s.detections, s.graph, s.task)


class BackgroundCheck(Check):
    """Minimal track: of the pixels outside every object, enough are bright."""

    name, label, tracks = "background", "BG", ("minimal",)
    Options = BackgroundOptions

    @property
    def needs_masks(self) -> bool:
        return self.options.region == "masks"

    def check(self, s: Sample) -> CheckResult:
        o = self.options
        mask = object_region(s.image.shape[:2], s.detections, o.region)
        result = background_check(s.image, mask, o.min_fraction, o.min_gray)
        result.evidence["region"] = o.region
        return result


class AttributesCheck(Check):
    """Every binding question answered with the concept's value."""

    name, label = "attributes", "Attr."

    def check(self, s: Sample) -> CheckResult:
        return self.check_many([s])[0]

    def check_many(self, samples: list[Sample]) -> list[CheckResult]:
        return attributes_results(samples)


def cascade(options: dict | None = None) -> list[Check]:
    """The registered checks, in order, each with its options (check name -> an instance
    of its Options; a check not named gets its defaults)."""
    options = options or {}
    made = [(registry.resolve("check", name), options.get(name))
            for name in registry.names("check")]
    # a check without options is built as it always was (a plugin's own __init__ may
    # take no argument)
    return [cls() if opts is None else cls(opts) for cls, opts in made]


def validate_image(image: np.ndarray, graph: SceneGraph, task: Task, track: str, detector,
                   answerer, checks: list[Check] | None = None,
                   detections=None) -> list[CheckResult]:
    """The cascade on one image: each check that applies to the track, until one fails.
    `detections`: the detector's, when it ran on a whole batch already."""
    if detections is None:
        detections = detector.detect(image, list(graph.names))
    sample = Sample(image, graph, task, track, detections, answerer)
    return validate_images([sample], checks)[0]


def registered_name(check) -> str:
    """The name `check`'s class is registered under (its own name when none is)."""
    cls = type(check)
    return next((n for n in registry.names("check") if registry.resolve("check", n) is cls),
                check.name)


def batch_problems(results, samples: int) -> list[str]:
    """The cheap part of the check contract, on every batch: a CheckResult per sample."""
    if not isinstance(results, list | tuple) or len(results) != samples:
        got = len(results) if hasattr(results, "__len__") else type(results).__name__
        return [f"check_many() gave {got} results for {samples} images"]
    bad = [type(r).__name__ for r in results if not isinstance(r, CheckResult)]
    return [f"check_many() gave a {bad[0]}, not a CheckResult"] if bad else []


def validate_images(samples: list[Sample], checks: list[Check] | None = None
                    ) -> list[list[CheckResult]]:
    """The cascade on several images, check by check: each check sees at once every image
    that passed the ones before it (so the VQA model answers the whole batch together). A
    plugin's check keeps the check contract on its first samples and gives a CheckResult
    per image on every batch, or is refused in one line before any verdict is kept."""
    from autocomp.core.plugins import every_batch, first_use, plugin_code
    from autocomp.validators.contract import check_problems

    results: list[list[CheckResult]] = [[] for _ in samples]
    alive = list(range(len(samples)))
    for check in checks if checks is not None else cascade():
        todo = [i for i in alive if samples[i].track in check.tracks]
        if not todo:
            continue
        name = registered_name(check)
        first = [samples[i] for i in todo[:2]]
        first_use("check", name, lambda c=check, f=first: check_problems(c, f))
        with plugin_code("check", name, "checking images"):
            got = check.check_many([samples[i] for i in todo])
        every_batch("check", name, batch_problems(got, len(todo)))
        for i, result in zip(todo, got, strict=True):
            results[i].append(result)
        alive = [i for i in alive if not results[i] or results[i][-1].passed]
    return results

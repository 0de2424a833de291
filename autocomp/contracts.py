"""Behaviour contracts per plugin family, as a plugin's own tests (and ours, on every
built-in and every docs/extending.md example: tests/test_contracts.py) check them. Each
returns the list of problems found, empty when the entry keeps its family's contract.
Each is defined beside what it checks and run through core/plugins.py, the one entry
every call site uses, when a plugin's entry is first used (a scorer when loaded, a check
on its first samples, a format when opened for scoring), with cheap checks on every batch
(item scores, check results, metric values, adapter files): a broken plugin is refused in
one line naming it, before anything it made is kept (core/families.py says per family
what runs when). Kinds are checked by `autocomp vocab check`
and by `autocomp run` (images and validation stages) on the vocabularies its tasks draw.

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
  metric  (t2i) one number in [0, scale] or None per image of a batch, a column heading
          (every batch).
  adapter (export) {"title", "usage"} strings and "files": the files it wrote, inside its
          folder (a plugin's own, beside the export: only those files are moved in).
  kind    a vocabulary of its entries reads; the procedural generator can draw its look
          (every look field is the generator's own or painted by the kind); drawn by the
          procedural generator on a few shapes, on both tracks, each value changes the
          pixels (no two values draw the same image; a painted value changes the object)
          and the pixels answerer reads every value back.
"""

from __future__ import annotations

import numpy as np

from autocomp.eval.scorers.contract import item_scorer_problems, scorer_problems
from autocomp.eval.suite_contract import suite_problems
from autocomp.publish.adapters import adapter_problems
from autocomp.t2i.metrics import metric_problems
from autocomp.validators.contract import check_problems

__all__ = ["adapter_problems", "check_problems", "item_scorer_problems", "kind_problems",
           "metric_problems", "run_kind_problem", "scorer_problems", "suite_problems",
           "vocabulary_kind_problem"]


def vocabulary_kind_problem(vocab, raw_entries: list | None = None) -> str | None:
    """The kind contract of each plugin kind drawing some of `vocab`'s entries, on those
    entries (`raw_entries` as the file gives them; read from vocab.path when None): its
    first problems in one line, or None. Built-in kinds are held to it by the suite."""
    from autocomp.core import registry

    plugged = [k for k in dict.fromkeys(e.drawn_by for e in vocab.entries if e.drawn_by)
               if registry.plugged("kind", k)]
    if not plugged:
        return None
    if raw_entries is None:
        from autocomp.core.yamlio import read_yaml

        raw_entries = read_yaml(vocab.path)["entries"]
    import json

    from autocomp.core.families import FAMILY

    for kind in plugged:
        mine = [raw for raw, e in zip(raw_entries, vocab.entries, strict=True)
                if e.drawn_by == kind]
        key = (kind, json.dumps(mine, sort_keys=True, default=str))
        if key in FAMILY["kind"].passed:  # drawn and read back already in this process
            continue
        problems = kind_problems(kind, mine)
        if problems:
            more = f" (and {len(problems) - 2} more)" if len(problems) > 2 else ""
            return (f"kind '{kind}' breaks the kind contract (autocomp/contracts.py): "
                    f"{'; '.join(problems[:2])}{more}")
        FAMILY["kind"].passed.add(key)
    return None


def run_kind_problem(config) -> tuple[str, str] | None:
    """(vocabulary file, problem) for the first vocabulary a run's tasks draw whose plugin
    kind breaks the kind contract, or None: `autocomp run` refuses before drawing (a kind
    that paints nothing was validated at 100% and its benchmarks built)."""
    from autocomp.concepts.load import load_task

    refs, seen = config.task_paths(), set()
    for spec in config.concepts:
        for _, vocab in load_task(refs[spec.task]).primitive_vocabularies():
            if vocab.path in seen:
                continue
            seen.add(vocab.path)
            problem = vocabulary_kind_problem(vocab)
            if problem:
                return vocab.path, problem
    return None


def kind_problems(name: str, entries: list[dict], shapes=("cube", "sphere", "torus", "capsule"),
                  size: int = 256) -> list[str]:
    """The contract of the kind registered as `name`, on vocabulary entries of it (value
    kinds: `{name, <field>: value}`, drawn on each shape alone; geometry kinds: relation
    entries, drawn between consecutive shapes). Kinds the generator draws only in tasks of
    their own (numerals: alone False) are checked for their look, not drawn here."""
    from autocomp.concepts import drawable
    from autocomp.concepts.task import AttributeTask, RelationTask
    from autocomp.concepts.vocab import load_vocabulary, parse_vocabulary
    from autocomp.core.errors import AutocompError

    kind = drawable.kind(name)
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

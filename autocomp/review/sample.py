"""The review sample: drawn once per mode with a seed, kept in RUN/review/<mode>.sample.json
so that a restarted page and a second annotator see the same units in the same order.

  validate  K concepts per (task, N), each with its images on both tracks (the paper's 200
            concepts, 400 images at K = 50); a unit shows the image, its caption and the
            criteria the validators applied (objects, background, one question per
            binding with the expected answer)
  test      K items per benchmark (task, N, track, swap or confusion); a unit shows the image
            and the item's captions as options, confusion limited to the positive + 49
            negatives, in the order the multiple-choice scorers use; an option that states
            the positive's facts in other words (same_meaning) counts as right
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import defaultdict
from pathlib import Path

from autocomp.core.errors import AutocompError
from autocomp.core.records import write_text

LIKERT = 5  # faithfulness ratings 1 (not at all) .. 5 (exactly as the caption says)


def valid_rating(x) -> bool:
    """A whole number on the Likert scale (a hand-edited judgments file may hold others)."""
    return isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= LIKERT


def sample_path(folder: Path, mode: str) -> Path:
    """The sample file in a review folder (RUN/review, or `--review-dir`)."""
    return Path(folder) / f"{mode}.sample.json"


def load_or_draw(run, mode: str, per_cell: int | None, seed: int | None,
                 folder: Path | None = None) -> dict:
    """The run's sample for `mode` in the review `folder` (default RUN/review): read back
    when drawn before (the options given must match it), else drawn and written. None
    options take the stored (or default) values."""
    path = sample_path(run.paths.review if folder is None else folder, mode)
    if path.is_file():
        try:
            sample = json.loads(path.read_text(encoding="utf-8"))
            stored = (sample["per_cell"], sample["seed"], sample["units"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise AutocompError(f"the review sample cannot be read ({exc}): delete it to "
                                "draw a new one (judgments made on it stay in "
                                "judgments.jsonl)", file=path) from None
        asked = (per_cell if per_cell is not None else stored[0],
                 seed if seed is not None else stored[1])
        if asked != stored[:2]:
            raise AutocompError(
                f"this run's {mode} sample was drawn with --per-cell {stored[0]} --seed "
                f"{stored[1]}; pass those (or none), or delete the file to draw anew",
                file=path)
        return sample
    per_cell = 50 if per_cell is None else per_cell
    seed = 0 if seed is None else seed
    units = draw_validate(run, per_cell, seed) if mode == "validate" else draw_test(
        run, per_cell, seed)
    if not units:
        what = "validated images" if mode == "validate" else "swap or confusion items"
        raise AutocompError(f"no {what} to review in this run", file=run.dir)
    random.Random(f"{seed}:order").shuffle(units)  # cells mixed, not one after another
    body = json.dumps([u["key"] for u in units])
    sample = {"mode": mode, "per_cell": per_cell, "seed": seed,
              "id": hashlib.sha256(body.encode()).hexdigest()[:12], "units": units}
    write_text(path, json.dumps(sample, indent=1) + "\n")
    return sample


def is_right(unit: dict, answer: int) -> bool:
    """Test mode: the option picked states the positive's facts (the positive, or a
    same-meaning negative)."""
    return answer in unit["accepted"]


def criteria(graph, task, track: str) -> list[str]:
    """What the validators check, in words a person can judge from the image."""

    counts = task.object_counts(graph)
    if all(c == 1 for c in counts.values()):
        out = [f"Objects: exactly these, each once: {', '.join(o.name for o in graph.objects)}"]
    else:
        out = ["Objects: exactly these, as many as stated: "
               + ", ".join(f"{c} {task.noun(name).plural if c > 1 else name}"
                           for name, c in counts.items())]
    if track == "minimal":
        out.append("Background: plain white")
    for q in task.questions(graph):
        out.append(f"{q.text.split(' Answer with one of')[0]} → {q.expected}")
    return out


def draw_validate(run, per_cell: int, seed: int) -> list[dict]:
    from autocomp.core.scene import SceneGraph

    concepts = {r["id"]: r for r in run.records("concepts")}
    captions = {r["id"]: r for r in run.records("captions")}
    by_concept = defaultdict(list)
    for r in run.records("validation"):
        if not r.get("generator"):  # the run's own images (not a compared generator's)
            by_concept[r["concept"]].append(r)
    cells = defaultdict(list)
    for cid in sorted(by_concept):
        c = concepts[cid]
        cells[(c["task"], c["n"])].append(cid)
    units = []
    for (task, n), ids in sorted(cells.items()):
        for cid in random.Random(f"{seed}:{task}:{n}").sample(ids, min(per_cell, len(ids))):
            graph = SceneGraph.from_dict(concepts[cid]["graph"])
            for r in sorted(by_concept[cid], key=lambda r: r["track"] != "minimal"):
                units.append({"key": r["id"], "image": r["image"], "task": task, "n": n,
                              "track": r["track"],
                              "caption": captions[cid][r["track"]],
                              "criteria": criteria(graph, run.tasks[task], r["track"]),
                              "auto": bool(r["passed"]), "failed_at": r["failed_at"]})
    return units


def draw_test(run, per_cell: int, seed: int) -> list[dict]:
    from autocomp.eval.items import captions_of
    from autocomp.eval.scorers.choice import option_order
    from autocomp.formats.runs import find_benchmarks

    units = []
    for bench in find_benchmarks(run.dir):
        if bench.kind not in ("swap", "confusion"):
            continue
        rows = list(bench.rows())
        for where, row in random.Random(f"{seed}:{bench.name}").sample(rows, min(per_cell,
                                                                                  len(rows))):
            item = bench.expand(row, where)
            texts = captions_of(item)
            order = option_order(item)
            # a negative that states the positive's facts in other words is not wrong
            same = {0} | {i + 1 for i, x in enumerate(item["negatives"])
                          if x.get("same_meaning")}
            units.append({"key": f"{bench.name}:{item['id']}", "image": item["image"],
                          "task": bench.task, "n": bench.n, "track": bench.track,
                          "kind": bench.kind, "options": [texts[c] for c in order],
                          "answer": order.index(0),
                          "accepted": [i for i, c in enumerate(order) if c in same],
                          "candidates": len(texts)})
    return units

"""Each text-to-image image scored from its prompt's scene graph (t2i/probes.py):

  tifa      TIFA-style: every probe (objects, attributes, relations) asked the run's
            answerer, its answer constrained to the vocabulary; the share answered with
            the expected value (the validators' rule: it names that value and no other)
  dsg       DSG-style: the same answers, an attribute or relation counting only when the
            objects it presupposes were found (answered yes)
  soft_tifa_am, soft_tifa_gm
            Soft-TIFA (GenEval 2): per probe `p`, the answerer's probability of the
            expected answer (an answerer with `expected_probabilities`: transformers,
            vllm); their arithmetic mean (an atom-level estimate) and geometric mean (a
            prompt-level one); None where the answerer gives no probabilities
  geneval   GenEval-style, from the run's detector with no VQA model: each object's count
            (as many found as the prompt names), colors read off the object's mask and
            spatial relations off the box centres (GenEval's rule; the embedded pixel
            reader); `geneval` is the share of these checks passed, `geneval_all` whether
            all passed (GenEval's per-image verdict); None when no check applies
  vqascore  P("Yes" | image, 'Does this figure show "{prompt}"?') from a VLM (vqascore:...)
  clipscore 100 x max(cos(image, prompt), 0) from a dual encoder (as T2I papers report it,
            Auto-Comp Table 16; Hessel et al.'s CLIP-S is 2.5 x max(cos, 0))
  survived  whether the image passes the run's validation cascade (the share is the
            generator's sample survival rate: what a benchmark of this model costs)
Each is an entry of the registry's "metric" family (t2i/metrics.py), so a plugin's metric
is scored, tabled and drawn beside them.

With the embedded generator's truth, each probe also carries `truth` (its expected answer
is true of the image), and the image `true_share` (share of probes true) and `faithful`
(all true); None where the drawing cannot say.
"""

from __future__ import annotations

import numpy as np

from autocomp.t2i.probes import probes, true_answers


def check_judges(vqascore, clipscore, file=None) -> None:
    """`vqascore` names a scorer of (image, caption) pairs (vqascore:...), `clipscore` a
    dual encoder, or each is None: else one line naming the file and field (the options
    where no file). Nothing is loaded."""
    from autocomp.core.errors import AutocompError
    from autocomp.eval.scorers import load_scorer

    wants = {"vqascore": ("scores_pairs", "a VLM scoring the prompt (vqascore:<model>)"),
             "clipscore": ("embeds_images", "a dual encoder (open_clip:..., hf:...)")}
    for field, spec in (("vqascore", vqascore), ("clipscore", clipscore)):
        if spec is None:
            continue
        where = {"file": file, "field": field} if file else {}
        what = wants[field][1]
        if not isinstance(spec, str) or not spec.strip():
            raise AutocompError(f"expected {what}, got {spec!r:.80}", **where)
        scorer = load_scorer(spec)  # its scoring only: no weights are read
        if not getattr(scorer, wants[field][0], False) or (
                field == "clipscore" and getattr(scorer, "scores_items", False)):
            raise AutocompError(f"'{spec}' is not {what}",
                                **(where or {"field": f"--{field}"}))


class Judge:
    """The backends that score images: the run's detector and answerer (or others), the
    validation cascade, and optional VQAScore and CLIPScore models."""

    def __init__(self, run, device: str = "auto", vqascore: str | None = None,
                 clipscore: str | None = None, batch_size: int | None = None,
                 answerer=None, detector=None):
        from autocomp.core.registry import instantiate
        from autocomp.validators.checks import cascade
        from autocomp.validators.pixels import PixelAnswerer

        cfg = run.config.validate
        answerer, detector = answerer or cfg.answerer, detector or cfg.detector
        self.run, self.tasks = run, run.tasks
        self.checks = cascade(cfg.checks)
        self.detector = instantiate("detector", detector, device)
        if hasattr(self.detector, "want_masks"):
            self.detector.want_masks(True)  # colors are read off the masks
        self.answerer = instantiate("answerer", answerer, device)
        self.reader = PixelAnswerer()
        self.names = {"detector": _named(detector), "answerer": _named(answerer)}
        self.vqa = self.clip = None
        scorer_device = device  # "auto": the scorer takes cuda or cpu when it loads
        from autocomp.eval.scorers import load_scorer

        check_judges(vqascore, clipscore)
        if vqascore:
            self.vqa = load_scorer(vqascore, device=scorer_device, batch_size=batch_size)
            self.names["vqascore"] = vqascore
        if clipscore:
            self.clip = load_scorer(clipscore, device=scorer_device, batch_size=batch_size)
            self.names["clipscore"] = clipscore

    def score(self, records: list[dict], by_prompt: dict, root) -> list[dict]:
        """One scored record per image record (`by_prompt`: prompt id -> Prompt; image
        paths relative to `root`), with every registered metric's value (t2i/metrics.py)."""
        from autocomp.t2i.metrics import Scored, scored_by
        from autocomp.validators.checks import Sample, answer_all, detect_all, validate_images
        from autocomp.validators.stage import load_rgb

        if not records:
            return []
        arrays = [load_rgb(root / r["image"]) for r in records]
        prompts = [by_prompt[r["prompt"]] for r in records]
        tasks = [self.tasks[p.task] for p in prompts]
        found = [probes(p.graph, t) for p, t in zip(prompts, tasks, strict=True)]
        detections = detect_all(self.detector, arrays, [list(p.graph.names) for p in prompts])
        jobs = [(a, [pr.question for pr in f], d)
                for a, f, d in zip(arrays, found, detections, strict=True)]
        answers = answer_all(self.answerer, jobs)
        likely = soft_answers(self.answerer, jobs, self.names["answerer"])
        readings = [self.reader.answer(*job) for job in jobs]
        samples = [Sample(a, p.graph, t, p.track, d, self.answerer)
                   for a, p, t, d in zip(arrays, prompts, tasks, detections, strict=True)]
        survived = [all(c.passed for c in res) for res in validate_images(samples, self.checks)]
        out, batch = [], []
        for i, rec in enumerate(records):
            record, checks = self._one(rec, prompts[i], tasks[i], found[i], answers[i],
                                       readings[i], detections[i], likely[i])
            out.append(record)
            batch.append(Scored(arrays[i], prompts[i], tasks[i], record["probes"],
                                detections[i], survived[i], checks))
        for record, values in zip(out, scored_by(batch, self), strict=True):
            record.update(values)
        return out

    def _one(self, rec, prompt, task, found, answers, readings, detections, likely):
        """An image's record before its metrics, and GenEval's checks of it."""
        from autocomp.validators.checks import names_only

        right = {p.id: names_only(a["answer"], p.question.expected, p.question.choices)
                 for p, a in zip(found, answers, strict=True)}
        truth = (true_answers(found, prompt.graph, task, rec["truth"], rec["faults"] or [])
                 if rec.get("truth") is not None else [None] * len(found))
        geneval = _geneval(found, readings, detections, prompt.graph, task)
        rows = []
        for p, a, t, likelihood in zip(found, answers, truth, likely, strict=True):
            rows.append({**p.to_dict(), "answer": a["answer"], "right": right[p.id],
                         "dsg": right[p.id] and all(right[q] for q in p.parents),
                         "p": likelihood, "geneval": geneval["probes"].get(p.id),
                         "truth": t})
        known = [t for t in truth if t is not None]
        return {
            "id": rec["id"], "prompt": prompt.id, "concept": prompt.concept,
            "task": prompt.task, "n": prompt.n, "track": prompt.track, "k": rec["k"],
            "seed": rec["seed"], "image": rec["image"],
            "faults": sorted({f["kind"] for f in rec["faults"] or []}),
            "probes": rows,
            "has_truth": rec.get("truth") is not None,
            "true_share": (float(np.mean(known)) if known and len(known) == len(truth)
                           else None),
            "faithful": (all(known) if known and len(known) == len(truth) else None),
        }, geneval["checks"]


def soft_answers(answerer, jobs: list[tuple], name: str) -> list[list[float | None]]:
    """Per job, per question: the answerer's probability of the expected answer (None
    throughout for an answerer that gives none); what it gives is checked on every batch
    and refused in one line naming it."""
    from autocomp.core.errors import AutocompError

    give = getattr(answerer, "expected_probabilities", None)
    if give is None:
        return [[None] * len(questions) for _, questions, _ in jobs]
    got = give(jobs)
    problem = None
    if not isinstance(got, list | tuple) or len(got) != len(jobs):
        problem = f"{_length(got)} lists for {len(jobs)} images"
    else:
        for one, (_, questions, _) in zip(got, jobs, strict=True):
            if not isinstance(one, list | tuple) or len(one) != len(questions):
                problem = f"{_length(one)} probabilities for {len(questions)} questions"
            else:
                bad = [v for v in one if isinstance(v, bool) or not isinstance(
                    v, int | float | np.floating) or not 0.0 <= v <= 1.0]  # NaN fails too
                problem = f"{bad[0]!r}, not a probability in [0, 1]" if bad else None
            if problem:
                break
    if problem:
        raise AutocompError(f"answerer {name}: expected_probabilities() gave {problem}: it "
                            "gives one probability per question of each image")
    return [[float(v) for v in one] for one in got]


def _length(x) -> str:
    return str(len(x)) if hasattr(x, "__len__") else type(x).__name__


def _named(backend) -> str:
    """A backend's name with the model it loads, as the scores record it."""
    model = backend.options.get("model") or backend.options.get("detector_model")
    return backend.name + (f" ({model})" if model else "")


def _geneval(found, readings, detections, graph, task) -> dict:
    """GenEval-style checks from the detector alone: each object's count, then the color
    and spatial probes as the pixel reader reads them (masks, box centres). `probes`: probe
    id -> passed, for the probes GenEval checks."""
    from collections import Counter

    from autocomp.concepts import drawable
    from autocomp.validators.checks import names_only

    want = task.object_counts(graph)
    got = Counter(d.label for d in detections if d.label is not None)
    checks = [got.get(name, 0) == count for name, count in want.items()]
    by_probe = {}
    geometry = task.relation_geometry()
    for p, r in zip(found, readings, strict=True):
        q = p.question
        if p.kind == "object" or (p.kind == "attribute" and q.reads != "rgb"):
            continue  # objects: counted above; only colors among the attributes
        if p.kind == "relation":
            rel = graph.relations[int(p.id[1:])]
            kind = drawable.geometry_kind(geometry.get(rel.predicate) or {})
            if kind is None or kind.name != "spatial":
                continue
        by_probe[p.id] = names_only(r["answer"], q.expected, q.choices)
        checks.append(by_probe[p.id])
    return {"checks": checks, "probes": by_probe}

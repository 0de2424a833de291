"""Writing a COMPASS set from caption graphs: the composed set with its decomposed pairs and
the skill-targeted sets of every caption. With a similarity filter, CHUNK captions are
built side by side and their negatives judged in batches (filter.settle); without one, a
caption at a time. Either way the files stream and memory stays bounded."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Generator, Iterable
from pathlib import Path

from autocomp.compass.filter import SCOPES, settle
from autocomp.compass.negatives import SPATIAL_OPPOSITES, Replacer, composed_steps, skill_steps
from autocomp.compass.render import primitives
from autocomp.compass.sets import SetWriter
from autocomp.compass.subgraph import LEVELS
from autocomp.core.errors import AutocompError
from autocomp.core.records import write_text
from autocomp.core.scene import SceneGraph

CANDIDATES = ("auto", "wordnet", "vocabulary", "llm")  # auto: wordnet on VG, vocabulary on runs
CHUNK = 1024  # captions whose negatives are judged together


AMBIGUOUS = ("caption: two objects read alike (same name and attributes) and a relation "
             "names one, so its captions cannot say which")


def ambiguous(g: SceneGraph) -> bool:
    """Two objects with the same name and attributes, one of them in a relation: "a shirt
    to the left of a shirt" cannot say which shirt, so neither it nor its negatives are
    true or false of the image. (Alike objects in no relation read fine: "There is a
    shirt. There is a shirt.")"""
    looks = [(o.name, tuple(sorted(o.attributes))) for o in g.objects]
    twice = {i for i, look in enumerate(looks) if looks.count(look) > 1}
    return any(r.subject in twice or r.object in twice for r in g.relations)


def _base(key: str, image: str, image_id, level: str, graph: SceneGraph, kind: str) -> dict:
    return {"id": key, "task": "compass", "kind": kind, "image": image, "image_id": image_id,
            "level": level, "n": len(primitives(graph)), "counts": graph.counts,
            "graph": graph.to_dict(), "paired": False}


def replacer(vocab, similarity, candidates: str, writer, lexicon, hosts, groups,
             scope: str, opposites=()) -> Replacer:
    if candidates not in CANDIDATES[1:]:
        raise AutocompError(f"unknown candidates '{candidates}' (known: "
                            f"{', '.join(CANDIDATES)})")
    if scope not in SCOPES:
        raise AutocompError(f"unknown filter scope '{scope}' (known: {', '.join(SCOPES)})")
    rep = Replacer(vocab, similarity, groups=dict(groups or {}), scope=scope,
                   opposites={frozenset(p) for p in (*SPATIAL_OPPOSITES, *opposites)})
    if candidates == "llm":
        if writer is None:
            raise AutocompError("--candidates llm needs an LLM --writer (transformers or "
                                "openai)")
        from autocomp.compass.llm_captions import LLMCandidates

        rep.propose = LLMCandidates(writer, rep.vocabulary)
    elif candidates == "wordnet":
        from autocomp.compass.lexicon import Lexicon, SynsetCandidates
        from autocomp.compass.wordnet import load_wordnet

        rep.propose = SynsetCandidates(lexicon or Lexicon(load_wordnet()), vocab, hosts)
    return rep


def caption_steps(cid: str, image: str, image_id, level: str, g: SceneGraph, seen: dict,
                  rep: Replacer, rng: random.Random, kw: dict) -> Generator:
    """One caption's rows ([(file, row)]) and the reasons any of its sets was left out."""
    rows, dropped = [], []
    comp = yield from composed_steps(g, seen, rep, rng, **kw)
    if comp is None:
        dropped.append("composed: a primitive had no valid negative")
    else:
        rows.append(("composed", {**_base(cid, image, image_id, level, g, "composed"),
                                  "group": cid, "positive": comp["caption"],
                                  "negatives": comp["negatives"]}))
        for i, pair in enumerate(comp["decomposed"]):
            rows.append(("decomposed", {
                **_base(f"{cid}/d{i}", image, image_id, level, g, "decomposed"),
                "group": cid, "primitive": pair["primitive"], "positive": pair["positive"],
                "negatives": [{"caption": pair["negative"], "edit": pair["edit"],
                               "category": pair["edit"]["type"], "same_meaning": False,
                               "graph": pair["graph"]}]}))
    for kind in LEVELS[level]:
        skill = yield from skill_steps(g, kind, seen, rep, rng, **kw)
        if skill is None:
            dropped.append(f"skill-{kind}: fewer than 4 valid negatives")
            continue
        rows.append((f"skill-{kind}", {
            **_base(f"{cid}/skill-{kind}", image, image_id, level, g, f"skill-{kind}"),
            "group": cid, "positive": skill["caption"], "negatives": skill["negatives"]}))
    return rows, dropped


def _chunks(sources: Iterable, size: int):
    """Lists of up to `size` (source, level, caption graph, last caption of its image?)."""
    chunk = []
    for source in sources:
        captions = source[4]
        for i, (level, g) in enumerate(captions):
            chunk.append((source, level, g, i == len(captions) - 1))
            if len(chunk) == size:
                yield chunk
                chunk = []
        if not captions:
            chunk.append((source, None, None, True))
    if chunk:
        yield chunk


def write_sets(sources, vocab, out: Path, seed: int, similarity, meta: dict,
               writer=None, candidates: str = "wordnet", lexicon=None, hosts=None,
               groups=None, scope: str = "primitive", opposites=()) -> dict:
    """sources: (key, image path, image id, present, [(level, caption graph)]) tuples, where
    `present` maps "O", "A", "R" to what occurs anywhere in the image.
    `writer`: None for template captions, else an LLM caption writer (registry).
    `candidates`: "wordnet" (same category, no synonyms; `lexicon` a compass.lexicon
    Lexicon), "vocabulary" (any other value of the type: the unfiltered ablation) or "llm"
    (proposed by the writer, asked again when none survives). `groups`: (kind, value) ->
    category, for "vocabulary" candidates that must stay inside one (Replacer.groups).
    `scope`: what the similarity filter compares (filter.SCOPES). `opposites`: pairs of
    relations (a run's declared inverses) that are opposites beside SPATIAL_OPPOSITES: a
    negative replacing one by the other is never a paraphrase, so the filter passes it."""
    rep = replacer(vocab, similarity, candidates, writer, lexicon, hosts, groups, scope,
                   opposites)
    dropped = Counter()
    written = {}
    if writer is not None:
        from autocomp.compass.llm_captions import write_captions

        written = write_captions(writer, [
            (f"{key}/{level}-n{len(primitives(g))}", g)
            for key, _, _, _, captions in sources for level, g in captions])
    out.mkdir(parents=True, exist_ok=True)
    (out / "manifest.json").unlink(missing_ok=True)  # a killed rebuild is not a set
    from autocomp.core.progress import Progress

    with SetWriter(out) as rows, Progress("compass build: writing the sets", len(sources),
                                          "image") as made:
        at = {"next": 0}  # the images whose captions are judged now (CHUNK at a time)

        def note(encoded: int) -> None:
            made.update(0, f"{rows.counts['composed']:,} composed items; judging the "
                           f"negatives of the next {at['next']:,} images: {encoded:,} "
                           "sentences embedded so far")
        if similarity is not None and hasattr(similarity, "progress"):
            similarity.progress = note
        for chunk in _chunks(sources, 1 if similarity is None else CHUNK):
            at["next"] = sum(last for *_, last in chunk)
            steps = []
            for (key, image, image_id, seen, _), level, g, _ in chunk:
                if g is None:
                    continue
                if ambiguous(g):  # "a shirt to the left of a shirt"
                    dropped[AMBIGUOUS] += 1
                    continue
                rng = random.Random(f"compass:{seed}:{key}:{level}:{len(primitives(g))}")
                cid = f"{key}/{level}-n{len(primitives(g))}"
                kw = {}
                if writer is not None:
                    from autocomp.compass.llm_captions import substitute

                    if written.get(cid) is None:
                        dropped["caption: the writer never named every primitive"] += 1
                        continue
                    kw = {"caption": written[cid], "render": substitute}
                steps.append(caption_steps(cid, image, image_id, level, g, seen, rep, rng,
                                           kw))
            for got, reasons in settle(steps, rep):
                for name, row in got:
                    rows.add(name, row)
                dropped.update(reasons)
            made.update(sum(last for *_, last in chunk),
                        f"{rows.counts['composed']:,} composed items")
    counts_by_n = {name: dict(sorted(by_n.items(), key=lambda kv: int(kv[0])))
                   for name, by_n in rows.by_n.items()}
    manifest = {**meta, "seed": seed, "writer": "template" if writer is None else
                type(writer).__name__, "candidates": candidates,
                "counts": dict(rows.counts), "counts_by_n": counts_by_n,
                "files": rows.digests,
                "dropped": dict(sorted(dropped.items())),
                "vocabulary": {k: len(v) for k, v in vocab.items()},
                "similarity": getattr(similarity, "model_ref", None),
                "filter_scope": scope if similarity is not None else None,
                "filter": rep.filter_report()}
    write_text(out / "manifest.json", json.dumps(manifest, indent=1))
    refused = {f"{k}:{v}": {f"{c}: {why}": n for (c, why), n in sorted(got.items())}
               for (k, v), got in sorted(rep.refused.items()) if got}
    write_text(out / "candidates.json", json.dumps({
        "about": "candidates: each value's same-category candidates before the per-image "
                 "filter; refused: per value, how often the filter refused a candidate for "
                 "an image, and why (docs/compass.md)",
        "candidates": {f"{k}:{v}": c for (k, v), c in sorted(rep.cache.items())},
        "refused": refused}, indent=0))
    return manifest

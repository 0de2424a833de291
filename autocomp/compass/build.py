"""`autocomp compass build`: composed/decomposed and skill-targeted sets from Visual Genome
or from a synthetic run, written as benchmark-style items the eval harness scores.

  OUT/manifest.json        source, counts, skipped entries and why, settings
  OUT/composed.jsonl       a caption and its N one-primitive negatives
  OUT/decomposed.jsonl     per primitive: its decomposed caption and the matched negative
                           (group = the composed item's id)
  OUT/skill-{O,A,R}.jsonl  a caption and K = 4 negatives replacing primitives of one type
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

from autocomp.compass.lexicon import attribute_hosts
from autocomp.compass.negatives import (
    Replacer,
    composed_set,
    graph_vocab,
    image_primitives,
    skill_set,
)
from autocomp.compass.render import primitives
from autocomp.compass.subgraph import LEVELS, RANGES, caption_graph, level_of, random_walk
from autocomp.core.records import TRACKS, write_jsonl, write_text
from autocomp.core.scene import SceneGraph

FILES = ("composed", "decomposed", "skill-O", "skill-A", "skill-R")


def _base(key: str, image: str, image_id, level: str, graph: SceneGraph, kind: str) -> dict:
    return {"id": key, "task": "compass", "kind": kind, "image": image, "image_id": image_id,
            "level": level, "n": len(primitives(graph)), "counts": graph.counts,
            "graph": graph.to_dict(), "paired": False}


CANDIDATES = ("auto", "wordnet", "vocabulary", "llm")  # auto: wordnet on VG, vocabulary on runs


def write_sets(sources, vocab, out: Path, seed: int, similarity, meta: dict,
               writer=None, candidates: str = "wordnet", lexicon=None, hosts=None,
               groups=None) -> dict:
    """sources: (key, image path, image id, present, [(level, caption graph)]) tuples, where
    `present` maps "O", "A", "R" to what occurs anywhere in the image.
    `writer`: None for template captions, else an LLM caption writer (registry).
    `candidates`: "wordnet" (same category, no synonyms; `lexicon` a compass.lexicon
    Lexicon), "vocabulary" (any other value of the type: the unfiltered ablation) or "llm"
    (proposed by the writer, asked again when none survives). `groups`: (kind, value) ->
    category, for "vocabulary" candidates that must stay inside one (Replacer.groups)."""
    if candidates not in CANDIDATES[1:]:
        from autocomp.core.errors import AutocompError

        raise AutocompError(f"unknown candidates '{candidates}' (known: "
                            f"{', '.join(CANDIDATES)})")
    rep = Replacer(vocab, similarity, groups=dict(groups or {}))
    if candidates == "llm":
        if writer is None:
            from autocomp.core.errors import AutocompError

            raise AutocompError("--candidates llm needs an LLM --writer (transformers or "
                                "openai)")
        from autocomp.compass.llm_captions import LLMCandidates

        rep.propose = LLMCandidates(writer, rep.vocabulary)
    elif candidates == "wordnet":
        from autocomp.compass.lexicon import Lexicon, SynsetCandidates
        from autocomp.compass.wordnet import load_wordnet

        rep.propose = SynsetCandidates(lexicon or Lexicon(load_wordnet()), vocab, hosts)
    rows = {name: [] for name in FILES}
    dropped = Counter()
    written = {}
    if writer is not None:
        from autocomp.compass.llm_captions import write_captions

        written = write_captions(writer, [
            (f"{key}/{level}-n{len(primitives(g))}", g)
            for key, _, _, _, captions in sources for level, g in captions])
    for key, image, image_id, seen, captions in sources:
        for level, g in captions:
            rng = random.Random(f"compass:{seed}:{key}:{level}:{len(primitives(g))}")
            cid = f"{key}/{level}-n{len(primitives(g))}"
            kw = {}
            if writer is not None:
                from autocomp.compass.llm_captions import substitute

                if written.get(cid) is None:
                    dropped["caption: the writer never named every primitive"] += 1
                    continue
                kw = {"caption": written[cid], "render": substitute}
            comp = composed_set(g, seen, rep, rng, **kw)
            if comp is None:
                dropped["composed: a primitive had no valid negative"] += 1
            else:
                rows["composed"].append({**_base(cid, image, image_id, level, g, "composed"),
                                         "group": cid, "positive": comp["caption"],
                                         "negatives": comp["negatives"]})
                for i, pair in enumerate(comp["decomposed"]):
                    rows["decomposed"].append({
                        **_base(f"{cid}/d{i}", image, image_id, level, g, "decomposed"),
                        "group": cid, "primitive": pair["primitive"],
                        "positive": pair["positive"],
                        "negatives": [{"caption": pair["negative"], "edit": pair["edit"],
                                       "category": pair["edit"]["type"],
                                       "same_meaning": False, "graph": pair["graph"]}]})
            for kind in LEVELS[level]:
                skill = skill_set(g, kind, seen, rep, rng, **kw)
                if skill is None:
                    dropped[f"skill-{kind}: fewer than 4 valid negatives"] += 1
                    continue
                rows[f"skill-{kind}"].append({
                    **_base(f"{cid}/skill-{kind}", image, image_id, level, g, f"skill-{kind}"),
                    "group": cid, "positive": skill["caption"],
                    "negatives": skill["negatives"]})
    out.mkdir(parents=True, exist_ok=True)
    for name, items in rows.items():
        write_jsonl(out / f"{name}.jsonl", items)
    counts_by_n = {name: dict(sorted(Counter(str(r["n"]) for r in items).items(),
                                     key=lambda kv: int(kv[0])))
                   for name, items in rows.items()}
    manifest = {**meta, "seed": seed, "writer": "template" if writer is None else
                type(writer).__name__, "candidates": candidates,
                "counts": {k: len(v) for k, v in rows.items()}, "counts_by_n": counts_by_n,
                "dropped": dict(sorted(dropped.items())),
                "vocabulary": {k: len(v) for k, v in vocab.items()},
                "similarity": getattr(similarity, "model_ref", None),
                "filter": rep.filter_report()}
    write_text(out / "manifest.json", json.dumps(manifest, indent=1))
    write_text(out / "candidates.json", json.dumps(
        {f"{k}:{v}": c for (k, v), c in sorted(rep.cache.items())}, indent=0))
    return manifest


def build_vg(vg_dir: Path, images_dir: Path, out: Path, limit: int | None = None,
             image_ids=None, seed: int = 0, similarity=None, levels=("OA", "OR", "OAR"),
             writer=None, candidates: str = "wordnet", wordnet: str | None = None):
    from autocomp.compass.vg import load_attribute_synsets, load_vg

    candidates = "wordnet" if candidates == "auto" else candidates
    skipped = Counter()
    images = load_vg(vg_dir, image_ids, limit, skipped)
    vocab = graph_vocab(img.graph for img in images)
    lexicon = None
    if candidates == "wordnet":
        lexicon = _vg_lexicon(images, load_attribute_synsets(vg_dir), wordnet)
    sources = []
    for img in images:
        rng = random.Random(f"walk:{seed}:{img.image_id}")
        sub = random_walk(img.graph, rng)
        caps = []
        for level in levels:
            low, high = RANGES[level]
            for n in range(low, high + 1):
                g = caption_graph(sub, level, n, rng)
                if g is not None:
                    caps.append((level, g))
        path = Path(images_dir) / f"{img.image_id}.jpg"
        sources.append((f"vg{img.image_id}", str(path.resolve()), img.image_id, img.present(),
                        caps))
    return write_sets(sources, vocab, Path(out), seed, similarity,
                      {"source": "visual-genome", "dir": str(vg_dir), "images": len(images),
                       "skipped": dict(sorted(skipped.items()))}, writer, candidates, lexicon,
                      attribute_hosts(img.graph for img in images))


def _vg_lexicon(images, attribute_synsets: dict[str, str], wordnet: str | None):
    """A Lexicon whose synsets are the ones the VG records give (most frequent per value),
    WordNet's first sense for the rest."""
    from autocomp.compass.lexicon import Lexicon, recorded_synsets
    from autocomp.compass.wordnet import load_wordnet

    recorded = recorded_synsets()
    for img in images:
        for names, syn in zip(img.aliases, img.object_synsets, strict=True):
            for name in names:
                if syn:
                    recorded["O"][name][syn] += 1
        for rel, syn in zip(img.graph.relations, img.relation_synsets, strict=True):
            if syn:
                recorded["R"][rel.predicate][syn] += 1
    for attr, syn in attribute_synsets.items():
        recorded["A"][attr][syn] += 1
    return Lexicon(load_wordnet(wordnet), recorded)


def build_run(run_dir: Path, out: Path, seed: int = 0, similarity=None, writer=None,
              candidates: str = "vocabulary", wordnet: str | None = None):
    """Every validated image of a synthetic run: its concept graph is the caption graph.
    Candidates default to the run's task vocabularies: each is one curated category
    (shapes, colors, spatial relations) without synonyms, as Auto-Comp's negatives use."""
    from autocomp.core.records import read_jsonl
    from autocomp.run import Run

    candidates = "vocabulary" if candidates == "auto" else candidates
    run = Run.open(run_dir)
    concepts = {c["id"]: c for c in run.records("concepts")}
    vocab = {"O": Counter(), "A": Counter(), "R": Counter()}
    groups = {}
    for task in run.tasks.values():
        vocab["O"].update(task.objects.names)
        for ptype, v in task.primitive_vocabularies():
            vocab[ptype].update(v.names)
            if ptype == "A":  # an attribute is replaced inside its own vocabulary
                groups.update({("A", name): v.name for name in v.names})
    sources = []
    for track in TRACKS:
        path = run.layout.positive_set(track)
        if not path.exists():
            continue
        for row in read_jsonl(path):
            g = SceneGraph.from_dict(concepts[row["concept"]]["graph"])
            sources.append((row["id"], str((run.dir / row["image"]).resolve()), row["concept"],
                            image_primitives(g), [(level_of(g), g)]))
    lexicon = None
    if candidates == "wordnet":
        from autocomp.compass.lexicon import Lexicon
        from autocomp.compass.wordnet import load_wordnet

        lexicon = Lexicon(load_wordnet(wordnet))
    return write_sets(sources, vocab, Path(out), seed, similarity,
                      {"source": "synthetic", "dir": str(run.dir), "images": len(sources)},
                      writer, candidates, lexicon, groups=groups)

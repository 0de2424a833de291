"""`autocomp compass build`: composed/decomposed and skill-targeted sets from Visual Genome
or from a synthetic run, written as benchmark-style items the eval harness scores.

  OUT/manifest.json        source, counts, skipped entries and why, settings
  OUT/composed.jsonl       a caption and its N one-primitive negatives
  OUT/decomposed.jsonl     per primitive: its decomposed caption and the matched negative
                           (group = the composed item's id)
  OUT/skill-{O,A,R}.jsonl  a caption and K = 4 negatives replacing primitives of one type
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import orjson

from autocomp.compass.lexicon import attribute_hosts
from autocomp.compass.negatives import graph_vocab, image_primitives
from autocomp.compass.subgraph import RANGES, caption_graph, level_of, random_walk
from autocomp.compass.write import CANDIDATES, write_sets
from autocomp.core.records import TRACKS
from autocomp.core.scene import SceneGraph

__all__ = ["CANDIDATES", "build_run", "build_vg", "vg_lexicon", "write_sets"]


def build_vg(vg_dir: Path, images_dir: Path, out: Path, limit: int | None = None,
             image_ids=None, seed: int = 0, similarity=None, levels=("OA", "OR", "OAR"),
             writer=None, candidates: str = "wordnet", wordnet: str | None = None,
             scope: str = "primitive"):
    """A COMPASS set from a Visual Genome folder. scene_graphs.json is streamed once: each
    image's caption graphs and what it shows are spilled to a temporary file, and only
    counts (vocabulary, synsets, attribute hosts) are kept, so memory stays flat in the
    file's size; a progress line (or bar) shows how far it has read."""
    import tempfile

    from autocomp.compass.vg import iter_vg, load_attribute_synsets
    from autocomp.core.progress import Progress

    candidates = "wordnet" if candidates == "auto" else candidates
    skipped = Counter()
    vocab = {"O": Counter(), "A": Counter(), "R": Counter()}
    hosts: dict[str, set] = {}
    recorded = _recorded() if candidates == "wordnet" else None
    read = Progress("compass build: reading scene_graphs.json", None, "byte")
    with tempfile.TemporaryDirectory(prefix="autocomp-compass-") as tmp, read:
        spill = _Spill(Path(tmp) / "sources.jsonl")
        with spill:
            def on_read(at: int, size: int) -> None:
                read.total = size
                read.update(at - read.done, f"{spill.count:,} images")
            for img in iter_vg(vg_dir, image_ids, limit, skipped, on_read):
                _count(img, vocab, hosts, recorded)
                spill.add(_source(img, seed, levels, images_dir))
        lexicon = (_lexicon(recorded, load_attribute_synsets(vg_dir), wordnet)
                   if candidates == "wordnet" else None)
        return write_sets(spill, vocab, Path(out), seed, similarity,
                          {"source": "visual-genome", "dir": str(vg_dir),
                           "image_root": str(Path(images_dir).resolve()),
                           "images": spill.count, "skipped": dict(sorted(skipped.items()))},
                          writer, candidates, lexicon, hosts, scope=scope)


def _source(img, seed: int, levels, images_dir) -> tuple:
    """(key, image path, image id, what it shows, [(level, caption graph)]) of one image."""
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
    return (f"vg{img.image_id}", str(path.resolve()), img.image_id, img.present(), caps)


def _count(img, vocab: dict, hosts: dict, recorded) -> None:
    """Add one image to the vocabulary, the attribute hosts and the recorded synsets."""
    for ptype, counts in graph_vocab([img.graph]).items():
        vocab[ptype].update(counts)
    for attr, names in attribute_hosts([img.graph]).items():
        hosts.setdefault(attr, set()).update(names)
    if recorded is not None:
        _count_synsets(img, recorded)


def _count_synsets(img, recorded) -> None:
    for names, syn in zip(img.aliases, img.object_synsets, strict=True):
        for name in names:
            if syn:
                recorded["O"][name][syn] += 1
    for rel, syn in zip(img.graph.relations, img.relation_synsets, strict=True):
        if syn:
            recorded["R"][rel.predicate][syn] += 1


def _recorded():
    from autocomp.compass.lexicon import recorded_synsets

    return recorded_synsets()


def _lexicon(recorded, attribute_synsets: dict[str, str], wordnet: str | None):
    """A Lexicon whose synsets are the ones the VG records give (most frequent per value),
    WordNet's first sense for the rest."""
    from autocomp.compass.lexicon import Lexicon
    from autocomp.compass.wordnet import load_wordnet

    for attr, syn in attribute_synsets.items():
        recorded["A"][attr][syn] += 1
    return Lexicon(load_wordnet(wordnet), recorded)


def vg_lexicon(images, attribute_synsets: dict[str, str], wordnet: str | None = None):
    """The Lexicon build_vg makes, from VGImages in memory."""
    recorded = _recorded()
    for img in images:
        _count_synsets(img, recorded)
    return _lexicon(recorded, attribute_synsets, wordnet)


class _Spill:
    """Sources written to a file as they are made and read back as often as asked."""

    def __init__(self, path: Path):
        self.path, self.count = path, 0

    def __len__(self) -> int:
        return self.count

    def __enter__(self) -> _Spill:
        from autocomp.core.own_files import create_new

        self._fh = create_new(self.path, "wb")  # closed in __exit__
        return self

    def add(self, source: tuple) -> None:
        key, image, image_id, present, caps = source
        self._fh.write(orjson.dumps([key, image, image_id,
                                     {k: sorted(v) for k, v in present.items()},
                                     [[level, g.to_dict()] for level, g in caps]]) + b"\n")
        self.count += 1

    def __exit__(self, *exc) -> None:
        self._fh.close()

    def __iter__(self):
        with open(self.path, "rb") as fh:
            for line in fh:
                key, image, image_id, present, caps = orjson.loads(line)
                yield (key, image, image_id, {k: set(v) for k, v in present.items()},
                       [(level, SceneGraph.from_dict(g)) for level, g in caps])


def contrasting_relations(vocabulary) -> set[tuple[str, str]]:
    """Pairs of a run's relations that cannot paraphrase each other: a relation and its
    declared inverse, and any two whose declared geometries differ (the images are drawn
    and validated along the geometry, so "above" is false of a scene drawn "to the left
    of"; MiniLM still puts the two sentences at 0.91, above the 0.90 of N >= 6)."""
    out = {(e.name, e.inverse) for e in vocabulary.entries if e.inverse}
    for a in vocabulary.entries:
        for b in vocabulary.entries:
            if a.name < b.name and a.geometry and b.geometry and a.geometry != b.geometry:
                out.add((a.name, b.name))
    return out


def build_run(run_dir: Path, out: Path, seed: int = 0, similarity=None, writer=None,
              candidates: str = "vocabulary", wordnet: str | None = None,
              scope: str = "primitive"):
    """Every validated image of a synthetic run: its concept graph is the caption graph.
    Candidates default to the run's task vocabularies: each is one curated category
    (shapes, colors, spatial relations) without synonyms, as Auto-Comp's negatives use."""
    from autocomp.core.records import read_jsonl
    from autocomp.run import Run

    candidates = "vocabulary" if candidates == "auto" else candidates
    run = Run.open(run_dir)
    concepts = {c["id"]: c for c in run.records("concepts")}
    vocab = {"O": Counter(), "A": Counter(), "R": Counter()}
    groups, opposites = {}, set()
    for task in run.tasks.values():
        vocab["O"].update(task.objects.names)
        for ptype, v in task.primitive_vocabularies():
            vocab[ptype].update(v.names)
            if ptype == "R":
                opposites |= contrasting_relations(v)
            if ptype == "A":  # an attribute is replaced inside its own vocabulary
                groups.update({("A", name): v.name for name in v.names})
    sources = []
    for track in TRACKS:
        path = run.paths.positive_set(track)
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
                      {"source": "synthetic", "dir": str(run.dir), "images": len(sources),
                       "image_root": str(run.dir.resolve())},
                      writer, candidates, lexicon, groups=groups, scope=scope,
                      opposites=sorted(opposites))

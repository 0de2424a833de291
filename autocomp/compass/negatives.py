"""COMPASS hard negatives: one primitive replaced by another of the same type that occurs
nowhere in the image's scene graph (COMPASS section 3.2, appendix A).

Candidates per primitive are cached (a dict per type, as the paper caches its LLM's
proposals). The offline default (compass/lexicon.py) proposes values of the dataset's
vocabulary of the same WordNet category that are not synonyms; an LLM writer can propose
them instead, and is asked again when none of its candidates survives. A candidate that
occurs in the image (any name of any object) or is a synonym of something that does is
never used. A negative is rejected when its sentence-embedding similarity to the original
exceeds 0.95 (N < 6) or 0.90 (N >= 6); the same rule applies to composed, decomposed and
skill-targeted negatives, and every test and rejection is counted per set and N.

  composed/decomposed  every primitive perturbed once; up to 3 attempts per primitive;
                       the caption is dropped if one primitive gets no valid negative
  skill-targeted       K = 4 negatives replacing primitives of one type; primitives drawn
                       by weight, a weight halving each time it is drawn; no two negatives
                       identical; up to 10 attempts, else the caption is dropped

What the filter compares and how a build batches it: compass/filter.py.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Generator, Iterable
from dataclasses import dataclass, field

from autocomp.compass.filter import Test, edited_sentences, settle, threshold
from autocomp.compass.render import composed, decomposed, primitives
from autocomp.core.scene import Object, Relation, SceneGraph

# spatial predicates that state the opposite of each other (Visual Genome's spellings and
# the built-in relations'): a negative swapping one for the other contradicts the image, so
# it is no paraphrase however close its embedding (MiniLM: 0.98 for left / right); COMPASS
# asks for such negatives (candidates "with a preference for opposites")
SPATIAL_OPPOSITES = (
    ("left of", "right of"), ("to the left of", "to the right of"),
    ("on the left of", "on the right of"), ("above", "below"), ("above", "under"),
    ("over", "under"), ("on top of", "under"), ("on top of", "below"), ("above", "beneath"),
    ("in front of", "behind"), ("inside", "outside"), ("inside of", "outside of"))

K_SKILL = 4
SKILL_ATTEMPTS = 10
PRIMITIVE_ATTEMPTS = 3


def graph_vocab(graphs: Iterable[SceneGraph]) -> dict[str, Counter]:
    """Objects, attributes and predicates of a set of graphs, with their frequencies."""
    out = {"O": Counter(), "A": Counter(), "R": Counter()}
    for g in graphs:
        out["O"].update(o.name for o in g.objects)
        out["A"].update(a for o in g.objects for a in o.attributes)
        out["R"].update(r.predicate for r in g.relations)
    return out


def value_of(graph: SceneGraph, prim: tuple) -> str:
    if prim[0] == "O":
        return graph.objects[prim[1]].name
    if prim[0] == "A":
        return graph.objects[prim[1]].attributes[prim[2]]
    return graph.relations[prim[1]].predicate


def replace(graph: SceneGraph, prim: tuple, new: str) -> SceneGraph:
    objs, rels = list(graph.objects), list(graph.relations)
    if prim[0] == "O":
        objs[prim[1]] = Object(new, objs[prim[1]].attributes)
    elif prim[0] == "A":
        o = objs[prim[1]]
        attrs = list(o.attributes)
        attrs[prim[2]] = new
        objs[prim[1]] = Object(o.name, tuple(attrs))
    else:
        r = rels[prim[1]]
        rels[prim[1]] = Relation(r.subject, new, r.object)
    return SceneGraph(tuple(objs), tuple(rels))


@dataclass
class Replacer:
    vocab: dict[str, Counter]
    # .similarities([(a, b), ...]) -> floats (or .similar(a, b)), or None: no filter
    similarity: object = None
    cache: dict = field(default_factory=dict)
    # (primitive, value) -> candidates: SynsetCandidates, an LLM, or None (any other value of
    # the type: the unfiltered ablation). It may have .same_meaning(primitive, a, b) (synonyms
    # of what the image shows are left out) and .more(primitive, value) (asked again when no
    # candidate survives), .plausible(primitive, candidate, graph, prim).
    propose: object = None
    # (set, n) -> Counter(tested, rejected): the similarity filter's work
    filter_stats: dict = field(default_factory=dict)
    # (primitive, value) -> its category, where values of a type fall in several (a scene
    # task's attribute vocabularies: sizes, textures, colors); a replacement stays inside it
    groups: dict = field(default_factory=dict)
    scope: str = "primitive"  # what the filter compares: filter.SCOPES
    # frozenset({a, b}) of relations that are opposites: such a replacement skips the
    # similarity filter (it contradicts the original, so it cannot paraphrase it)
    opposites: set = field(default_factory=set)
    # (primitive, value) -> Counter((candidate, why)): candidates the per-image filter refused
    refused: dict = field(default_factory=dict)

    def opposite(self, edit: dict) -> bool:
        """Whether an edit replaces a relation by its opposite (or an attribute by its
        antonym, where the candidates' lexicon knows antonyms); counted as kept."""
        pair = frozenset((edit["from"], edit["to"]))
        if edit["type"] == "R" and pair in self.opposites:
            return True
        known = getattr(self.propose, "opposite", None)
        return bool(known and known(edit["type"], edit["from"], edit["to"]))

    def filtered(self, edit: dict, n: int, tally: str) -> bool:
        """Whether this edit's negative goes to the similarity filter (opposites do not:
        their pass is counted per set and N as opposites_kept)."""
        if self.similarity is None:
            return False
        if self.opposite(edit):
            self.filter_stats.setdefault((tally, n), Counter())["opposites_kept"] += 1
            return False
        return True

    def vocabulary(self, primitive: str, value: str) -> list[str]:
        group = self.groups.get((primitive, value))
        return sorted(v for v in self.vocab[primitive] if v != value
                      and self.groups.get((primitive, v)) == group)

    def candidates(self, primitive: str, value: str) -> list[str]:
        key = (primitive, value)
        if key not in self.cache:
            self.cache[key] = (self.propose or self.vocabulary)(primitive, value)
        return self.cache[key]

    def _usable(self, graph: SceneGraph, prim: tuple, image: dict[str, set],
                candidates) -> list[str]:
        ptype = prim[0]
        same = getattr(self.propose, "same_meaning", None)
        plausible = getattr(self.propose, "plausible", None)
        tally = self.refused.setdefault((ptype, value_of(graph, prim)), Counter())
        options = []
        for c in candidates:  # each refusal counted with its reason (candidates.json)
            if c in image[ptype]:
                why = "in the image"
            elif same and any(same(ptype, c, p) for p in image[ptype]):
                why = "says what a value in the image says"
            elif ptype == "A" and c in graph.objects[prim[1]].attributes:
                why = "the object has it already"
            elif plausible is not None and not plausible(ptype, c, graph, prim):
                why = "never seen on an object of this kind"
            else:
                options.append(c)
                continue
            tally[(c, why)] += 1
        return options

    def perturb(self, graph: SceneGraph, prim: tuple, image: dict[str, set],
                rng: random.Random) -> tuple[SceneGraph, dict] | None:
        value = value_of(graph, prim)
        options = self._usable(graph, prim, image, self.candidates(prim[0], value))
        more = getattr(self.propose, "more", None)
        if not options and more is not None:  # as the paper does: ask the LLM again
            extra = more(prim[0], value)
            self.cache[(prim[0], value)] = list(dict.fromkeys(
                [*self.cache.get((prim[0], value), []), *extra]))
            options = self._usable(graph, prim, image, extra)
        if not options:
            return None
        new = rng.choice(options)
        edit = {"type": prim[0], "primitive": list(prim), "from": value, "to": new}
        return replace(graph, prim, new), edit

    def pair(self, test: Test) -> tuple[str, str]:
        if test.decomposed or self.scope == "primitive":
            return test.d, test.d_neg
        if self.scope == "caption":
            return test.caption, test.negative
        return edited_sentences(test.caption, test.negative)

    def judge(self, tests: list[Test]) -> list[bool]:
        """Each test's verdict (True: too similar, rejected), all pairs embedded at once."""
        pairs = [self.pair(t) for t in tests]
        batch = getattr(self.similarity, "similarities", None)
        scores = batch(pairs) if batch else [self.similarity.similar(a, b) for a, b in pairs]
        out = []
        for test, score in zip(tests, scores, strict=True):
            rejected = score > threshold(test.n)
            counts = self.filter_stats.setdefault((test.tally, test.n), Counter())
            counts["tested"] += 1
            counts["rejected"] += rejected
            out.append(rejected)
        return out

    def filter_report(self) -> dict:
        """{set: {N: {tested, rejected, rate}}} for the manifest and `compass build`."""
        out: dict = {}
        for (name, n), c in sorted(self.filter_stats.items()):
            out.setdefault(name, {})[str(n)] = {
                "tested": c["tested"], "rejected": c["rejected"],
                "rate": round(c["rejected"] / c["tested"], 4) if c["tested"] else 0.0,
                "opposites_kept": c["opposites_kept"]}
        return out


def image_primitives(graph: SceneGraph) -> dict[str, set]:
    v = graph_vocab([graph])
    return {k: set(c) for k, c in v.items()}


def template_renderer(graph: SceneGraph, caption: str, neg_graph: SceneGraph,
                      edit: dict) -> str | None:
    return composed(neg_graph)


def composed_set(graph: SceneGraph, image: dict[str, set], rep: Replacer,
                 rng: random.Random, caption: str | None = None,
                 render=template_renderer) -> dict | None:
    return settle([composed_steps(graph, image, rep, rng, caption, render)], rep)[0]


def skill_set(graph: SceneGraph, primitive: str, image: dict[str, set], rep: Replacer,
              rng: random.Random, caption: str | None = None,
              render=template_renderer) -> dict | None:
    return settle([skill_steps(graph, primitive, image, rep, rng, caption, render)], rep)[0]


def composed_steps(graph: SceneGraph, image: dict[str, set], rep: Replacer,
                   rng: random.Random, caption: str | None = None,
                   render=template_renderer) -> Generator:
    """N negatives, one per primitive, each with its matched decomposed pair; None if a
    primitive has no valid negative after 3 attempts. `caption` and `render` default to
    the template; an LLM caption comes with a renderer that substitutes the edited word."""
    caption = caption or composed(graph)
    n = len(primitives(graph))
    negatives, pairs = [], []
    for prim in primitives(graph):
        found = None
        for _ in range(PRIMITIVE_ATTEMPTS):
            got = rep.perturb(graph, prim, image, rng)
            if got is None:
                break
            neg_graph, edit = got
            neg = render(graph, caption, neg_graph, edit)
            d, d_neg = decomposed(graph, prim), decomposed(neg_graph, prim)
            if neg is None or neg == caption or neg in (x["caption"] for x in negatives):
                continue
            if rep.filtered(edit, n, f"composed-{prim[0]}") and any((yield [
                    Test(caption, neg, d, d_neg, n, f"composed-{prim[0]}"),
                    Test(caption, neg, d, d_neg, n, f"decomposed-{prim[0]}", True)])):
                continue
            found = (neg_graph, edit, neg, d, d_neg)
            break
        if found is None:
            return None
        neg_graph, edit, neg, d, d_neg = found
        negatives.append({"caption": neg, "edit": edit, "category": edit["type"],
                          "same_meaning": False, "graph": neg_graph.to_dict()})
        pairs.append({"primitive": list(prim), "positive": d, "negative": d_neg,
                      "edit": edit, "graph": neg_graph.to_dict()})
    return {"caption": caption, "negatives": negatives, "decomposed": pairs}


def skill_steps(graph: SceneGraph, primitive: str, image: dict[str, set], rep: Replacer,
                rng: random.Random, caption: str | None = None,
                render=template_renderer) -> Generator:
    """K = 4 negatives replacing primitives of type `primitive` only; None if they cannot be had."""
    prims = [p for p in primitives(graph) if p[0] == primitive]
    if not prims:
        return None
    caption = caption or composed(graph)
    n = len(primitives(graph))
    weights = [1.0] * len(prims)
    negatives: list[dict] = []
    for _ in range(SKILL_ATTEMPTS):
        if len(negatives) == K_SKILL:
            break
        i = rng.choices(range(len(prims)), weights=weights)[0]
        weights[i] /= 2
        got = rep.perturb(graph, prims[i], image, rng)
        if got is None:
            continue
        neg_graph, edit = got
        neg = render(graph, caption, neg_graph, edit)
        if neg is None or neg == caption or any(x["caption"] == neg for x in negatives):
            continue
        if rep.filtered(edit, n, f"skill-{primitive}") and (yield [Test(
                caption, neg, decomposed(graph, prims[i]), decomposed(neg_graph, prims[i]), n,
                f"skill-{primitive}")])[0]:
            continue
        negatives.append({"caption": neg, "edit": edit, "category": primitive,
                          "same_meaning": False, "graph": neg_graph.to_dict()})
    if len(negatives) < K_SKILL:
        return None
    return {"caption": caption, "negatives": negatives}

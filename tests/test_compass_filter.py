"""COMPASS's similarity filter: what it compares, batched judging that changes no verdict,
each sentence embedded once through the harness's cache, and relation negatives kept."""

import hashlib
import random
from collections import Counter

import pytest

from autocomp.compass.filter import edited_sentences, settle
from autocomp.compass.negatives import Replacer, composed_set, composed_steps, skill_steps
from autocomp.compass.render import composed, decomposed
from autocomp.core.errors import AutocompError
from autocomp.core.scene import Object, Relation, SceneGraph

GRAPH = SceneGraph((Object("cube", ("red",)), Object("sphere", ("blue",)), Object("lamp")),
                   (Relation(0, "left of", 1),))
VOCAB = {"O": Counter(["cube", "sphere", "cone", "torus", "prism"]),
         "A": Counter(["red", "blue", "green", "yellow", "pink"]),
         "R": Counter(["left of", "right of", "above", "below", "behind", "in front of"])}
SEEN = {"O": {"cube", "sphere", "lamp"}, "A": {"red", "blue"}, "R": {"left of"}}


class Recording:
    """Scores from a hash of the pair (0.80 to 1.00) or `fixed`, every call and pair
    remembered."""

    model_ref = "recording"

    def __init__(self, fixed=None):
        self.calls, self.pairs, self.fixed = 0, [], fixed

    def similarities(self, pairs):
        self.calls += 1
        self.pairs += pairs
        if self.fixed is not None:
            return [self.fixed] * len(pairs)
        return [0.8 + 0.2 * int(hashlib.sha256(f"{a}|{b}".encode()).hexdigest()[:4], 16)
                / 0xFFFF for a, b in pairs]


def test_edited_sentences_are_the_changed_ones():
    a = "There is a red cube. The cube is left of a sphere. There is a lamp."
    b = "There is a red cube. The cube is right of a sphere. There is a lamp."
    assert edited_sentences(a, b) == ("The cube is left of a sphere.",
                                      "The cube is right of a sphere.")
    two = "There is a red cone. The cone is left of a sphere. There is a lamp."
    assert edited_sentences(a, two) == ("There is a red cube. The cube is left of a sphere.",
                                        "There is a red cone. The cone is left of a sphere.")
    assert edited_sentences("One. Two.", "One two.") == ("One. Two.", "One two.")  # unaligned


@pytest.mark.parametrize("scope", ["primitive", "sentence", "caption"])
def test_the_scope_decides_what_is_compared(scope):
    sim = Recording(fixed=0.5)  # nothing rejected: one test pair per negative
    rep = Replacer(VOCAB, sim, scope=scope)
    got = composed_set(GRAPH, SEEN, rep, random.Random(0))
    assert got is not None
    caption = composed(GRAPH)
    assert caption == "There is a red cube left of a blue sphere. There is a lamp."
    tested = iter(sim.pairs)
    for neg, pair in zip(got["negatives"], got["decomposed"], strict=True):
        first, second = next(tested), next(tested)  # the composed test, then the decomposed
        assert second == (pair["positive"], pair["negative"])
        want = {"primitive": (pair["positive"], pair["negative"]),
                "sentence": edited_sentences(caption, neg["caption"]),
                "caption": (caption, neg["caption"])}[scope]
        assert first == want
    rel = [p for p in got["decomposed"] if p["primitive"][0] == "R"][0]
    assert rel["positive"] == decomposed(GRAPH, ("R", 0))


def test_batched_judging_changes_no_verdict_and_makes_few_calls():
    graphs = [SceneGraph((Object(o, (c,)), Object("sphere", ("blue",))),
                         (Relation(0, r, 1),))
              for o in ("cube", "cone", "torus") for c in ("red", "green")
              for r in ("left of", "above")]

    def steps(rep, g, i):
        rng = random.Random(i)
        comp = yield from composed_steps(g, SEEN, rep, rng)
        skill = yield from skill_steps(g, "R", SEEN, rep, rng)
        return comp, skill

    alone_sim, batched_sim = Recording(), Recording()
    alone_rep, batched_rep = Replacer(VOCAB, alone_sim), Replacer(VOCAB, batched_sim)
    alone = [settle([steps(alone_rep, g, i)], alone_rep)[0] for i, g in enumerate(graphs)]
    batched = settle([steps(batched_rep, g, i) for i, g in enumerate(graphs)], batched_rep)
    assert batched == alone
    assert any(skill is None for _, skill in alone) and any(c for c, _ in alone)
    assert alone_rep.filter_report() == batched_rep.filter_report()
    assert batched_sim.pairs and sorted(batched_sim.pairs) == sorted(alone_sim.pairs)
    assert batched_sim.calls < alone_sim.calls / len(graphs) * 2  # one call per round


@pytest.mark.slow
def test_each_sentence_is_embedded_once_and_the_cache_is_reused(tmp_path):
    from autocomp.compass.similarity import Similarity

    pairs = [("There is a red cube.", "There is a blue cube."),
             ("There is a red cube.", "There is a green cube."),
             ("There is a blue cube.", "There is a red cube.")]
    first = Similarity(cache_dir=tmp_path / "cache")
    try:
        got = first.similarities(pairs)
        assert first.encoded == 3  # three distinct sentences
        assert first.similarities(pairs[:1]) == got[:1] and first.encoded == 3
    finally:
        first.close()
    assert got[0] == pytest.approx(got[2], abs=1e-6) and all(0 < s < 1 for s in got)
    again = Similarity(cache_dir=tmp_path / "cache")
    assert again.similarities(pairs) == pytest.approx(got, abs=1e-6)
    assert again.encoded == 0 and again._model is None  # no model started at all
    assert list((tmp_path / "cache").glob("sentence-embedding*/*.vec"))


@pytest.mark.slow
def test_a_model_that_cannot_load_is_one_line(tmp_path):
    from autocomp.compass.similarity import Similarity

    sim = Similarity(str(tmp_path / "no-such-model"))
    try:
        with pytest.raises(AutocompError, match="no-such-model.*cannot be loaded"):
            sim.similar("a cube", "a cone")
    finally:
        sim.close()


@pytest.mark.slow
def test_relation_negatives_survive_the_default_filter(tmp_path):
    """The whole-caption rule rejected every relation negative of template captions at
    N >= 6 and left skill-R empty; MiniLM puts "left of" / "right of" at 0.98-0.99 even in
    single sentences. A run's relations differ in their declared geometry, so a relation
    replaced by another cannot paraphrase it: those negatives pass untested, counted."""
    from autocomp.compass.build import build_run
    from autocomp.compass.similarity import Similarity
    from autocomp.config import parse_config
    from autocomp.pipeline import run_pipeline
    from autocomp.run import Run

    cfg = parse_config({"name": "rel", "concepts": [
        {"task": "shape_position", "n": [3], "count": 12}],
        "generate": {"options": {"size": 64}}})
    run = Run.create(cfg, tmp_path / "run")
    run_pipeline(run, progress=False)
    sim = Similarity(cache_dir=tmp_path / "cache")
    try:
        kept = build_run(run.dir, tmp_path / "p", similarity=sim)
        whole = build_run(run.dir, tmp_path / "c", similarity=sim, scope="caption")
    finally:
        sim.close()
    unfiltered = build_run(run.dir, tmp_path / "n", similarity=None)
    assert kept["filter_scope"] == "primitive" and whole["filter_scope"] == "caption"
    for m in (kept, whole):
        assert m["counts"]["skill-R"] == unfiltered["counts"]["skill-R"] > 0
        r = m["filter"]["skill-R"]["5"]
        assert r["tested"] == 0 and r["opposites_kept"] > 0


def test_opposites_pass_and_other_relations_are_still_filtered():
    """A Visual Genome spatial opposite is kept even where MiniLM would call it a
    paraphrase; a replacement that is not an opposite still meets the filter."""
    from autocomp.compass.negatives import SPATIAL_OPPOSITES

    rep = Replacer(VOCAB, Recording(fixed=0.99),
                   opposites={frozenset(p) for p in SPATIAL_OPPOSITES})
    assert rep.opposite({"type": "R", "from": "left of", "to": "right of"})
    assert not rep.opposite({"type": "R", "from": "left of", "to": "above"})
    assert not rep.filtered({"type": "R", "from": "left of", "to": "right of"}, 5, "skill-R")
    assert rep.filtered({"type": "R", "from": "left of", "to": "above"}, 5, "skill-R")
    assert rep.filter_report()["skill-R"]["5"]["opposites_kept"] == 1


def test_no_compass_replacement_could_be_true_of_the_image():
    """WordNet: a guy is a kind of man, so "guy" never replaces a primitive of an image
    that shows a man (woman -> guy); big / small are antonyms (kept by the filter)."""
    from autocomp.compass.lexicon import Lexicon, SynsetCandidates
    from autocomp.compass.negatives import Replacer
    from autocomp.compass.wordnet import load_wordnet
    from autocomp.core.scene import Object, SceneGraph

    lex = Lexicon(load_wordnet())
    assert lex.entails("O", "guy", "man") and lex.entails("O", "man", "guy")
    assert lex.entails("O", "animal", "dog") and not lex.entails("O", "woman", "man")
    assert lex.opposite("A", "big", "small") and not lex.opposite("A", "big", "red")
    vocab = {"O": Counter(["man", "woman", "guy", "lady", "girl", "boy", "child"]),
             "A": Counter(), "R": Counter()}
    rep = Replacer(vocab, propose=SynsetCandidates(lex, vocab))
    graph = SceneGraph((Object("woman"), Object("man")), ())
    seen = {"O": {"woman", "man"}, "A": set(), "R": set()}
    # in any of their senses (issue 52): guy is a kind of man, lady and girl (girl.n.01: a
    # young woman) kinds of woman, boy informally a grown man (boy.n.02); child is none of
    # these, so only it may stand in for the woman
    assert rep._usable(graph, ("O", 0), seen,
                       ["guy", "lady", "girl", "boy", "child"]) == ["child"]

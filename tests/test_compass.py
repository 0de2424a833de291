"""COMPASS on a Visual Genome-format fixture and on a small synthetic run."""

import json
import math
import random
import re
from collections import Counter

import numpy as np
import pytest
from click.testing import CliRunner

from autocomp.cli import main
from autocomp.compass.analysis import fit_ols, gap_summary, identifiable, stars
from autocomp.compass.build import build_run, build_vg
from autocomp.compass.negatives import (
    K_SKILL,
    Replacer,
    composed_set,
    graph_vocab,
    image_primitives,
    skill_set,
    threshold,
    value_of,
)
from autocomp.compass.perplexity import band, rank_biserial
from autocomp.compass.render import composed, decomposed, primitives
from autocomp.compass.subgraph import RANGES, caption_graph, random_walk
from autocomp.compass.vg import load_vg
from autocomp.core.errors import AutocompError
from autocomp.core.scene import Object, Relation, SceneGraph

NAMES = ["sofa", "living room", "ceiling", "lamp", "table", "window", "rug", "cat", "book",
         "shelf", "plant", "wall"]
COLORS = ["dark brown", "white", "red", "wooden", "green", "tall", "small", "old"]
PREDICATES = ["in", "on", "near", "above", "next to", "under"]


def _image(iid, rng, n_obj=9):
    objects = [{"object_id": iid * 100 + k, "names": [f"  {NAMES[(iid + k) % 12].upper()} "],
                "attributes": [rng.choice(COLORS)] if k % 2 == 0 else []}
               for k in range(n_obj)]
    rels = [{"relationship_id": iid * 1000 + k, "predicate": rng.choice(PREDICATES).upper(),
             "subject_id": iid * 100 + k, "object_id": iid * 100 + k + 1}
            for k in range(n_obj - 1)]
    rels += [{"predicate": "near", "subject_id": iid * 100, "object_id": 999999}]
    objects.append({"object_id": iid * 100 + 50, "names": []})
    return {"image_id": iid, "objects": objects, "relationships": rels}


@pytest.fixture(scope="module")
def vg(tmp_path_factory):
    """A VG folder: 6 images (chains of 9 objects), one malformed entry, extra attributes,
    a relation to a missing object and a nameless object per image; images as PNG."""
    from PIL import Image

    d = tmp_path_factory.mktemp("vg")
    rng = random.Random(0)
    graphs = [_image(i, rng) for i in range(1, 7)]
    (d / "scene_graphs.json").write_text(json.dumps([*graphs[:2], "oops", *graphs[2:]]))
    (d / "attributes.json").write_text(json.dumps([
        {"image_id": 1, "attributes": [{"object_id": 101, "attributes": [" Striped ", "red"]}]}]))
    (d / "image_data.json").write_text(json.dumps([{"image_id": i, "width": 64, "height": 48}
                                                   for i in range(1, 7)]))
    (d / "images").mkdir()
    for i in range(1, 7):
        Image.new("RGB", (64, 48), (40 * i, 90, 160)).save(d / "images" / f"{i}.jpg")
    return d


def test_load_vg_normalises_merges_and_counts_skips(vg):
    skipped = Counter()
    images = load_vg(vg, skipped=skipped)
    assert [i.image_id for i in images] == [1, 2, 3, 4, 5, 6]
    first = images[0]
    assert first.graph.objects[0].name == NAMES[1]  # "  LIVING ROOM " -> "living room"
    assert first.graph.objects[1].attributes == ("striped", "red")  # merged from attributes.json
    assert first.graph.n_relations == 8 and all(r.predicate == r.predicate.lower()
                                                 for r in first.graph.relations)
    assert first.meta == {"width": 64, "height": 48}
    assert skipped == {"image: not an object with an integer image_id": 1,
                       "object: no name": 6,
                       "relation: subject or object id not among the objects": 6}
    assert [i.image_id for i in load_vg(vg, image_ids=[5, 2])] == [5, 2]
    assert len(load_vg(vg, limit=2)) == 2


def test_broken_vg_file_is_one_line(tmp_path):
    (tmp_path / "scene_graphs.json").write_text('[{"image_id": 1, "objects": [')
    with pytest.raises(AutocompError, match="scene_graphs.json: not valid JSON \\("):
        load_vg(tmp_path)
    with pytest.raises(AutocompError, match="no scene_graphs.json"):
        load_vg(tmp_path / "nowhere")


def test_walk_and_levels_obey_the_rules(vg):
    images = load_vg(vg)
    for img in images:
        rng = random.Random(img.image_id)
        sub = random_walk(img.graph, rng)
        assert sub.n_relations <= 10 and sub.n_objects <= 11
        names = {o.name: o.attributes for o in img.graph.objects}
        for o in sub.objects:  # an object brings its attributes
            assert o.attributes == names[o.name]
        for level, (low, high) in RANGES.items():
            assert caption_graph(sub, level, low - 1, rng) is None
            for n in range(low, high + 1):
                g = caption_graph(sub, level, n, rng)
                if g is None:
                    continue
                assert len(primitives(g)) == n == g.counts["total"]
                assert g.n_objects >= 1
                assert (g.n_attributes > 0) == ("A" in level)
                assert (g.n_relations > 0) == ("R" in level)


def test_template_captions_are_the_papers():
    g = SceneGraph((Object("sofa", ("dark brown",)), Object("living room"), Object("ceiling")),
                   (Relation(0, "in", 1),))
    assert composed(g) == "There is a dark brown sofa in a living room. There is a ceiling."
    assert decomposed(g, ("O", 0)) == "There is a sofa in the image."
    assert decomposed(g, ("A", 0, 0)) == "There is a dark brown sofa."
    assert decomposed(g, ("R", 0)) == "The sofa is in the living room."
    chain = SceneGraph((Object("cup"), Object("table"), Object("rug")),
                       (Relation(0, "on", 1), Relation(1, "on", 2)))
    assert composed(chain) == "There is a cup on a table. The table is on a rug."


def _setup(vg):
    images = load_vg(vg)
    return images, Replacer(graph_vocab(i.graph for i in images))


def test_composed_negatives_change_one_primitive_not_in_the_image(vg):
    images, rep = _setup(vg)
    img = images[0]
    g = caption_graph(random_walk(img.graph, random.Random(1)), "OAR", 6, random.Random(2))
    seen = image_primitives(img.graph)
    got = composed_set(g, seen, rep, random.Random(3))
    assert got is not None and len(got["negatives"]) == len(primitives(g)) == 6
    for prim, neg, pair in zip(primitives(g), got["negatives"], got["decomposed"],
                               strict=True):
        ng = SceneGraph.from_dict(neg["graph"])
        changed = [p for p in primitives(g) if value_of(g, p) != value_of(ng, p)]
        assert changed == [prim]  # exactly this primitive
        assert value_of(ng, prim) not in seen[prim[0]]  # nowhere in the image's graph
        assert neg["caption"] == composed(ng) and pair["negative"] == decomposed(ng, prim)
        assert pair["positive"] == decomposed(g, prim)  # matched perturbation


def test_skill_negatives_k4_distinct_one_type_spread_by_weights(vg):
    images, rep = _setup(vg)
    g = SceneGraph((Object("sofa", ("white",)), Object("lamp", ("red",)), Object("cat")), ())
    seen = {"O": {"sofa", "lamp", "cat"}, "A": {"white", "red"}, "R": set()}
    got = skill_set(g, "A", seen, rep, random.Random(0))
    assert len(got["negatives"]) == K_SKILL == 4
    assert len({n["caption"] for n in got["negatives"]}) == 4
    assert all(n["edit"]["type"] == "A" for n in got["negatives"])
    targets = {tuple(n["edit"]["primitive"]) for n in got["negatives"]}
    assert targets == {("A", 0, 0), ("A", 1, 0)}  # halving weights spreads the picks
    assert skill_set(g, "R", seen, rep, random.Random(0)) is None  # no relation to replace
    tiny = Replacer({"O": Counter(["sofa", "lamp", "cat", "dog"]), "A": Counter(), "R": Counter()})
    assert skill_set(g, "O", seen, tiny, random.Random(0)) is None  # one candidate only
    assert composed_set(g, seen, tiny, random.Random(0)) is None  # attributes have none


class _Sim:
    def __init__(self, value):
        self.value = value

    def similar(self, a, b):
        return self.value


def test_similarity_threshold_depends_on_n():
    assert threshold(5) == 0.95 and threshold(6) == 0.90
    vocab = {"O": Counter([f"thing{i}" for i in range(30)]), "A": Counter(), "R": Counter()}
    seen = {"O": set(), "A": set(), "R": set()}
    five = SceneGraph(tuple(Object(f"thing{i}") for i in range(5)))
    six = SceneGraph(tuple(Object(f"thing{i}") for i in range(6)))
    rep = Replacer(vocab, _Sim(0.93))
    assert composed_set(five, seen, rep, random.Random(0)) is not None  # 0.93 <= 0.95
    assert composed_set(six, seen, rep, random.Random(0)) is None  # 0.93 > 0.90


@pytest.mark.slow
def test_default_similarity_model_is_offline_minilm():
    from autocomp.compass.similarity import Similarity

    sim = Similarity()
    assert "minilm" in sim.model_ref.lower()
    same = sim.similar("There is a red sofa.", "There is a red sofa.")
    near = sim.similar("There is a red sofa.", "There is a red couch.")
    far = sim.similar("There is a red sofa.", "The cat is under the table.")
    assert same == pytest.approx(1.0, abs=1e-5) and far < near < 1.0


def test_ols_recovers_betas_and_clustered_se_matches_the_sandwich():
    rng = np.random.default_rng(0)
    n_img, per = 300, 4
    groups = np.repeat(np.arange(n_img), per)
    X = rng.integers(1, 7, size=(n_img * per, 2)).astype(float)
    cluster = rng.normal(0, 5, n_img)[groups]
    y = 40 - 3.0 * X[:, 0] + 1.5 * X[:, 1] + cluster + rng.normal(0, 4, len(groups))
    fit = fit_ols(y, X, groups, ["n_O", "n_A"])
    assert fit["n_O"]["coef"] == pytest.approx(-3.0, abs=3 * fit["n_O"]["se"])
    assert fit["n_A"]["coef"] == pytest.approx(1.5, abs=3 * fit["n_A"]["se"])
    assert stars(fit["n_O"]["p"]) == "**"
    # cluster-robust sandwich with statsmodels' small-sample factor, by hand
    D = np.column_stack([np.ones(len(y)), X])
    beta = np.linalg.lstsq(D, y, rcond=None)[0]
    resid = y - D @ beta
    bread = np.linalg.inv(D.T @ D)
    meat = sum(np.outer(D[groups == g].T @ resid[groups == g], D[groups == g].T @
                        resid[groups == g]) for g in range(n_img))
    n, k = D.shape
    factor = n_img / (n_img - 1) * (n - 1) / (n - k)
    se = np.sqrt(np.diag(factor * bread @ meat @ bread))
    assert [fit[c]["se"] for c in ("const", "n_O", "n_A")] == pytest.approx(list(se), rel=1e-9)
    assert stars(0.004) == "*" and stars(0.0009) == "**" and stars(0.01) == ""


def test_gap_spread_is_the_sample_std_and_p_values_use_t():
    """Table 2's spread is the sample std (ddof=1); OLS p-values come from Student's t with
    clusters - 1 degrees of freedom, not from the normal distribution."""
    from scipy import stats

    rows = [{"level": "OA", "n": n, "gap": g} for n, g in ((2, 1.0), (3, 2.0), (4, 6.0))]
    mean, std = gap_summary(rows)["OA"]
    assert mean == 3.0 and std == pytest.approx(np.sqrt(7.0))  # ddof=0 would give 2.160
    assert np.isnan(gap_summary(rows[:1])["OA"][1])
    rng = np.random.default_rng(1)
    groups = np.repeat(np.arange(8), 3)  # 8 clusters: t with 7 df differs clearly from z
    X = rng.integers(1, 6, size=(24, 1)).astype(float)
    y = 10 + 0.8 * X[:, 0] + rng.normal(0, 2, 24)
    fit = fit_ols(y, X, groups, ["n_O"])
    t = fit["n_O"]["coef"] / fit["n_O"]["se"]
    assert fit["n_O"]["p"] == pytest.approx(2 * stats.t.sf(abs(t), df=7), rel=1e-9)
    assert fit["n_O"]["p"] != pytest.approx(2 * stats.norm.sf(abs(t)), rel=1e-3)


def test_collinear_counts_are_named_not_fitted():
    X = np.array([[1, 1, 0], [2, 2, 0], [3, 3, 0], [2, 2, 0]], dtype=float)
    assert identifiable(X) == ([0], [1])


def test_rank_biserial_by_hand():
    assert rank_biserial([1, 2, 3], [4, 5, 6]) == 1.0  # U = 0
    assert rank_biserial([4, 5, 6], [1, 2, 3]) == -1.0  # U = 9
    assert rank_biserial([1, 2], [2, 3]) == 0.75  # U = 0.5 (one tie)
    assert band(0.05) == "negligible" and band(-0.2) == "small" and band(0.3) == "medium or large"


@pytest.fixture(scope="module")
def synthetic_run(tmp_path_factory):
    from autocomp.config import parse_config
    from autocomp.pipeline import run_pipeline
    from autocomp.run import Run

    tmp = tmp_path_factory.mktemp("synrun")
    cfg = parse_config({"name": "syn", "concepts": [
        {"task": "shape_color", "n": [2, 3], "count": 5},
        {"task": "shape_position", "n": [2, 3], "count": 5}],
        "generate": {"options": {"size": 128}}})
    run = Run.create(cfg, tmp / "run")
    run_pipeline(run, progress=False)
    return run


@pytest.mark.slow
def test_side_by_side_report_oracle_has_no_artefact(vg, synthetic_run, tmp_path):
    from tiny_models import tiny_open_clip

    syn, real = tmp_path / "syn", tmp_path / "vgset"
    m1 = build_run(synthetic_run.dir, syn)
    m2 = build_vg(vg, vg / "images", real, candidates="vocabulary")  # this fixture's words
    # are placeholders: WordNet categories are tested on tests/vg_fixture.py
    assert m1["counts"]["composed"] > 0 and m2["counts"]["composed"] > 0
    assert m2["skipped"]["object: no name"] == 6
    oc = f"open_clip:local-dir:{tiny_open_clip(tmp_path / 'oc')}"
    runner = CliRunner()
    for d in (syn, real):
        out = runner.invoke(main, ["compass", "eval", str(d), "--model", "reference:oracle",
                                   "--model", oc, "--batch-size", "32"])
        assert out.exit_code == 0, out.output
    out = runner.invoke(main, ["compass", "report", str(syn), str(real)])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    oracle_t2 = [ln for ln in lines if ln.startswith("| reference:oracle") and "±" in ln]
    assert {ln.split("|")[2].strip() for ln in oracle_t2} == {"synthetic", "VG"}
    for ln in oracle_t2:
        cells = [c.strip() for c in ln.strip("|").split("|")[2:5]]  # OAR, OA, OR
        # the gap, then its null (a random scorer's expected gap on those items)
        assert all(c == "-" or c.split(" (null ")[0] in ("0.00±0.00", "0.00 (one N)")
                   for c in cells), cells
        assert "OA" in ln.strip("|").split("|")[5]  # thin N rows are named: few items here
    oracle_t3 = [ln for ln in lines if ln.startswith("| reference:oracle") and "±" not in ln
                 and len(ln.strip("|").split("|")) == 15]  # Table 3: 3 + 3 x 4 columns
    assert oracle_t3
    for ln in oracle_t3:
        cells = [c.strip() for c in ln.strip("|").split("|")[3:]]
        items, coefs = cells[0::4], [c for i, c in enumerate(cells) if i % 4]
        assert all(c == "-" or re.fullmatch(r"\d+ \(\d+ (images|concepts)\)", c)
                   for c in items), items
        # the oracle never errs: no slope, and no SE to test one with (so no star)
        assert all(c in ("-", "collinear") or c.startswith("0.00 (SE n/a)") for c in coefs)
    assert any(ln.startswith(f"| {oc}") for ln in lines)
    assert list((real / "figures").glob("*.png"))


def test_perplexity_audit_runs_with_a_local_lm(vg, tmp_path):
    from tiny_models import tiny_causal_lm

    out = tmp_path / "set"
    build_vg(vg, vg / "images", out, limit=3)
    lm = tiny_causal_lm(tmp_path / "lm")
    result = CliRunner().invoke(main, ["compass", "perplexity", str(out), "--lm", str(lm)])
    assert result.exit_code == 0, result.output
    rows = [ln for ln in result.output.splitlines() if "r = " in ln]
    assert rows and all(("negligible" in r) or ("small" in r) or ("large" in r) for r in rows)


def test_build_needs_one_source(tmp_path):
    out = CliRunner().invoke(main, ["compass", "build", "--out", str(tmp_path / "x")])
    assert out.exit_code != 0 and "exactly one of RUN_DIR or --vg DIR" in out.output


def test_llm_written_captions_and_substituted_negatives(vg, tmp_path, fake_openai):
    from autocomp.compass.llm_captions import mentions_all, prompt, substitute

    g = SceneGraph((Object("sofa", ("dark brown",)), Object("living room"), Object("ceiling")),
                   (Relation(0, "in", 1),))
    system, user = prompt(g)
    assert "sofa (dark brown), living room, ceiling" in user and "sofa / in / living room" in user
    text = "A dark brown sofa sits in the living room under a ceiling."
    assert mentions_all(text, g) and not mentions_all("A sofa in a room.", g)
    edit = {"type": "A", "from": "dark brown", "to": "orange"}
    assert substitute(g, text, None, edit) == "An orange sofa sits in the living room under " \
                                              "a ceiling."
    assert substitute(g, text, None, {"type": "O", "from": "ceiling", "to": "awning"}) == \
        "A dark brown sofa sits in the living room under an awning."
    assert substitute(g, "a sofa and a sofa", None, {"type": "O", "from": "sofa",
                                                     "to": "chair"}) is None  # ambiguous

    # through the CLI with the openai writer (the fake server answers with the listed
    # elements, which names every primitive)
    def answer(body):
        user = body["messages"][-1]["content"]
        block = user.split("Elements:")[-1]
        objs = block.split("- objects:")[1].split("\n")[0].strip()
        rels = block.split("- relations:")[1].split("\n")[0].strip()
        words = objs.replace("(", "").replace(")", "").replace(",", " and")
        rel = "" if rels == "none" else " where " + rels.replace(" / ", " ").replace(";", ",")
        return {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                "choices": [{"index": 0, "finish_reason": "stop", "message": {
                    "role": "assistant", "content": f"We see {words}{rel}."}}]}

    fake_openai.reply = staticmethod(answer)
    out = tmp_path / "llm"
    result = CliRunner().invoke(main, [
        "compass", "build", "--vg", str(vg), "--images", str(vg / "images"), "--out", str(out),
        "--limit", "2", "--similarity", "none", "--writer", "openai", "--candidates", "vocabulary",
        "--writer-option", "model=m", "--writer-option", f"base_url={fake_openai.url}"])
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["writer"] == "OpenAIWriter" and manifest["counts"]["composed"] > 0
    from autocomp.core.records import read_jsonl

    for item in read_jsonl(out / "composed.jsonl"):
        assert item["positive"].startswith("We see ")
        for neg in item["negatives"]:  # one word changed in the writer's own sentence
            assert neg["caption"] != item["positive"]
            assert neg["edit"]["to"] in neg["caption"]


def test_llm_candidates_are_cached_per_primitive_and_filtered():
    from autocomp.compass.llm_captions import LLMCandidates

    class Writer:
        calls = 0

        def write(self, reqs):
            Writer.calls += 1
            assert '"sofa"' in reqs[0].user
            return ["Chair, bed, sofa,  Table. \n stool"]

    propose = LLMCandidates(Writer(), lambda k, v: ["fallback"])
    rep = Replacer({"O": Counter(["x"]), "A": Counter(), "R": Counter()}, propose=propose)
    assert rep.candidates("O", "sofa") == ["chair", "bed", "table", "stool"]
    assert rep.candidates("O", "sofa") == ["chair", "bed", "table", "stool"]
    assert Writer.calls == 1  # cached
    g = SceneGraph((Object("sofa"),))
    neg, edit = rep.perturb(g, ("O", 0), {"O": {"sofa", "bed"}, "A": set(), "R": set()},
                            random.Random(0))
    assert edit["to"] in {"chair", "table", "stool"}  # "bed" is in the image: never used


def test_vifs_by_hand():
    from autocomp.compass.analysis import vifs

    rng = np.random.default_rng(0)
    a, b = rng.normal(size=400), rng.normal(size=400)
    c = 0.8 * a + 0.6 * rng.normal(size=400)  # corr(a, c) = 0.8: VIF = 1 / (1 - 0.64)
    got = vifs(np.column_stack([a, b, c]))
    assert got[1] == pytest.approx(1.0, abs=0.05)
    assert got[0] == pytest.approx(1 / (1 - np.corrcoef(a, c)[0, 1] ** 2), rel=0.05)
    assert vifs(np.column_stack([a, a + 1, b]))[0] == float("inf")  # determined
    assert np.isnan(vifs(np.column_stack([a, np.ones(400), b]))[1])  # constant


def test_table3_prints_n_clusters_and_no_star_it_cannot_back():
    from autocomp.compass.report import coefficient

    few = {"n": 15, "clusters": 8}
    assert coefficient({"coef": -42.86, "se": 10.0, "p": 0.001}, few) == "-42.86 thin"
    many = {"n": 300, "clusters": 120}
    assert coefficient({"coef": -4.0, "se": 1.0, "p": 0.0001}, many) == "-4.00**"
    assert coefficient({"coef": -0.0, "se": math.nan, "p": math.nan}, many) == "0.00 (SE n/a)"
    assert coefficient({"coef": 2.2, "se": 1.0, "p": 0.2, "joint": ["n_A"]}, many) == \
        "+2.20 joint with n_A"


def test_captions_that_cannot_say_which_object_are_left_out_and_counted(tmp_path):
    from autocomp.compass.write import AMBIGUOUS, ambiguous, write_sets
    from autocomp.core.scene import Object, Relation, SceneGraph

    same = SceneGraph((Object("shirt"), Object("shirt")), (Relation(0, "left of", 1),))
    fine = SceneGraph((Object("shirt"), Object("hat")), (Relation(0, "left of", 1),))
    present = {"O": {"shirt", "hat"}, "A": set(), "R": {"left of"}}
    vocab = {"O": Counter(["shirt", "hat", "cup", "dog", "car"]),
             "A": Counter(),
             "R": Counter(["left of", "right of", "above", "under",
                                                     "behind"])}
    sources = [("a", "a.jpg", 1, present, [("OR", same)]),
               ("b", "b.jpg", 2, present, [("OR", fine)])]
    manifest = write_sets(sources, vocab, tmp_path / "set", 0, None,
                          {"source": "visual-genome", "image_root": str(tmp_path)},
                          candidates="vocabulary")
    assert manifest["counts"]["composed"] == 1
    assert manifest["dropped"] == {AMBIGUOUS: 1}
    # alike objects that no relation names, or that their attributes tell apart, read fine
    assert not ambiguous(SceneGraph((Object("shirt"), Object("shirt")), ()))
    assert ambiguous(SceneGraph((Object("shirt"), Object("shirt"), Object("hat")),
                                (Relation(2, "on", 1),)))  # on which shirt?
    assert not ambiguous(SceneGraph((Object("shirt", ("red",)), Object("shirt", ("blue",))),
                                    (Relation(0, "left of", 1),)))

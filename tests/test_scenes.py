"""Scene tasks (issue 12, first part): independent counts, exact counts, grammar, check."""

from collections import Counter

import numpy as np
import pytest

from autocomp.compass.analysis import vifs
from autocomp.concepts.scene_sampling import sample_scenes
from autocomp.concepts.scenes import load_scene_task
from autocomp.core.errors import AutocompError
from autocomp.core.scene import Object, Relation, SceneGraph
from autocomp.language.check import check_caption
from autocomp.language.scene import render_scene


@pytest.fixture(scope="module")
def scenes():
    return load_scene_task("scenes")


def _counts(concepts):
    return np.array([[c.graph.counts[k] for k in ("n_O", "n_A", "n_R")] for c in concepts])


def test_counts_are_exact_and_vary_independently(scenes):
    cells = scenes.cells()
    assert len(cells) == 58  # 4 x 6 x 4 cells, less those with n_R > n_O - 1 or n_A > 3 n_O
    assert all(r <= o - 1 and a <= 3 * o for o, a, r in cells)
    concepts = sample_scenes(scenes, 580, seed=0)
    per_cell = Counter(c.cell for c in concepts)
    assert set(per_cell) == set(cells)
    assert per_cell[(1, 0, 0)] == 8  # one concept per shape: the cell runs out
    assert all(9 <= k <= 11 for cell, k in per_cell.items() if cell != (1, 0, 0))
    for c in concepts:
        assert tuple(c.graph.counts[k] for k in ("n_O", "n_A", "n_R")) == c.cell
        names = [o.attributes for o in c.graph.objects]
        for attrs in names:  # at most one value of each vocabulary, in the written order
            kinds = [next(k for k, v in enumerate(scenes.attributes) if a in v.names)
                     for a in attrs]
            assert kinds == sorted(set(kinds))
        # relations form a forest: no cycle, no object related to itself
        parent = list(range(c.graph.n_objects))

        def root(i, parent=parent):
            while parent[i] != i:
                i = parent[i]
            return i
        for r in c.graph.relations:
            a, b = root(r.subject), root(r.object)
            assert a != b
            parent[a] = b
    v = vifs(_counts(concepts))
    assert max(v) < 5 and v[1] == pytest.approx(1.0, abs=0.01)
    # n_A = n_O and n_R = n_O - 1 (Auto-Comp concepts) are what the design avoids
    auto = np.array([[n, n, n - 1] for n in (2, 3) for _ in range(50)])
    assert vifs(auto)[0] == float("inf")
    assert sample_scenes(scenes, 30, seed=3) == sample_scenes(scenes, 30, seed=3)
    assert len({c.id for c in concepts}) == 580


def test_latin_hypercube_design(tmp_path):
    path = tmp_path / "lhs.yaml"
    path.write_text("name: lhs\nkind: scene\nobjects: shapes\nattributes: [colors]\n"
                    "relations: relations\ndesign: {kind: lhs, points: 12, n_O: 2-5, "
                    "n_A: 0-5, n_R: 0-4}\n")
    task = load_scene_task(str(path))
    cells = task.cells(seed=1)
    assert len(cells) == 12 and cells == task.cells(seed=1)
    assert all(r <= o - 1 and a <= o for o, a, r in cells)
    assert len({o for o, _, _ in cells}) >= 3  # spread over the strata


@pytest.mark.parametrize("body, needle", [
    ("kind: scene\nobjects: shapes\nattributes: []\nrelations: relations\n"
     "design: {n_O: 2, n_A: 0, n_R: 0}\n", "field attributes: expected a non-empty list"),
    ("kind: scene\nobjects: shapes\nattributes: [colors]\nrelations: relations\n"
     "design: {n_O: 2, n_A: 0, n_R: 5}\n", "field design: no feasible cell"),
    ("kind: scene\nobjects: shapes\nattributes: [relations]\nrelations: relations\n"
     "design: {n_O: 2, n_A: 0, n_R: 0}\n", r"field attributes\[0\]: vocabulary 'relations' is "
                                           "of kind relations"),
    ("kind: scene\nobjects: shapes\nattributes: [colors]\nrelations: relations\n"
     "design: {n_O: two, n_A: 0, n_R: 0}\n", "field design.n_O: expected a range"),
    ("kind: scene\nobjects: shapes\nattributes: [colors]\nrelations: relations\n"
     "design: {kind: lhs, n_O: 2, n_A: 0, n_R: 0}\n", "field design.points"),
    # sizes that once allocated 22 GiB in `vocab check` and --dry-run: refused at parse time
    ("kind: scene\nobjects: shapes\nattributes: [colors]\nrelations: relations\n"
     "design: {n_O: 1-100000000, n_A: 0-3, n_R: 0}\n",
     "field design: the ranges make 400,000,000 cells; a factorial design takes at most"),
    ("kind: scene\nobjects: shapes\nattributes: [colors]\nrelations: relations\n"
     "design: {kind: lhs, points: 1000000000, n_O: 2, n_A: 0, n_R: 0}\n",
     "field design.points: at most 100,000 Latin hypercube points"),
])
def test_bad_scene_task_is_one_line(tmp_path, body, needle):
    path = tmp_path / "t.yaml"
    path.write_text(body)
    with pytest.raises(AutocompError, match=needle):
        load_scene_task(str(path))


def test_scene_caption_grammar_and_check(scenes):
    g = SceneGraph((Object("cube", ("large", "striped", "red")), Object("sphere"),
                    Object("cone", ("small",)), Object("torus", ("blue",))),
                   (Relation(0, "to the left of", 1), Relation(0, "above", 2)))
    caption = render_scene(g, scenes.noun)
    assert caption == ("There is a large striped red cube to the left of a sphere. The cube "
                       "is above a small cone. There is a blue torus. The background is white.")
    result = check_caption(caption, g, scenes.noun, scenes.object_forms)
    assert result.passed and len(result.matches) == 7  # 5 attributes, 2 relations
    lone = SceneGraph((Object("cube", ("red",)), Object("torus")))  # said, so it is checked
    assert check_caption("There is a red cube. The background is white.", lone, scenes.noun,
                         scenes.object_forms).failed == ("torus",)
    for m in result.matches:  # each attribute's span holds its own value
        if m.binding.kind == "attribute":
            value = g.objects[m.binding.index].attributes[m.binding.attribute]
            assert caption[slice(*m.phrases[0].value)] == value
    # a caption that binds an attribute to the wrong object fails on that binding
    wrong = caption.replace("a small cone", "a cone").replace("a sphere", "a small sphere")
    failed = check_caption(wrong, g, scenes.noun, scenes.object_forms)
    assert failed.failed == ("small cone",)


def test_every_sampled_scene_caption_passes_the_check(scenes):
    for c in sample_scenes(scenes, 300, seed=1):
        caption = render_scene(c.graph, scenes.noun)
        result = check_caption(caption, c.graph, scenes.noun, scenes.object_forms)
        assert result.passed, (caption, result.failed)
        assert caption.endswith("The background is white.") and "  " not in caption


# ---- the scene task kind through the pipeline (issue 12, second part) -------------------

def _graph():
    return SceneGraph((Object("cube", ("large", "striped", "red")), Object("sphere"),
                       Object("cone", ("small", "blue")), Object("torus", ("dotted",))),
                      (Relation(0, "to the left of", 1), Relation(0, "above", 2)))


def test_load_task_dispatches_scene_files_and_configs_refuse_n(scenes, tmp_path):
    from autocomp.concepts.load import load_task
    from autocomp.config import parse_config

    assert load_task("scenes").kind == "scene" and load_task("color").kind == "attribute"
    assert scenes.n == (1, 2, 3, 4) and scenes.vocab_of_value["striped"].name == "textures"
    cfg = parse_config({"name": "s", "concepts": [{"task": "scenes", "count": 5}]})
    assert cfg.concepts[0].n == ()
    with pytest.raises(AutocompError, match=r"concepts\[0\].n: scene task 'scenes' takes no n"):
        parse_config({"name": "s", "concepts": [{"task": "scenes", "n": 2, "count": 5}]})
    both = tmp_path / "both.yaml"
    both.write_text("kind: scene\nobjects: shapes\nattributes: [colors, colors]\n"
                    "relations: relations\ndesign: {n_O: 2, n_A: 0, n_R: 0}\n")
    with pytest.raises(AutocompError, match="value 'red' is in two attribute vocabularies"):
        load_task(str(both))


@pytest.mark.slow
def test_scene_negatives_exact_counts_and_paper_special_cases(scenes):
    import math

    from autocomp.concepts.load import load_task
    from autocomp.core.scene import attribute_graph, chain_graph
    from autocomp.negatives.generate import graph_count, make_negatives

    g = _graph()  # objects 4; sizes 2 slots, textures 2, colors 2; relations 2
    assert graph_count(g, scenes, "swap") == math.factorial(4) - 1
    assert graph_count(g, scenes, "confusion") == 4**4 * 2**2 * 2**2 * 2**2 * 2**2 - 1
    for kind in ("swap", "confusion"):
        ns = make_negatives(g, scenes, kind, scenes.minimal_caption)
        assert len(ns.negatives) + ns.duplicates == graph_count(g, scenes, kind)
        for neg in ns.negatives:
            assert neg.graph.counts == g.counts  # same slots, other words
            for o in neg.graph.objects:  # a value stays in its vocabulary, in written order
                kinds = [scenes.vocab_of_value[a].name for a in o.attributes]
                assert kinds == [k for k in ("size_words", "textures", "colors") if k in kinds]
    swap = make_negatives(g, scenes, "swap", scenes.minimal_caption)
    assert {n.category for n in swap.negatives} == {"objects"}
    # on Auto-Comp's own concepts the definitions give the paper's counts
    colors = load_task("shape_color")
    for n in (2, 3):
        a = attribute_graph(["cube", "sphere", "cone"][:n], ["red", "blue", "green"][:n])
        c = chain_graph(["cube", "sphere", "cone"][:n], ["above", "under"][:n - 1])
        assert graph_count(a, scenes, "confusion") == n ** (2 * n) - 1
        assert graph_count(c, scenes, "confusion") == n**n * (n - 1) ** (n - 1) - 1
        assert graph_count(a, scenes, "swap") == math.factorial(n) - 1
        ns = make_negatives(a, scenes, "confusion", scenes.minimal_caption)
        paper = make_negatives(a, colors, "confusion", colors.minimal_caption)
        assert len(ns.negatives) == len(paper.negatives)
        assert (sum(x.same_meaning for x in ns.negatives)
                == sum(x.same_meaning for x in paper.negatives))


def test_scene_count_problem_names_the_concept(scenes):
    from autocomp.negatives.generate import graph_count_problem

    big = SceneGraph(tuple(Object(n, ("red",)) for n in ("cube", "sphere", "cone", "torus")),
                     (Relation(0, "above", 1), Relation(1, "above", 2), Relation(2, "above", 3)))
    problem = graph_count_problem(big, scenes, "confusion", 1000)
    assert "confusion would enumerate 1,769,471 negatives" in problem  # 4^4 4^4 3^3 - 1
    assert "'n_A': 4" in problem
    assert graph_count_problem(big, scenes, "swap", 1000) is None  # 4! - 1


def test_template_writer_and_contextual_substitution(scenes):
    from autocomp.captions.template import TemplateWriter
    from autocomp.captions.writers import write_with_retries
    from autocomp.negatives.contextual import substitute
    from autocomp.negatives.generate import make_negatives

    concepts = sample_scenes(scenes, 120, seed=2)
    written = write_with_retries(TemplateWriter(), [(c.id, c.graph, scenes, c.seed)
                                                    for c in concepts], 0)
    assert all(w["caption"] for w in written.values())
    g = _graph()
    text = ("In a quiet attic, there is a shiny large striped red cube to the left of a "
            "sphere. The cube is above a small blue cone. There is a dotted torus.")
    check = check_caption(text, g, scenes.noun, scenes.object_forms)
    assert check.passed
    neg = SceneGraph((Object("cube", ("small", "dotted", "orange")), Object("torus"),
                      Object("cone", ("large", "blue")), Object("sphere", ("striped",))),
                     g.relations)
    assert substitute(text, check, neg, scenes.noun) == (
        "In a quiet attic, there is a shiny small dotted orange cube to the left of a "
        "torus. The cube is above a large blue cone. There is a striped sphere.")
    # an object's several attribute phrases share one article, settled from its new first
    # word; another object's article follows its own ("an orange torus")
    g2 = SceneGraph((Object("cube", ("large", "red")), Object("torus", ("red",))),
                    (Relation(0, "next to", 1),))
    text2 = "A large red cube is next to a red torus on a desk."
    neg2 = SceneGraph((Object("cube", ("small", "orange")), Object("torus", ("orange",))),
                      g2.relations)
    check2 = check_caption(text2, g2, scenes.noun, scenes.object_forms)
    assert substitute(text2, check2, neg2, scenes.noun) == (
        "A small orange cube is next to an orange torus on a desk.")
    # every contextual negative differs from its positive only inside the matched spans
    c = next(c for c in concepts if c.graph.n_objects == 3 and c.graph.n_relations == 1)
    w = written[c.id]
    res = check_caption(w["caption"], c.graph, scenes.noun, scenes.object_forms)
    ns = make_negatives(c.graph, scenes, "swap",
                        lambda x: w["caption"] if x == c.graph else substitute(
                            w["caption"], res, x, scenes.noun))
    assert len(ns.negatives) == 5 and ns.duplicates == 0


def test_procedural_draws_what_the_pixel_answerer_reads(scenes):
    from autocomp.synth.base import ImageRequest
    from autocomp.synth.procedural import ProceduralGenerator
    from autocomp.validators.blobs import ColorBlobDetector
    from autocomp.validators.checks import validate_image

    g = SceneGraph((Object("cube", ("large", "dotted", "red")), Object("sphere", ("blue",)),
                    Object("cylinder", ("small", "striped")), Object("torus", ("checkered",))),
                   (Relation(1, "to the left of", 0), Relation(2, "above", 3)))
    qs = {q.text.split(" Answer")[0]: q.reads for q in scenes.questions(g)}
    assert qs["What size is the cube compared with the other objects?"] == "scale"
    assert qs["What pattern is on the surface of the cube?"] == "pattern"
    assert qs["What color is the cube?"] == "rgb"
    assert "Where is the cylinder relative to the torus?" in qs and len(qs) == 9
    gen, det = ProceduralGenerator(256), ColorBlobDetector()
    from autocomp.validators.pixels import PixelAnswerer

    passed = 0
    concepts = sample_scenes(scenes, 60, seed=4)
    for c in [None, *concepts]:
        graph = g if c is None else c.graph
        for track in ("minimal", "contextual"):
            img = gen.generate_one(ImageRequest("x", graph, scenes, track, 7 if c is None
                                                else c.seed, ""))
            results = validate_image(np.asarray(img.image.convert("RGB")), graph, scenes,
                                     track, det, PixelAnswerer())
            if c is None:  # the hand-made scene reads right, every attribute and relation
                answers = results[-1].evidence["answers"]
                assert results[-1].passed and len(answers) == 9  # 7 attributes, 2 relations
            passed += all(r.passed for r in results)
    assert passed >= 0.9 * 2 * 61  # sizes, textures, colors, relations read back
    assert gen.cannot_handle(scenes) is None


@pytest.mark.slow
def test_scene_run_compass_separates_the_three_coefficients(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from autocomp.cli import main
    from autocomp.compass.analysis import design_vifs, skill_load
    from autocomp.compass.build import build_run
    from autocomp.config import parse_config
    from autocomp.pipeline import run_pipeline
    from autocomp.run import Run

    cfg = parse_config({"name": "s", "concepts": [{"task": "scenes", "count": 70}],
                        "build": {"benchmarks": ["swap", "confusion"], "max_negatives": 800}})
    run = Run.create(cfg, tmp_path / "run")
    run_pipeline(run, progress=False)
    bench = {p.parent.name for p in (run.dir / "bench").glob("scenes-n*/*.jsonl")}
    assert bench == {"scenes-n2", "scenes-n3", "scenes-n4"}  # one object: nothing to swap
    out = tmp_path / "compass"
    manifest = build_run(run.dir, out, similarity=None)
    assert all(manifest["counts"][k] > 0 for k in ("composed", "skill-O", "skill-A"))
    import json

    vocab_of = run.tasks["scenes"].vocab_of_value
    edits = [neg["edit"] for name in ("skill-A", "composed")
             for row in (out / f"{name}.jsonl").read_text().splitlines()
             for neg in json.loads(row)["negatives"] if neg["edit"]["type"] == "A"]
    assert edits and all(vocab_of[e["from"]].name == vocab_of[e["to"]].name for e in edits)
    stats = json.loads((run.dir / "stats" / "build.json").read_text())
    assert stats["skipped_above_max_negatives"]["scenes confusion"] > 0
    r = CliRunner().invoke(main, ["compass", "eval", str(out), "--model", "reference:oracle",
                                  "--model", "reference:random"])
    assert r.exit_code == 0, r.output
    v = design_vifs(out)
    assert max(v["all"]) < 5
    fits = skill_load(out, "reference:oracle")
    oar = fits["OAR"]["O"]
    assert {"n_O", "n_A", "n_R"} <= set(oar) and not any(
        oar[c].get("collinear") for c in ("n_O", "n_A", "n_R"))
    assert all(abs(oar[c]["coef"]) < 1e-9 for c in ("n_O", "n_A", "n_R"))
    # exported for others (released layout + graph column) and read back: same items
    from autocomp.bench.export import export_run
    from autocomp.formats.autocomp_hf import load_autocomp_hf

    monkeypatch.setenv("AUTOCOMP_MAX_NEGATIVES", "800")
    export_run(run.dir, "parquet", tmp_path / "export")
    suite = load_autocomp_hf(tmp_path / "export" / "train.parquet", tmp_path / "imgs")
    back = {b.name.split("/", 1)[1]: list(b.items()) for b in suite.benchmarks}
    from autocomp.formats.runs import find_benchmarks

    for bench in find_benchmarks(run.dir):
        mine, theirs = list(bench.items()), back[bench.name]
        assert [(x["positive"], [n["caption"] for n in x["negatives"]]) for x in mine] == [
            (x["positive"], [n["caption"] for n in x["negatives"]]) for x in theirs]
    report = CliRunner().invoke(main, ["compass", "report", str(out), "--no-figures"])
    assert report.exit_code == 0, report.output
    table3 = report.output.split("Table 3")[1].split("Variance inflation")[0]
    rows = [ln for ln in table3.splitlines() if ln.startswith("| reference:")]
    assert len(rows) >= 6 and not any("collinear" in ln for ln in rows)


def test_scene_prompts_cli_and_diffusers_config(scenes, tmp_path):
    from click.testing import CliRunner

    from autocomp.captions.prompts import contextual_prompt
    from autocomp.cli import main
    from autocomp.config import parse_config

    system, user = contextual_prompt(_graph(), scenes)
    assert "ALL their attributes" in system
    assert ("'a large striped red cube to the left of a sphere' and 'a large striped red cube "
            "above a small blue cone' and 'a dotted torus'") in user
    cfg = parse_config({"name": "s", "concepts": [{"task": "scenes", "count": 5}],
                        "generate": {"generator": "diffusers"}})
    assert cfg.generate.generator.name == "diffusers"  # draws any vocabulary from captions
    runner = CliRunner()
    out = runner.invoke(main, ["vocab", "check", str(scenes.path)])
    assert out.exit_code == 0 and "scene task 'scenes' (58 design cells" in out.output
    out = runner.invoke(main, ["chance", "--task", "scenes"])
    assert out.exit_code == 2 and "its chance differs per concept" in out.output
    out = runner.invoke(main, ["preview", "--task", "scenes", "--n", "3"])
    assert out.exit_code == 0 and "(formula: 5)" in out.output
    out = runner.invoke(main, ["concepts", "--task", "scenes", "--count", "20", "--out",
                               str(tmp_path)])
    assert out.exit_code == 0 and "wrote 20 concepts" in out.output


def test_injected_faults_on_scenes_are_caught(scenes):
    from autocomp.synth.base import ImageRequest
    from autocomp.synth.procedural import ProceduralGenerator
    from autocomp.validators.blobs import ColorBlobDetector
    from autocomp.validators.checks import validate_image
    from autocomp.validators.pixels import PixelAnswerer

    gen = ProceduralGenerator(256, faults={"drop_object": 0.2, "wrong_color": 0.3,
                                           "swap": 0.3, "grey_background": 0.2})
    seen = Counter()
    for c in sample_scenes(scenes, 60, seed=5):
        img = gen.generate_one(ImageRequest("x", c.graph, scenes, "minimal", c.seed, ""))
        results = {r.name: r.passed for r in validate_image(
            np.asarray(img.image.convert("RGB")), c.graph, scenes, "minimal",
            ColorBlobDetector(), PixelAnswerer())}
        for f in img.faults:
            seen[f["kind"]] += 1
            if f["kind"] == "drop_object":
                assert results["objects"] is False
            elif f["kind"] == "grey_background" and results["objects"]:
                assert results["background"] is False
            elif f["kind"] in ("wrong_color", "swap") and len(img.faults) == 1:
                assert results["attributes"] is False, f  # the color no longer reads
    assert all(seen[k] >= 3 for k in ("drop_object", "wrong_color", "swap", "grey_background"))

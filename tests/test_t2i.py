"""`autocomp t2i`: text-to-image models scored from the scene graph, and each metric checked
against the embedded generator's exact truth."""

import hashlib
import json

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import built_run, dead_pid

from autocomp.cli import main
from autocomp.config import Backend
from autocomp.core import registry
from autocomp.core.backend import Backend as BackendBase
from autocomp.core.errors import AutocompError
from autocomp.t2i.compare import compare, model_of, read_models
from autocomp.t2i.generate import Model, draw, image_seed, prompts
from autocomp.t2i.probes import probes, true_answers

CONFIG = """
name: t2i
seed: 2
concepts:
  - {task: shape_color, n: [2, 3], count: 4}
  - {task: shape_position, n: [2], count: 4}
  - {task: shape_count, n: [2], count: 4}
  - {task: shape_material, n: [2], count: 3}
generate: {options: {size: 96}}
build: {benchmarks: [swap]}
"""
FAULTS = {"swap": 0.3, "wrong_value": 0.3, "drop_object": 0.3}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return built_run(tmp_path_factory.mktemp("t2i"), CONFIG)


def _procedural(name, faults=None):
    from autocomp.synth.procedural import ProceduralGenerator

    options = {"size": 128, **({"faults": dict(faults)} if faults else {})}
    return Model(name, Backend("procedural", ProceduralGenerator.check_options(options)))


def _key(image) -> str:
    return hashlib.sha256(np.ascontiguousarray(image).tobytes()).hexdigest()


class TruthAnswerer(BackendBase):
    """Answers every probe as the image's exact truth says (an oracle), or, with
    `hallucinate`, names the expected value of every attribute and relation whatever the
    image shows (a VLM describing an object that is not there)."""

    truths: dict = {}
    hallucinate = False

    def answer(self, image, questions, detections):
        known = self.truths[_key(image)]  # (question, expected) -> true of the image
        out = []
        for q in questions:  # the probes, or the validation cascade's questions
            true = known[(q.text, q.expected)]
            if q.reads == "presence":
                said = "yes" if true else "no"
            elif true or self.hallucinate:
                said = q.expected
            else:
                said = next(c for c in q.choices if c != q.expected)
            out.append({"answer": said, "evidence": {}})
        return out


@pytest.fixture
def oracle():
    registry.register("answerer", "truth-oracle", "test_t2i:TruthAnswerer")
    TruthAnswerer.truths, TruthAnswerer.hallucinate = {}, False
    yield Backend("truth-oracle")
    registry.unregister("answerer", "truth-oracle")


def _learn(run, records, out):
    """The oracle's answers: each image's true answers, by its pixels."""
    from autocomp.validators.stage import load_rgb

    by_prompt = {p.id: p for p in prompts(run)}
    for r in records:
        p = by_prompt[r["prompt"]]
        task = run.tasks[p.task]
        found = probes(p.graph, task)
        truth = true_answers(found, p.graph, task, r["truth"], r["faults"])
        TruthAnswerer.truths[_key(load_rgb(out / r["image"]))] = {
            (x.question.text, x.question.expected): t for x, t in zip(found, truth, strict=True)}


def test_probes_follow_the_scene_graph(run):
    found = {p.task: probes(p.graph, run.tasks[p.task]) for p in prompts(run)
             if p.n == 2}
    color = found["shape_color"]
    assert [p.kind for p in color] == ["object", "object", "attribute", "attribute"]
    assert [p.parents for p in color[2:]] == [("o0",), ("o1",)]
    assert color[0].question.text.startswith("Is there a ")
    assert color[0].question.choices == ("yes", "no") and color[2].aspect == "color"
    rel = found["shape_position"]
    assert [p.kind for p in rel] == ["object", "object", "relation"]
    assert rel[2].parents == ("o0", "o1") and rel[2].aspect == "spatial"
    assert [p.aspect for p in found["shape_count"]] == ["object", "object", "number",
                                                        "number"]


def test_each_fault_breaks_exactly_its_questions(run, tmp_path):
    """The truth of every probe under each injected fault alone: a dropped object takes
    its own questions and the bindings that presuppose it; a wrong value one attribute
    (one numeral: that object's count); a swap the two traded values, or the relations
    whose drawn boxes no longer hold."""
    todo = prompts(run, tracks=("minimal",))
    seen = set()
    for fault in ("drop_object", "wrong_value", "swap"):
        records = draw(_procedural(fault, {fault: 1.0}), run, todo, 2, tmp_path)
        for r in records:
            p = next(x for x in todo if x.id == r["prompt"])
            task = run.tasks[p.task]
            found = probes(p.graph, task)
            truth = dict(zip((x.id for x in found), true_answers(
                found, p.graph, task, r["truth"], r["faults"]), strict=True))
            broken = {k for k, v in truth.items() if v is False}
            if not r["faults"]:  # nothing to trade (two equal values, no room): all true
                assert broken == set()
                continue
            (f,) = r["faults"]
            seen.add((fault, p.task))
            if p.task == "shape_count":  # numerals: a count changes
                slots = {f["slot"]} if fault == "wrong_value" else (
                    set(f["slots"]) if fault == "swap" else None)
                if slots is not None:
                    assert broken == {f"a{s}.0" for s in slots}
                else:  # one instance of one kind left out: that kind's count
                    name = f["name"]
                    kinds = [i for i, o in enumerate(p.graph.objects) if o.name == name]
                    assert broken == {f"a{i}.0" for i in kinds}
                continue
            if fault == "drop_object":
                s = f["slot"]
                want = {f"o{s}", *(x.id for x in found if x.kind != "object" and s in x.slots)}
                assert broken == want
            elif fault == "wrong_value":
                assert broken == {f"a{f['slot']}.0"}
            elif "relation" in f:  # two objects traded places: the relations now false
                assert f"r{f['relation']}" in broken
                assert broken <= {x.id for x in found if x.kind == "relation"}
            else:
                a, b = f["slots"]
                values = [p.graph.objects[i].attributes[0] for i in (a, b)]
                assert broken == ({f"a{a}.0", f"a{b}.0"} if values[0] != values[1] else set())
    assert {("drop_object", "shape_color"), ("swap", "shape_position"),
            ("wrong_value", "shape_count"), ("swap", "shape_material")} <= seen


def test_faithful_images_score_one_and_faults_lower_exactly_their_questions(run, tmp_path,
                                                                             oracle):
    todo = prompts(run)
    clean, faulty = _procedural("clean"), _procedural("faulty", FAULTS)
    for model in (clean, faulty):
        _learn(run, draw(model, run, todo, 2, tmp_path), tmp_path)
    summary = compare(run.dir, [clean, faulty], tmp_path, k=2, answerer=oracle)
    scores = {m: [json.loads(ln) for ln in (tmp_path / m / "scores.jsonl").read_text()
                  .splitlines()] for m in ("clean", "faulty")}
    assert all(r["tifa"] == r["dsg"] == 1.0 and r["faithful"] for r in scores["clean"])
    for r in scores["faulty"]:
        assert all(p["right"] == p["truth"] for p in r["probes"])
        assert r["tifa"] == pytest.approx(r["true_share"])
        assert (r["tifa"] < 1.0) == (not r["faithful"]) == bool(
            set(r["faults"]) - {"grey_background"} and r["true_share"] < 1.0)
    got = summary["summary"]["faulty"]["truth"]
    assert got["verdicts"]["tifa"]["precision"]["value"] == 100.0
    assert got["verdicts"]["tifa"]["recall"]["value"] == 100.0
    assert got["unfaithful"] > 0
    assert got["correlation"]["tifa"]["spearman"] == pytest.approx(1.0)
    clean_scores = summary["summary"]["clean"]["scores"]
    assert clean_scores["tifa"]["mean"] == 100.0 and clean_scores["tifa"]["n"] == 2 * len(todo)


def test_dsg_gates_the_bindings_of_a_dropped_object(run, tmp_path, oracle):
    """A VLM that names a color for an object that is not there: TIFA counts it right,
    DSG does not (its object question was answered no), so DSG is the true share."""
    todo = [p for p in prompts(run, ("shape_color-n*",))]
    model = _procedural("dropped", {"drop_object": 1.0})
    _learn(run, draw(model, run, todo, 1, tmp_path), tmp_path)
    TruthAnswerer.hallucinate = True
    compare(run.dir, [model], tmp_path, patterns=("shape_color-n*",), answerer=oracle)
    rows = [json.loads(ln) for ln in (tmp_path / "dropped" / "scores.jsonl").read_text()
            .splitlines()]
    assert rows
    for r in rows:
        gone = next(p for p in r["probes"] if p["kind"] == "object" and not p["truth"])
        attr = next(p for p in r["probes"] if p["parents"] == [gone["id"]])
        assert gone["answer"] == "no" and attr["right"] and not attr["dsg"]
        assert r["dsg"] == pytest.approx(r["true_share"]) and r["dsg"] < r["tifa"]


@pytest.mark.slow
def test_t2i_command_on_the_embedded_generator(run, tmp_path):
    """The CLI: models from a file, K images per prompt with their seeds, tables per model,
    aspect and N, the metrics against the truth, the figure; a second call resumes."""
    gens = tmp_path / "gens.yaml"
    gens.write_text("images_per_prompt: 2\ngenerators:\n"
                    "  - {name: clean, generator: procedural, options: {size: 128}}\n"
                    "  - {name: faulty, generator: procedural, options: {size: 128, faults: "
                    "{swap: 0.3, wrong_value: 0.3, drop_object: 0.3}}}\n")
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["t2i", str(run.dir), "--generators", str(gens), "-o",
                                    str(out)])
    assert res.exit_code == 0, res.output
    for title in ("Table 16 layout", "per aspect and N", "Unfaithful images caught",
                  "true share of correct bindings", "agreeing with the exact truth"):
        assert title in res.output
    assert (out / "by-n.png").stat().st_size > 0 and (out / "tables.md").is_file()
    images = [json.loads(ln) for ln in (out / "faulty" / "images.jsonl").read_text()
              .splitlines()]
    n_prompts = len(prompts(run))
    assert len(images) == 2 * n_prompts
    by_id = {r["id"]: r for r in images}
    for p in prompts(run)[:3]:
        assert by_id[f"{p.id}-0"]["seed"] == p.seed == image_seed(p.seed, 0)
        assert by_id[f"{p.id}-1"]["seed"] == image_seed(p.seed, 1) != p.seed
    summary = json.loads((out / "summary.json").read_text())["summary"]
    assert summary["faulty"]["images"] == 2 * n_prompts
    assert {k.split("|")[0] for k in summary["faulty"]["by_aspect"]} == {
        "object", "color", "spatial", "number", "material"}
    again = CliRunner().invoke(main, ["t2i", str(run.dir), "--generators", str(gens), "-o",
                                      str(out)])
    assert again.exit_code == 0
    assert len((out / "faulty" / "images.jsonl").read_text().splitlines()) == len(images)
    assert len((out / "faulty" / "scores.jsonl").read_text().splitlines()) == len(images)


def test_a_folder_of_someone_elses_images(run, tmp_path):
    """Images named by prompt id are scored as they are; the missing ones are counted."""
    import shutil

    todo = prompts(run, ("shape_color-n2",), ("minimal",))
    made = draw(_procedural("maker"), run, todo, 1, tmp_path / "made")
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    for r in made[1:]:  # the first prompt's image is missing
        shutil.copy(tmp_path / "made" / r["image"], theirs / f"{r['prompt']}.png")
    summary = compare(run.dir, [model_of(f"folder:{theirs}")], tmp_path / "out",
                      patterns=("shape_color-n2",), tracks=("minimal",))
    got = summary["summary"]["theirs"]
    assert got["images"] == len(todo) - 1 and "truth" not in got
    from autocomp.t2i.summary import tables

    notes = tables(summary["summary"])[0].notes
    assert f"theirs: 1 of {len(todo)} images missing" in " ".join(notes)
    assert got["scores"]["tifa"]["mean"] > 50


def test_a_hostile_folder_is_read_inside_itself_and_never_blocks(run, tmp_path, caplog):
    """Named like images (issue 53): a FIFO (a read would block forever), a text file, a
    link to a file outside the folder and a directory are each left out and counted; the
    real images are scored; nothing outside the folder is opened."""
    import os
    import shutil

    todo = prompts(run, ("shape_color-n2",), ("minimal",))
    made = draw(_procedural("maker"), run, todo, 1, tmp_path / "made")
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    assert len(made) == 4
    shutil.copy(tmp_path / "made" / made[3]["image"], theirs / f"{made[3]['prompt']}.png")
    ids = [r["prompt"] for r in made[:3]]
    os.mkfifo(theirs / f"{ids[0]}-0.png")
    (theirs / f"{ids[0]}.png").mkdir()
    (theirs / f"{ids[1]}-0.png").write_text("not an image")
    outside = tmp_path / "secret.png"
    shutil.copy(tmp_path / "made" / made[0]["image"], outside)
    (theirs / f"{ids[2]}-0.png").symlink_to(outside)
    with caplog.at_level("INFO", logger="autocomp"):
        summary = compare(run.dir, [model_of(f"folder:{theirs}")], tmp_path / "out",
                          patterns=("shape_color-n2",), tracks=("minimal",))
    assert summary["summary"]["theirs"]["images"] == 1
    said = caplog.text
    for count, why in ((2, "not a regular file (e.g."), (1, "not a readable image (e.g."),
                       (1, "a link out of the folder (e.g.")):
        assert f"{count} file(s) in {theirs} left out: {why}" in said, why
    written = "".join(f.read_text() for f in (tmp_path / "out").rglob("*.jsonl"))
    assert str(outside) not in written and str(theirs / f"{made[3]['prompt']}.png") in written


def test_models_and_files_refuse_bad_input(tmp_path):
    with pytest.raises(AutocompError, match="is not procedural"):
        model_of("dall-e")
    assert model_of("diffusers:stabilityai/stable-diffusion-3.5-large").generator.options == {
        "model": "stabilityai/stable-diffusion-3.5-large"}
    bad = tmp_path / "g.yaml"
    bad.write_text("generators:\n  - {name: a, generator: procedural, options: {size: 9}}\n")
    with pytest.raises(AutocompError) as err:
        read_models(bad)
    assert "g.yaml" in str(err.value) and "generators[0].options.size" in str(err.value)
    bad.write_text("generators:\n  - {name: a}\n  - {name: a}\n")
    with pytest.raises(AutocompError, match="share a name"):
        read_models(bad)
    bad.write_text("images_per_prompt: 0\ngenerators: [{name: a}]\n")
    with pytest.raises(AutocompError, match="images_per_prompt"):
        read_models(bad)


@pytest.mark.parametrize("body, field, says", [
    ('generators: [{name: "../esc"}]', "generators[0].name", "no '/'"),
    ('generators: [{name: "a\\nb"}]', "generators[0].name", "control characters"),
    ("generators: [{name: a}]\nvqascore: 5", "vqascore", "expected a VLM"),
    ("generators: [{name: a}]\nclipscore: [1]", "clipscore", "expected a dual encoder"),
    ("generators: [{name: a}]\nvqascore: open_clip:x", "vqascore", "'open_clip:x' is not a"),
    ("generators: [{name: a}]\nclipscore: vlm:x", "clipscore", "'vlm:x' is not a dual"),
    ("generators: [{name: a}]\nimages_per_prompt: 100000000000000000000",
     "images_per_prompt", "in [1, 100]"),
    ("- a", None, "expected a mapping with the fields images_per_prompt"),
])
def test_a_hostile_generators_file_is_one_line(tmp_path, body, field, says):
    """Issue 53's attack on `t2i --generators`: before, a name '../esc' or with a newline
    was taken, vqascore: 5 or open_clip:x died in a traceback after every image was drawn,
    and images_per_prompt 10^20 drew nothing for minutes."""
    bad = tmp_path / "g.yaml"
    bad.write_text(body + "\n")
    with pytest.raises(AutocompError) as err:
        read_models(bad)
    assert str(err.value).startswith(f"{bad}: " + (f"field {field}: " if field else ""))
    assert says in str(err.value) and "\n" not in str(err.value)


def test_t2i_checks_its_judges_before_drawing(run, tmp_path):
    got = CliRunner().invoke(main, ["t2i", str(run.dir), "-g", "procedural", "--vqascore",
                                    "open_clip:x", "-o", str(tmp_path / "o")])
    assert got.exit_code == 1 and "field --vqascore: 'open_clip:x' is not a VLM" in got.output
    assert not (tmp_path / "o" / "procedural").exists()  # nothing drawn


# Soft-TIFA's scripted answerer: the probability it gives each expected answer, by what the
# question asks (an object's presence or a binding) and whether the answer is true
SOFT = {("presence", True): 0.9, ("presence", False): 0.0,
        ("binding", True): 0.75, ("binding", False): 0.05}


def _asks(kind: str) -> str:
    return "presence" if kind in ("object", "presence") else "binding"


class SoftTruthAnswerer(TruthAnswerer):
    """The oracle's answers, with SOFT's probabilities of the expected answers."""

    def expected_probabilities(self, jobs):
        return [[SOFT[(_asks(q.reads), self.truths[_key(image)][(q.text, q.expected)])]
                 for q in questions] for image, questions, _ in jobs]


@pytest.fixture
def soft(oracle):
    registry.register("answerer", "soft-oracle", "test_t2i:SoftTruthAnswerer")
    yield Backend("soft-oracle")
    registry.unregister("answerer", "soft-oracle")


def test_soft_tifa_averages_the_answerers_probabilities_per_image(run, tmp_path, soft):
    """GenEval 2's Soft-TIFA from an answerer whose probabilities are known: per probe the
    probability of the expected answer; per image their arithmetic and geometric means
    (0 where one is 0); per model the mean over images with an interval over prompts;
    against the truth, the probability given to what is true per aspect and N."""
    from autocomp.t2i.summary import tables

    todo = prompts(run)
    model = _procedural("faulty", FAULTS)
    _learn(run, draw(model, run, todo, 2, tmp_path), tmp_path)
    summary = compare(run.dir, [model], tmp_path, k=2, answerer=soft)["summary"]["faulty"]
    rows = [json.loads(ln) for ln in (tmp_path / "faulty" / "scores.jsonl").read_text()
            .splitlines()]
    for r in rows:
        want = [SOFT[(_asks(p["kind"]), p["truth"])] for p in r["probes"]]
        assert [p["p"] for p in r["probes"]] == want
        assert r["soft_tifa_am"] == pytest.approx(np.mean(want))
        assert r["soft_tifa_gm"] == pytest.approx(np.prod(want) ** (1 / len(want)))
    assert any(r["soft_tifa_gm"] == 0.0 < r["soft_tifa_am"] for r in rows)  # a dropped object
    assert any(0.0 < r["soft_tifa_gm"] < r["soft_tifa_am"] < 1.0 for r in rows)
    for key in ("soft_tifa_am", "soft_tifa_gm"):
        got = summary["scores"][key]
        assert got["mean"] == pytest.approx(100 * np.mean([r[key] for r in rows]))
        assert (got["n"], got["prompts"]) == (len(rows), len(todo))
        assert got["interval"][0] < got["mean"] < got["interval"][1]
        assert summary["truth"]["correlation"][key]["n"] == len(rows)
    given: dict = {}
    for r in rows:
        for p in r["probes"]:
            given.setdefault(f"{p['aspect']}|{r['n']}", []).append(
                p["p"] if p["truth"] else 1.0 - p["p"])
    soft_truth = summary["truth"]["soft_agreement"]
    assert set(soft_truth) == set(given)
    for key, values in given.items():
        assert soft_truth[key]["mean"] == pytest.approx(100 * np.mean(values))
    printed = {t.title.split(";")[0]: t for t in tables({"faulty": summary})}
    assert {"Soft-TIFA AM (%)", "Soft-TIFA GM (%)"} <= set(
        printed["Table 16 layout: text-to-image faithfulness per model"].header)
    assert any(t.startswith("Soft answers against the exact truth") for t in printed)


@pytest.mark.parametrize("gives, says", [
    ([[0.5, 1.5]], "gave 1.5, not a probability in [0, 1]"),
    ([[0.5, float("nan")]], "gave nan, not a probability in [0, 1]"),
    ([[0.5]], "gave 1 probabilities for 2 questions"),
    ([], "gave 0 lists for 1 images"),
])
def test_an_answerers_soft_answers_are_checked_on_every_batch(gives, says):
    from autocomp.t2i.score import soft_answers

    class Scripted:
        def expected_probabilities(self, jobs):
            return gives

    with pytest.raises(AutocompError) as err:
        soft_answers(Scripted(), [(None, ["q1", "q2"], [])], "scripted")
    assert str(err.value) == (f"answerer scripted: expected_probabilities() {says}: it "
                              "gives one probability per question of each image")
    assert soft_answers(object(), [(None, ["q1", "q2"], [])], "pixels") == [[None, None]]


@pytest.mark.slow  # a tiny VLM loaded
def test_a_vlm_answerers_soft_answers_are_its_reply_probabilities(run, tmp_path):
    """Real loading of a tiny VLM as the answerer: each probe's probability is the
    model's probability of replying with the expected answer, in either spelling (each
    row scored alone by the likelihood scorers' code), and Table 16 prints Soft-TIFA."""
    import math

    from tiny_models import tiny_gemma_vlm

    from autocomp.models.likelihood import continuation_logprobs
    from autocomp.validators.stage import load_rgb
    from autocomp.validators.vqa import TransformersAnswerer, _pil

    vlm = tiny_gemma_vlm(tmp_path / "vlm")
    answerer = Backend("transformers", {"model": str(vlm), "max_new_tokens": 2})
    summary = compare(run.dir, [_procedural("clean")], tmp_path / "out",
                      patterns=("shape_color-n2",), tracks=("minimal",), per_group=2,
                      answerer=answerer)
    rows = [json.loads(ln) for ln in (tmp_path / "out" / "clean" / "scores.jsonl")
            .read_text().splitlines()]
    by_prompt = {p.id: p for p in prompts(run)}
    direct = TransformersAnswerer(str(vlm), device="cpu")
    proc, model = direct._load()
    r = rows[0]
    p = by_prompt[r["prompt"]]
    pil = _pil(load_rgb(tmp_path / "out" / r["image"]))
    for probe, found in zip(r["probes"], probes(p.graph, run.tasks[p.task]), strict=True):
        q = found.question
        spelled = {q.expected, q.expected.capitalize()}
        want = sum(math.exp(sum(continuation_logprobs(proc, model, [(pil, q.text, s)])[0]))
                   for s in spelled)
        assert len(spelled) == 2 and probe["p"] == pytest.approx(want, rel=1e-4, abs=1e-9)
    got = summary["summary"]["clean"]["scores"]
    assert got["soft_tifa_am"]["n"] == got["soft_tifa_gm"]["n"] == len(rows)
    assert 0 <= got["soft_tifa_gm"]["mean"] <= got["soft_tifa_am"]["mean"] <= 100


@pytest.mark.slow  # a tiny VLM and a tiny CLIP loaded
def test_vqascore_and_clipscore_of_the_whole_prompt(run, tmp_path):
    """Real loading of a tiny VLM and a tiny CLIP: each image's VQAScore is the likelihood
    scorer's P(yes) of its prompt, its CLIPScore 100 x max(cos, 0)."""
    from PIL import Image
    from tiny_models import tiny_gemma_vlm, tiny_hf_clip

    from autocomp.eval.scorers import load_scorer

    vlm, clip = tiny_gemma_vlm(tmp_path / "vlm"), tiny_hf_clip(tmp_path / "clip")
    summary = compare(run.dir, [_procedural("clean")], tmp_path / "out",
                      patterns=("shape_color-n2",), tracks=("minimal",),
                      vqascore=f"vqascore:{vlm}", clipscore=f"hf:{clip}")
    rows = [json.loads(ln) for ln in (tmp_path / "out" / "clean" / "scores.jsonl")
            .read_text().splitlines()]
    by_prompt = {p.id: p for p in prompts(run)}
    vqa, enc = load_scorer(f"vqascore:{vlm}"), load_scorer(f"hf:{clip}")
    for r in rows[:2]:
        image = Image.open(tmp_path / "out" / r["image"]).convert("RGB")
        text = by_prompt[r["prompt"]].text
        assert r["vqascore"] == pytest.approx(vqa.score_pairs([(image, [text])])[0][0],
                                              abs=1e-5)
        cos = float(enc.encode_images([image])[0] @ enc.encode_texts([text])[0])
        assert r["clipscore"] == pytest.approx(100 * max(cos, 0.0), abs=1e-3)
    got = summary["summary"]["clean"]["scores"]
    assert got["vqascore"]["n"] == got["clipscore"]["n"] == len(rows)
    assert got["vqascore"]["mean"] == pytest.approx(100 * np.mean([r["vqascore"] for r in rows]))
    assert got["clipscore"]["mean"] == pytest.approx(np.mean([r["clipscore"] for r in rows]))
    lo, hi = got["clipscore"]["interval"]
    assert lo <= got["clipscore"]["mean"] <= hi


def test_the_dry_run_plan_prices_a_t2i_image():
    """GPU seconds per t2i image: the generator's image, detection with masks, ~2N + 1
    questions, their soft answers and one VQAScore prompt, each as costs.py prices it; none
    for the embedded backends."""
    from autocomp.cli.run import config_path
    from autocomp.config import load_config
    from autocomp.planning import costs
    from autocomp.planning.plan import plan

    p = plan(load_config(config_path("autocomp-cp")), gpus=("H100",))
    t2i = p["t2i"]
    parts = t2i["parts"]
    assert set(parts) == {"image", "detect", "questions", "soft", "vqascore"}
    assert parts["soft"]["H100"] == [round(v, 3) for v in costs.seconds(
        "soft", {"model": "google/gemma-3-12b-it"}, "H100", t2i["questions_per_image"])]
    assert parts["vqascore"]["H100"] == [round(v, 3) for v in costs.seconds(
        "vqascore", {"model": "google/gemma-3-12b-it"}, "H100")]
    total = t2i["seconds_per_image"]["H100"]
    assert total == [round(sum(x["H100"][i] for x in parts.values()), 2) for i in (0, 1)]
    assert parts["image"]["H100"][0] > 0.5 * total[0]  # the image is most of it
    out = CliRunner().invoke(main, ["run", "autocomp-cp", "--dry-run", "--gpu", "H100"])
    line = next(ln for ln in out.output.splitlines() if ln.startswith("autocomp t2i"))
    assert f"H100 {total[0]:.1f}-{total[1]:.1f} s" in line
    demo = plan(load_config(config_path("demo")), gpus=("H100",))
    assert demo["t2i"]["seconds_per_image"]["H100"] == [0.0, 0.0]


@pytest.mark.slow
def test_the_report_shows_t2i_tables_and_figure(run, tmp_path):
    out = tmp_path / "t2i"
    compare(run.dir, [_procedural("clean"), _procedural("faulty", FAULTS)], out,
            patterns=("shape_color-n2",))
    ev = tmp_path / "results"
    res = CliRunner().invoke(main, ["eval", str(run.dir), "--model", "reference:oracle",
                                    "--benchmark", "shape_color-n2/*", "-o", str(ev)])
    assert res.exit_code == 0, res.output
    page = tmp_path / "report.html"
    res = CliRunner().invoke(main, ["report", str(ev), "--t2i", str(out), "--html", str(page)])
    assert res.exit_code == 0, res.output
    assert "Table 16 layout" in res.output and "Unfaithful images caught" in res.output
    html = page.read_text()
    assert "Table 16 layout" in html and "by-n" in html
    res = CliRunner().invoke(main, ["report", str(ev), "--t2i", str(tmp_path)])
    assert res.exit_code != 0 and "summary.json" in res.output


def test_an_image_the_generator_refuses_is_left_out_and_counted(run, tmp_path, logged,
                                                                 monkeypatch):
    """A seed with no layout fails that image alone (the batch is drawn one by one); the
    others are drawn and scored, and a later call tries it again."""
    from autocomp.synth.procedural import ProceduralGenerator

    todo = prompts(run, ("shape_color-n2",), ("minimal",))
    bad = f"{todo[1].concept}"
    real = ProceduralGenerator.generate_one

    def refuse(self, req):
        if req.id == bad and req.seed != todo[1].seed:  # image k = 1 of the second prompt
            raise AutocompError(f"task shape_color, concept {bad}: no layout found")
        return real(self, req)

    monkeypatch.setattr(ProceduralGenerator, "generate_one", refuse)
    records = draw(_procedural("p"), run, todo, 2, tmp_path, batch_size=4)
    assert len(records) == 2 * len(todo) - 1
    assert f"{todo[1].id}-1" not in {r["id"] for r in records}
    assert any("1 of" in line and "could not be drawn" in line for line in logged())
    monkeypatch.setattr(ProceduralGenerator, "generate_one", real)
    assert len(draw(_procedural("p"), run, todo, 2, tmp_path)) == 2 * len(todo)


def test_precision_and_recall_intervals_resample_prompts():
    """Issue 52: a prompt's K images are one cluster; with K = 2 images alike per prompt
    the interval is wider than Clopper-Pearson over the images, and equals it at K = 1."""
    from autocomp.eval.intervals import exact
    from autocomp.t2i.summary import truth_agreement

    def records(k):
        out = []
        for i in range(30):
            faithful = i % 3 != 0
            said = 0.5 if (i % 3 == 0 or i % 5 == 0) else 1.0  # catches all, some false
            out += [{"prompt": f"p{i}", "n": 2, "true_share": 1.0 if faithful else 0.5,
                     "faithful": faithful, "tifa": said, "dsg": said, "geneval_all": said,
                     "probes": [], "has_truth": True} for _ in range(k)]
        return out

    one = truth_agreement(records(1))["verdicts"]["tifa"]["precision"]
    two = truth_agreement(records(2))["verdicts"]["tifa"]["precision"]
    assert one["value"] == two["value"] and two["n"] == 2 * one["n"]
    assert one["interval"] == list(exact(one["k"], one["n"]))
    width = two["interval"][1] - two["interval"][0]
    assert width > 1.2 * (lambda lo, hi: hi - lo)(*exact(two["k"], two["n"]))
    assert two["prompts"] == one["n"]


def test_a_killed_t2i_resumes_with_every_image_and_score_once(run, tmp_path):
    """Issue 53's attack: kill -9 mid-write leaves a torn last line in images.jsonl and
    scores.jsonl and a half-written PNG; before, the resume died on the torn line ("not a
    JSON record"). Now the torn lines are cut, the image is drawn and scored again, the
    orphan removed, and the summary is the uninterrupted run's."""
    import os

    model = _procedural("clean")
    opts = {"patterns": ("shape_color-n2",), "tracks": ("minimal",), "per_group": 6}
    whole = compare(run.dir, [model], tmp_path / "whole", **opts)
    out = tmp_path / "killed"
    compare(run.dir, [model], out, **opts)
    folder = out / "clean"
    for name, keep in (("images.jsonl", 3), ("scores.jsonl", 2)):
        lines = (folder / name).read_text().splitlines(keepends=True)
        torn = lines[keep][: len(lines[keep]) // 2]  # the kill came mid-line
        (folder / name).write_text("".join(lines[:keep]) + torn)
    gone = dead_pid()  # no such process: its temp file is a killed writer's
    host = os.uname().nodename
    orphan = folder / "images" / f".x-0.png.@{host}~{gone}.autocomp.tmp"
    orphan.write_bytes(b"\x89PNG half")
    again = compare(run.dir, [model], out, **opts)
    for name in ("images.jsonl", "scores.jsonl"):
        ids = [json.loads(ln)["id"] for ln in (folder / name).read_text().splitlines()]
        assert len(ids) == len(set(ids)) == whole["summary"]["clean"]["images"], name
    assert not orphan.exists()
    assert again["summary"] == whole["summary"]



from autocomp.t2i.metrics import Metric  # noqa: E402 (beside the plugin metric below)


class Loud(Metric):  # a plugin metric scoring 2 where at most 1 is a score
    column = "Loud (%)"

    def score(self, batch, judge):
        return [2.0] * len(batch)


@pytest.mark.slow
def test_every_metric_keeps_the_metric_contract_and_a_plugins_is_a_column(run, tmp_path,
                                                                          monkeypatch,
                                                                          registered):
    """Every registered metric (docs/extending.md's `counting` among them) keeps the
    metric contract on the run's own images and is a column of Table 16; a plugin metric
    breaking it is refused in one line."""
    from conftest import docs_examples

    from autocomp.contracts import metric_problems
    from autocomp.core.registry import names
    from autocomp.t2i.metrics import metrics

    docs_examples(tmp_path, monkeypatch)
    registered("metric", "counting", "counting:Counting")
    res = CliRunner().invoke(main, ["t2i", str(run.dir), "-g", "run", "--per-group", "2",
                                    "-o", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    header = next(ln for ln in res.output.splitlines() if ln.startswith("| Model | Images"))
    assert header.endswith("| Survival (%) | Counting (%) |")
    scores = [json.loads(ln) for ln in (tmp_path / "out" / "run" / "scores.jsonl")
              .read_text().splitlines()]
    assert list(metrics()) == list(names("metric"))
    for key, metric in metrics().items():
        assert metric_problems(metric, [r[key] for r in scores], len(scores)) == [], key
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())["summary"]
    assert summary["run"]["scores"]["counting"]["mean"] == 100.0  # the run's kept images
    assert "counting" in summary["run"]["truth"]["correlation"]
    registered("metric", "loud", "test_t2i:Loud")
    res = CliRunner().invoke(main, ["t2i", str(run.dir), "-g", "run", "--per-group", "1",
                                    "--tasks", "shape_color-n2", "-o", str(tmp_path / "loud")])
    assert res.exit_code != 0
    assert res.output.strip().splitlines()[-1] == (
        "Error: metric 'loud' (test_t2i:Loud) breaks the metric contract (autocomp/"
        "contracts.py): score() gave 2.0: a value is a number in [0, 1.0] or None")


def test_the_t2i_figure_draws_whole_numbers_of_n_on_one_scale(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from unittest import mock

    from autocomp.t2i import figure

    got = {"mean": 80.0, "interval": [70.0, 90.0]}
    clip = {"mean": 30.0, "interval": [25.0, 35.0]}
    summary = {"a": {"by_n": {"2": {"tifa": got, "clipscore": clip},
                              "3": {"tifa": got, "clipscore": clip}}}}
    seen = {}

    def keep(fig, stem):
        seen["axes"] = fig.axes
        return [stem]
    with mock.patch.object(figure, "save", keep):
        figure.by_n_figure(summary, tmp_path / "by-n")
    for ax in seen["axes"]:
        assert list(ax.get_xticks()) == [2, 3] and ax.get_ylim() == (0.0, 101.0)
    assert figure.by_n_figure({"a": {"by_n": {}}}, tmp_path / "none") == []

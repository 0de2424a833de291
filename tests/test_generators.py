"""Several generators in one run (generate.compare): every concept drawn by each from the
same seed and validated by the same cascade, and benchmarks of the same items (ids,
captions, negatives) on each generator's images; the run's own tables, funnel and board
hold its own generator's only, saying what they leave out; the dry-run costs each."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from autocomp.cli import main
from autocomp.config import parse_config
from autocomp.core.errors import AutocompError

LARGE = {"name": "large", "generator": "procedural", "options": {"size": 96}}
OUTDOOR = {"name": "outdoor", "generator": "procedural",
           "options": {"size": 64, "look": "outdoor"}}
NOBLUE = {"name": "noblue", "generator": "procedural",  # cannot draw blue: grey instead
          "options": {"size": 64, "recolor": {"blue": [128, 128, 128]}}}
CONFIG = {"name": "two", "concepts": [{"task": "shape_color", "n": [2], "count": 12}],
          "generate": {"options": {"size": 64}, "compare": [LARGE, OUTDOOR, NOBLUE]},
          "build": {"benchmarks": ["swap", "confusion"]}}


@pytest.fixture(scope="module")
def two(tmp_path_factory):
    """A run drawn by the procedural generator and by one with largeer outlines."""
    import yaml

    from autocomp.run import Run

    folder = tmp_path_factory.mktemp("two")
    (folder / "two.yaml").write_text(yaml.safe_dump(CONFIG))
    got = CliRunner().invoke(main, ["run", str(folder / "two.yaml"), "--output",
                                    str(folder / "run"), "--no-progress"])
    assert got.exit_code == 0, got.output
    return Run.open(folder / "run")


@pytest.mark.parametrize("compare, field, needle", [
    ({"generator": "procedural"}, "generate.compare[0].name", "expected a non-empty string"),
    ([LARGE, LARGE], "generate.compare[1].name", "named twice"),
    ([{**LARGE, "name": "a@b"}], "generate.compare[0].name", "plain file name"),
    ([{**LARGE, "generator": "paint"}], "generate.compare[0].generator", "unknown generator"),
    ([{**LARGE, "options": {"sizes": 3}}], "generate.compare[0].options.sizes", "unknown"),
    ([{**LARGE, "seed": 1}], "generate.compare[0].seed", "unknown field"),
])
def test_a_bad_compared_generator_is_one_line_naming_its_field(compare, field, needle):
    compare = compare if isinstance(compare, list) else [compare]
    with pytest.raises(AutocompError, match=needle) as got:
        parse_config({**CONFIG, "generate": {"compare": compare}})
    assert got.value.field == field and "\n" not in str(got.value)


def test_compared_generators_round_trip_through_the_runs_config(two):
    from autocomp.run import Run

    again = Run.open(two.dir).config.generate
    assert [(label, g.name, g.options) for label, g in again.generators()] == [
        (None, "procedural", {"size": 64}), ("large", "procedural", {"size": 96}),
        ("outdoor", "procedural", {"size": 64, "look": "outdoor"}),
        ("noblue", "procedural", {"size": 64, "recolor": {"blue": [128, 128, 128]}})]


def test_each_generator_draws_every_concept_from_one_seed_validated_alike(two):
    images = list(two.records("images"))
    own = {r["id"]: r for r in images if "generator" not in r}
    large = {r["id"]: r for r in images if r.get("generator") == "large"}
    assert len(own) == len(large) == 2 * 12
    assert set(large) == {f"{i}@large" for i in own}
    for i, r in own.items():
        t = large[f"{i}@large"]
        assert t["seed"] == r["seed"] and t["concept"] == r["concept"]
        assert t["image"] != r["image"]
        assert (two.dir / t["image"]).read_bytes() != (two.dir / r["image"]).read_bytes()
    checked = {v["id"]: v for v in two.records("validation")}
    assert len(checked) == 4 * len(own)
    assert {v.get("generator") for v in checked.values()} == {None, "large", "outdoor", "noblue"}
    status = CliRunner().invoke(main, ["status", str(two.dir)])
    assert status.exit_code == 0, status.output
    agreement = json.loads(two.paths.stats("agreement").read_text())
    assert agreement["objects"]["total"] == 24, agreement  # its own 24 images, not 96


def test_benchmarks_hold_the_same_items_on_each_generators_images(two):
    from autocomp.formats.runs import find_benchmarks

    benches = {b.name: b for b in find_benchmarks(two.dir)}
    own = [b for b in benches.values() if b.generator is None]
    assert own and all(f"{b.name}@large" in benches for b in own)
    for b in own:
        other = benches[f"{b.name}@large"]
        assert (other.task, other.n, other.track, other.kind, other.generator) == (
            b.task, b.n, b.track, b.kind, "large")
        mine = {i["id"]: i for i in b.items()}
        theirs = {i["id"]: i for i in other.items()}
        both = mine.keys() & theirs.keys()
        assert both, b.name
        for i in both:
            a, t = mine[i], theirs[i]
            assert (a["positive"], a["negatives"], a["concept"]) == (
                t["positive"], t["negatives"], t["concept"])
            assert a["image"] != t["image"] and t["image"].endswith("@large.png")


def test_results_name_their_generator_and_the_report_keeps_them_apart(two, tmp_path):
    out = tmp_path / "res"
    got = CliRunner().invoke(main, ["eval", str(two.dir), "--model", "reference:oracle",
                                    "--model", "blind:unigram", "--output", str(out)])
    assert got.exit_code == 0, got.output
    results = [json.loads(p.read_text()) for p in out.rglob("*.json")
               if p.name != "models.json" and "benchmark" in p.read_text()[:200]]
    compared = [r for r in results if r.get("generator")]
    assert compared and {r["generator"] for r in compared} == {"large", "noblue", "outdoor"}
    assert all(r["benchmark"].endswith(f"@{r['generator']}") for r in compared)
    check = CliRunner().invoke(main, ["results", "check", str(out)])
    assert check.exit_code == 0, check.output  # the schema knows the field
    report = CliRunner().invoke(main, ["report", str(out), "--no-figure"])
    assert report.exit_code == 0, report.output
    assert (f"{len(compared)} results on the images of compared generators (large, noblue, "
            "outdoor; generate.compare): in the Generators tables only; the others hold the "
            "run's own generator's") in report.output
    import shutil

    alone = tmp_path / "own"  # the same results without the compared generator's
    shutil.copytree(out, alone)
    for p in alone.rglob("*.json"):
        if json.loads(p.read_text()).get("generator"):
            p.unlink()
            p.with_suffix(".predictions.jsonl").unlink()
    tables = [CliRunner().invoke(main, ["report", str(folder), "--no-figure", "--json"])
              for folder in (out, alone)]
    assert all(t.exit_code == 0 for t in tables)
    both, mine = (json.loads(t.output)["tables"] for t in tables)
    made = [t for t in both if t["title"].startswith("Generators:")]
    assert [t for t in both if t not in made] == mine  # not one cell moved by them
    survival, kept, common, paired = made
    assert survival["header"][2:] == ["own (procedural)", "large (procedural)",
                                      "noblue (procedural)", "outdoor (procedural)"]
    for row in survival["rows"]:  # kept / drawn: no blue concept kept on noblue
        own, large, noblue, outdoor = (int(c.split("(")[-1].split("/")[0])
                                       for c in row[2:])
        assert outdoor == own and noblue < own
    assert {r[2] for r in paired["rows"]} == {"large", "outdoor", "noblue"}
    assert len(paired["rows"]) == len(compared)
    for row in paired["rows"]:  # the oracle and a text-only scorer cannot see the images
        assert row[6].startswith("0.0 [") and row[4] == row[5], row


def test_the_dry_run_costs_every_generator(two):
    from autocomp.planning.plan import plan

    got = plan(parse_config(CONFIG))
    stages = {r["stage"]: r for r in got["stages"]}
    assert {"images", "images @large"} <= stages.keys()
    single = plan(parse_config({**CONFIG, "generate": {"options": {"size": 64}}}))
    assert got["disk"]["images"] == 4 * single["disk"]["images"]
    flux = {"name": "flux", "generator": "diffusers",  # a distilled model: one pass a step
            "options": {"model": "black-forest-labs/FLUX.1-dev", "guidance": 3.5}}
    both = plan(parse_config({**CONFIG, "generate": {
        "generator": "diffusers", "options": {"model": "stabilityai/stable-diffusion-3.5-large"},
        "compare": [flux]}}), gpus=("H100",))
    assert {"images", "images @flux"} <= {r["stage"] for r in both["stages"]}
    from autocomp.planning.costs import seconds

    sd35 = seconds("image", {"model": "stabilityai/stable-diffusion-3.5-large"}, "H100")
    fl = seconds("image", flux["options"], "H100")
    # FLUX.1 at 1024 px, 28 steps, one pass: 2.082 PFLOP; SD3.5-large, two passes: 1.744
    assert fl[0] / sd35[0] == pytest.approx(2.0821 / 1.7440, rel=0.001)
    memory = {r["stage"]: r for r in both["memory"]["H100"]}
    assert memory["images @flux"]["weights"] == pytest.approx(16.87e9 * 2 / 2 ** 30, rel=0.01)


@pytest.mark.parametrize("options, field, needle", [
    ({"look": "neon"}, "generate.options.look", "expected one of flat, outdoor"),
    ({"recolor": {"red": [300, 0, 0]}}, "generate.options.recolor.red", "three integers"),
])
def test_a_bad_look_is_one_line_naming_its_field(options, field, needle):
    with pytest.raises(AutocompError, match=needle) as got:
        parse_config({**CONFIG, "generate": {"options": options}})
    assert got.value.field == field


def test_a_generator_that_cannot_draw_blue_loses_only_blue_and_the_truth_knows(two):
    """The noblue look draws blue as grey: the concepts with a blue object fail the
    attributes check on its images only, each failure a recorded recolor fault (so the
    validators still agree with the truth)."""
    images = {r["id"]: r for r in two.records("images")}
    checked = {v["id"]: v for v in two.records("validation")}
    graphs = {c["id"]: c["graph"] for c in two.records("concepts")}

    def blue(concept: str) -> bool:
        return any("blue" in o["attributes"] for o in graphs[concept]["objects"])

    def kept(label) -> set[str]:
        return {v["concept"] for v in checked.values()
                if v.get("generator") == label and v["passed"] and v["track"] == "minimal"}

    blues = {c for c in graphs if blue(c)}
    assert kept(None) & blues and not kept("noblue") & blues  # blue: gone there only
    assert kept("noblue") == kept(None) - blues
    assert kept("outdoor") == kept(None)  # another backdrop: the same concepts readable
    for i, r in images.items():
        recolor = [f for f in r["faults"] if f["kind"] == "recolor"]
        assert bool(recolor) == (r.get("generator") == "noblue" and blue(r["concept"]))
        assert all(f["value"] == "blue" and f["reads_as"] != "blue" for f in recolor)
        if recolor:
            assert r["truth"]["expect"]["attributes"] is False
            assert checked[i]["failed_at"] == "attributes"


@pytest.mark.slow
def test_diffusers_pipelines_are_compared_beside_the_embedded_generator(tmp_path,
                                                                        tiny_backends):
    """Tiny random SD3 and FLUX pipelines (the real loading code: diffusers picks each
    pipeline class from its folder) draw every concept beside the procedural generator,
    from the same seeds; their images are validated by the same cascade and recorded with
    their generator."""
    import yaml
    from PIL import Image
    from tiny_models import tiny_flux

    from autocomp.run import Run

    models = {"sd3": str(tiny_backends["sd3"]), "flux": str(tiny_flux(tmp_path / "flux"))}
    config = {**CONFIG, "concepts": [{"task": "shape_color", "n": [2], "count": 2}],
              "generate": {"options": {"size": 64}, "compare": [
                  {"name": name, "generator": "diffusers",
                   "options": {"model": model, "size": 32, "steps": 2, "device": "cpu"}}
                  for name, model in models.items()]}}
    (tmp_path / "sd3.yaml").write_text(yaml.safe_dump(config))
    got = CliRunner().invoke(main, ["run", str(tmp_path / "sd3.yaml"), "--output",
                                    str(tmp_path / "run"), "--no-progress"])
    assert got.exit_code == 0, got.output
    run = Run.open(tmp_path / "run")
    images = list(run.records("images"))
    own = {r["id"]: r for r in images if not r.get("generator")}
    assert len(own) == 4
    for name, model in models.items():
        drawn = [r for r in images if r.get("generator") == name]
        assert len(drawn) == 4
        for r in drawn:
            assert r["seed"] == own[r["id"].split("@")[0]]["seed"]
            assert Image.open(run.dir / r["image"]).size == (32, 32)
            assert r["generation"]["model"] == model
        assert sum(v.get("generator") == name for v in run.records("validation")) == 4


@pytest.mark.slow
def test_models_rank_agreement_between_generators_with_the_agreement_reports_rules(
        two, tiny_clips, tmp_path):
    """Three tiny CLIPs (not baselines) on every generator's benchmarks: the Generators
    section ranks them per skill under the run's own generator and each compared one,
    with the agreement report's intervals and its few-models mark."""
    out = tmp_path / "res"
    models = [f"open_clip:local-dir:{w}" for w in tiny_clips[:3]]
    args = ["eval", str(two.dir), "--benchmark", "shape_color-n2/minimal-*", "--output",
            str(out), *(a for m in models for a in ("--model", m))]
    got = CliRunner().invoke(main, args)
    assert got.exit_code == 0, got.output
    report = CliRunner().invoke(main, ["report", str(out), "--no-figure", "--json"])
    assert report.exit_code == 0, report.output
    tables = json.loads(report.output)["tables"]

    def table(start: str) -> dict:
        (got,) = [t for t in tables if t["title"].startswith(start)]
        return got

    ranks = table("Generators: do the models rank alike")
    assert [(r[0], r[1], r[2]) for r in ranks["rows"]] == [
        (f"shape_color N=2: {g}", "shape_color N=2: own", "3*")
        for g in ("large", "noblue", "outdoor")]
    assert any("fewer than 5 models" in n for n in ranks["notes"])
    kept = table("Generators: accuracy (%) on each generator's own kept items")
    assert kept["header"] == ["Model", "Skill", "own", "large", "noblue", "outdoor"]
    assert len(kept["rows"]) == 3


def test_an_export_keeps_each_generators_benchmarks_apart(two, tmp_path):
    """Exported and read back, each compared generator's benchmark keeps its name and its
    results their generator (before, all three read back as one name and overwrote each
    other's results); a manifest naming a generator that is no plain name is one line."""
    from autocomp.publish.export import export_benchmarks

    export_benchmarks(two.dir, tmp_path / "export", audit=False)
    manifest = json.loads((tmp_path / "export" / "autocomp_export.json").read_text())
    labels = {c.get("generator") for c in manifest["configs"].values()}
    assert labels == {None, "large", "noblue", "outdoor"}
    out = tmp_path / "res"
    got = CliRunner().invoke(main, ["eval", str(tmp_path / "export"), "--model",
                                    "reference:oracle", "--output", str(out)])
    assert got.exit_code == 0, got.output
    results = [json.loads(p.read_text()) for p in out.rglob("*.json")
               if "benchmark_fingerprint" in p.read_text()]
    assert len(results) == len(manifest["configs"])
    assert {r.get("generator") for r in results} == labels
    assert all(r["benchmark"].endswith(f"@{r['generator']}") for r in results
               if r.get("generator"))
    name = next(n for n, c in manifest["configs"].items() if c.get("generator"))
    manifest["configs"][name]["generator"] = "../x"
    (tmp_path / "export" / "autocomp_export.json").write_text(json.dumps(manifest))
    bad = CliRunner().invoke(main, ["eval", str(tmp_path / "export"), "--model",
                                    "reference:oracle", "--output", str(tmp_path / "r2")])
    assert bad.exit_code != 0 and f"configs.{name}.generator" in bad.output
    assert "is not a plain name" in bad.output and "Traceback" not in bad.output


@pytest.mark.slow
def test_the_demo_concepts_drawn_by_two_looks_give_paired_benchmarks(tmp_path):
    """configs/demo.yaml (its tasks, N, faults and writer; 8 concepts per task and N
    rather than 100) with the outdoor look compared: every benchmark file has its outdoor
    twin, and every item both kept has the same id, captions and negatives on both."""
    import yaml

    from autocomp.formats.runs import find_benchmarks

    config = yaml.safe_load((Path(__file__).parents[1] / "configs" / "demo.yaml").read_text())
    config["concepts"] = [{**c, "count": 8} for c in config["concepts"]]
    look = dict(config["generate"]["options"], look="outdoor")
    config["generate"]["compare"] = [{"name": "outdoor", "generator": "procedural",
                                      "options": look}]
    (tmp_path / "demo.yaml").write_text(yaml.safe_dump(config))
    got = CliRunner().invoke(main, ["run", str(tmp_path / "demo.yaml"), "--output",
                                    str(tmp_path / "run"), "--no-progress"])
    assert got.exit_code == 0, got.output
    benches = {b.name: b for b in find_benchmarks(tmp_path / "run")}
    own = sorted(n for n, b in benches.items() if b.generator is None)
    assert len(own) == 16 and sorted(n for n in benches if "@" in n) == [
        f"{n}@outdoor" for n in own]
    paired = 0
    for name in own:
        mine = {i["id"]: i for i in benches[name].items()}
        theirs = {i["id"]: i for i in benches[f"{name}@outdoor"].items()}
        for i in mine.keys() & theirs.keys():
            paired += 1
            assert ((mine[i]["positive"], mine[i]["negatives"]) ==
                    (theirs[i]["positive"], theirs[i]["negatives"]))
    assert paired >= 0.7 * sum(1 for n in own for _ in benches[n].items())


def test_the_board_holds_the_run_own_generator_and_a_strangers_label_is_left_out(two,
                                                                                 tmp_path):
    """`autocomp leaderboard` says what it leaves off (the compared generators' results,
    which hold the same items); a result file whose `generator` is no plain name is left
    out of every table with its reason, not shown under a name it invented."""
    import shutil

    from autocomp.report.tables import load_results

    out = tmp_path / "res"
    got = CliRunner().invoke(main, ["eval", str(two.dir), "--model", "reference:oracle",
                                    "--benchmark", "shape_color-n2/minimal-swap*",
                                    "--output", str(out)])
    assert got.exit_code == 0, got.output
    board = CliRunner().invoke(main, ["leaderboard", str(out), "-o", str(tmp_path / "site")])
    assert board.exit_code == 0, board.output
    assert ("3 results on the images of compared generators (large, noblue, outdoor; "
            "generate.compare): left off the board, which holds the run's own generator's"
            ) in board.output
    shown = json.loads((tmp_path / "site" / "leaderboard.json").read_text())
    assert [s["all_benchmarks"]["of"] for s in shown["sections"]] == [1]  # its own file
    hostile = tmp_path / "hostile"
    shutil.copytree(out, hostile)
    path = next(p for p in hostile.rglob("*.json")
                if json.loads(p.read_text()).get("generator") == "large")
    path.write_text(json.dumps({**json.loads(path.read_text()), "generator": "../../x"}))
    skipped: list = []
    cells = load_results(hostile, skipped)
    assert len(cells) == 3 and (path, "its field 'generator' is not a plain name") in skipped
    gone = next(p for p in out.rglob("*.json") if json.loads(p.read_text()).get(
        "generator") == "outdoor").with_suffix(".predictions.jsonl")
    gone.unlink()  # a compared result without its predictions: counted where it is missed
    report = json.loads(CliRunner().invoke(main, ["report", str(out), "--no-figure",
                                                  "--json"]).output)
    tables = {t["title"].split(",")[0]: t for t in report["tables"]}
    kept = tables["Generators: accuracy (%) on each generator's own kept items"]
    assert ("Left out (1): reference:oracle on shape_color-n2/minimal-swap@outdoor (no "
            "predictions beside it)") in kept["notes"]
    assert ("Generators: accuracy on the items every generator kept (no model has "
            "predictions on every generator's benchmarks of a skill)") in report["not_printed"]

"""Benchmarks in other projects' formats: fixtures written by hand in each format."""

import json
import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from autocomp.cli import main
from autocomp.core.errors import AutocompError
from autocomp.eval.cache import folder_name
from autocomp.eval.cells import evaluate, result_file
from autocomp.eval.metrics import Tally, outcome
from autocomp.formats import detect_format, open_suite
from autocomp.formats.columns import parse_mapping


def _image(path, color, size=(48, 32)):
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, color).save(path, format="JPEG")


@pytest.fixture
def coco(tmp_path):
    images = tmp_path / "val2017"
    for i, c in enumerate([(200, 30, 30), (30, 200, 30), (30, 30, 200)]):
        _image(images / f"00000000000{i}.jpg", c)
    return images


@pytest.fixture
def sugarcrepe(tmp_path):
    """Two subsets; key "2" is missing (a gap); positives carry stray whitespace."""
    d = tmp_path / "sugarcrepe"
    d.mkdir()
    (d / "swap_att.json").write_text(json.dumps({
        "0": {"filename": "000000000000.jpg", "caption": "A red bus next to a white car.\n",
              "negative_caption": "A white bus next to a red car."},
        "1": {"filename": "000000000001.jpg", "caption": "  A small dog on a big bed.",
              "negative_caption": "A big dog on a small bed."},
        "3": {"filename": "000000000002.jpg", "caption": "A green  cup and a blue plate.",
              "negative_caption": "A blue cup and a green plate."}}))
    (d / "add_obj.json").write_text(json.dumps({
        "0": {"filename": "000000000000.jpg", "caption": "A bus on the street.",
              "negative_caption": "A bus and a horse on the street."},
        "1": {"filename": "000000000002.jpg", "caption": "Plates on a table.",
              "negative_caption": "Plates and a knife on a table."}}))
    return d


def test_sugarcrepe_items_gaps_and_whitespace(sugarcrepe, coco):
    assert detect_format(sugarcrepe) == "sugarcrepe"
    suite = open_suite(sugarcrepe, images=coco)
    assert [b.name for b in suite.benchmarks] == ["sugarcrepe/add_obj", "sugarcrepe/swap_att"]
    swap = list(suite.benchmarks[1].items())
    assert [i["id"] for i in swap] == ["swap_att-0", "swap_att-1", "swap_att-3"]
    assert swap[0]["positive"] == "A red bus next to a white car."
    assert swap[2]["positive"] == "A green cup and a blue plate."
    assert swap[1]["raw"]["positive"] == "  A small dog on a big bed."
    assert suite.info["normalised"] == {"add_obj": 0, "swap_att": 3}
    assert suite.info["gaps"] == {"add_obj": 0, "swap_att": 1}
    assert swap[0]["image"] == str((coco / "000000000000.jpg").resolve())


def test_sugarcrepe_bad_input_is_one_line(sugarcrepe, coco, tmp_path):
    with pytest.raises(AutocompError, match="needs --images"):
        open_suite(sugarcrepe)
    bad = json.loads((sugarcrepe / "add_obj.json").read_text())
    bad["1"]["filename"] = "../../etc/passwd"
    (sugarcrepe / "add_obj.json").write_text(json.dumps(bad))
    with pytest.raises(AutocompError, match="item add_obj-1: image '../../etc/passwd' lies "
                                            "outside the image folder"):
        open_suite(sugarcrepe, images=coco)
    bad["1"]["filename"] = "000000000009.jpg"
    (sugarcrepe / "add_obj.json").write_text(json.dumps(bad))
    with pytest.raises(AutocompError, match=r"1 of 5 images are missing .*000000000009.jpg"
                                            r".*--skip-missing"):
        open_suite(sugarcrepe, images=coco)
    suite = open_suite(sugarcrepe, images=coco, skip_missing=True)
    assert suite.info["missing_images"] == 1 and suite.info["items"]["add_obj"] == 1
    bad["1"] = {"filename": "000000000001.jpg", "caption": "x"}
    (sugarcrepe / "add_obj.json").write_text(json.dumps(bad))
    with pytest.raises(AutocompError, match=r"add_obj.json: entry 1: field negative_caption"):
        open_suite(sugarcrepe, images=coco)


def test_sugarcrepe_ties_are_wrong_and_the_report_micro_averages(sugarcrepe, coco, tmp_path):
    """blind:distinct ties on every swap item (same words): strict 0%, tie-aware 50%; add_obj
    negatives have more distinct words: the blind rule is always wrong there."""
    out = tmp_path / "res"
    runner = CliRunner()
    result = runner.invoke(main, ["eval", str(sugarcrepe), "--images", str(coco), "--model",
                                  "blind:distinct", "--output", str(out), "--cache",
                                  str(tmp_path / "cache")])
    assert result.exit_code == 0, result.output
    swap = json.loads(result_file(out, "blind:distinct", "sugarcrepe/swap_att").read_text())
    assert swap["format"] == "sugarcrepe" and swap["n_items"] == 3
    assert swap["metrics"]["accuracy"] == 0.0 and swap["metrics"]["accuracy_tie_aware"] == 50.0
    assert swap["source_info"]["normalised"]["swap_att"] == 3
    rep = runner.invoke(main, ["report", str(out), "--no-figure"])
    assert rep.exit_code == 0, rep.output
    line = next(x for x in rep.output.splitlines() if x.startswith("| blind:distinct"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    # strict with its exact interval (2 and 3 items; 5 pooled), tie-aware in brackets
    assert cells[1:] == ["0.0 [0.0, 84.2] (0.0)", "0.0 [0.0, 70.8] (50.0)",
                         "0.0 [0.0, 52.2] (30.0)", "5"]  # 1.5 of 5 items


@pytest.mark.slow
def test_sugarcrepe_with_a_tiny_open_clip(sugarcrepe, coco, tmp_path):
    from tiny_models import tiny_open_clip

    model = f"open_clip:local-dir:{tiny_open_clip(tmp_path / 'oc')}"
    got = evaluate(sugarcrepe, [model], tmp_path / "res", images=coco,
                   cache_dir=tmp_path / "c")
    assert {r["benchmark"] for r in got} == {"sugarcrepe/add_obj", "sugarcrepe/swap_att"}
    assert all(r["encoded"]["images"] >= 1 for r in got)


CREPE_HEADER = ("image_id,caption,n,n_objects,n_relations,n_attributes,"
                "n_connected_components,hard_negs,x,y,width,height\n")


@pytest.fixture
def crepe(tmp_path):
    vg = tmp_path / "vg_images"
    _image(vg / "1.jpg", (250, 250, 250), (80, 60))
    _image(vg / "2.jpg", (10, 10, 10), (80, 60))
    d = tmp_path / "crepe"
    rows_swap = [
        '1,a man riding a horse,4,2,1,1,1,"[\'a horse riding a man\', \'a man near a horse '
        'on a road\', \'man\']",0,0,40,30\n',
        '2,a white cat on a black mat,4,2,1,2,1,"{\'a black cat on a white mat\', '
        '\'A white cat on a black mat\'}",10,10,40,40\n']
    rows_atom = ['1,a tall tree behind a red car,5,2,1,2,1,"[\'a tall tree behind a red car\','
                 ' \'a short tree\']",5,5,30,20\n']
    (d / "swap").mkdir(parents=True)
    (d / "swap" / "prod_vg_hard_negs_swap_complexity_4.csv").write_text(
        CREPE_HEADER + "".join(rows_swap))
    (d / "atom").mkdir()
    (d / "atom" / "prod_vg_hard_negs_atom_complexity_5.csv").write_text(
        CREPE_HEADER + "".join(rows_atom))
    return d, vg


def test_crepe_rows_literals_crops_and_flags(crepe):
    d, vg = crepe
    assert detect_format(d) == "crepe"
    suite = open_suite(d, images=vg)
    assert [b.name for b in suite.benchmarks] == ["crepe/atom-n5", "crepe/swap-n4"]
    swap = list(suite.benchmarks[1].items())
    assert swap[0]["negatives"][0]["caption"] == "a horse riding a man"
    assert swap[0]["crop"] == [0.0, 0.0, 40.0, 30.0]
    # a set literal is sorted; the case-only duplicate of the positive is flagged
    assert [n["caption"] for n in swap[1]["negatives"]] == ["A white cat on a black mat",
                                                            "a black cat on a white mat"]
    assert swap[1]["flags"] == ["positive among negatives up to case"]
    assert suite.info["flagged"] == {
        "crepe/atom-n5: positive among negatives": 1,
        "crepe/swap-n4: positive among negatives up to case": 1}


def test_crepe_literals_are_never_evaluated(crepe):
    d, vg = crepe
    path = d / "swap" / "prod_vg_hard_negs_swap_complexity_4.csv"
    path.write_text(CREPE_HEADER + '1,a man,4,1,0,0,1,"__import__(\'os\').getcwd()",0,0,4,4\n')
    with pytest.raises(AutocompError, match=r"complexity_4.csv: entry row 2: field hard_negs: "
                                            r"not a Python list or set literal"):
        open_suite(d, images=vg)
    path.write_text(CREPE_HEADER + '1,a man,4,1,0,0,1,"[1, 2]",0,0,4,4\n')
    with pytest.raises(AutocompError, match="expected a list or set of strings"):
        open_suite(d, images=vg)


def test_crepe_recall_at_k_mean_rank_and_crops(crepe, tmp_path):
    """blind:length ranks by word count: the swap row 1 positive (5 words) ties with its
    5-word swap, loses to the 8-word negative, beats "man": rank 3 (ties against it)."""
    d, vg = crepe
    out = tmp_path / "res"
    evaluate(d, ["blind:length"], out, images=vg, cache_dir=tmp_path / "c")
    r = json.loads(result_file(out, "blind:length", "crepe/swap-n4").read_text())
    lines = result_file(out, "blind:length", "crepe/swap-n4").with_suffix(
        ".predictions.jsonl").read_text()
    preds = [json.loads(x) for x in lines.split("\n") if x]
    assert [p["rank"] for p in preds] == [3, 3]
    m = r["metrics"]
    assert m["accuracy"] == 0.0 and m["recall@3"] == 100.0 and m["mean_rank"] == 3.0
    rep = CliRunner().invoke(main, ["report", str(out), "--no-figure"])
    assert "CREPE: Recall" in rep.output and "| blind:length | swap | 4 |" in rep.output
    from autocomp.eval.harness import image_ref
    from autocomp.eval.images import open_image as _open

    item = next(iter(open_suite(d, images=vg).benchmarks[1].items()))
    assert image_ref(item).endswith("1.jpg#crop=0,0,40,30")
    assert _open(vg / "1.jpg", (0, 0, 40, 30)).size == (40, 30)
    assert _open(vg / "1.jpg", (60, 50, 40, 30)).size == (20, 10)  # clipped to the image


def test_outcome_rank_counts_ties_against_the_positive():
    assert outcome(np.array([0.5, 0.9, 0.5, 0.1]))["rank"] == 3
    assert outcome(np.array([0.9, 0.5, 0.1]))["rank"] == 1
    assert outcome(np.array([0.2, -np.inf, 0.5]))["rank"] == 2  # not shown: never counts
    t = Tally()
    for ranks in ([1.0, 0.0], [0.0, 1.0, 0.5, 0.7]):
        t.add(outcome(np.array(ranks)), len(ranks), len(ranks), False, None)
    assert t.metrics()["recall@3"] == 50.0 and t.metrics()["mean_rank"] == 2.5


def test_column_mapped_jsonl_and_csv(tmp_path, coco):
    rows = [{"img": "000000000000.jpg", "cap": " a red square ", "negs": ["a blue square"],
             "split": "colors"},
            {"img": "000000000001.jpg", "cap": "a green square", "negs": ["a red square",
                                                                            "a green circle"],
             "split": "shapes"}]
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    mapping = parse_mapping("image=img,positive=cap,negatives=negs,subset=split")
    suite = open_suite(path, "columns", coco, mapping)
    assert [b.name for b in suite.benchmarks] == ["mine/colors", "mine/shapes"]
    first = next(iter(suite.benchmarks[0].items()))
    assert first["positive"] == "a red square" and len(first["negatives"]) == 1
    csv = tmp_path / "mine.csv"
    csv.write_text('img,cap,n1,n2\n000000000002.jpg,a cup,"a mug","a bowl"\n')
    suite = open_suite(csv, "columns", coco, parse_mapping("image=img,positive=cap,"
                                                           "negatives=n1+n2"))
    item = next(iter(suite.benchmarks[0].items()))
    assert [n["caption"] for n in item["negatives"]] == ["a mug", "a bowl"]
    with pytest.raises(AutocompError, match="needs negatives"):
        parse_mapping("image=img,positive=cap")
    with pytest.raises(AutocompError, match="no column 'nope'"):
        open_suite(path, "columns", coco, parse_mapping("image=img,positive=cap,"
                                                        "negatives=nope"))
    out = tmp_path / "res"
    result = CliRunner().invoke(main, ["eval", str(path), "--source-format", "columns", "--images",
                                       str(coco), "--columns",
                                       "image=img,positive=cap,negatives=negs", "--model",
                                       "blind:length"])
    assert result.exit_code == 0, result.output
    assert result_file(tmp_path / "mine.autocomp" / "results", "blind:length",
                       "mine/all").is_file()
    assert not out.exists()


def test_subsets_whose_slugs_collide_keep_their_own_results(tmp_path, coco):
    """Subsets "a/b" and "a-b" once shared one result file (name.replace("/", "-")): one
    was overwritten and missing from the report."""
    rows = [{"img": "000000000000.jpg", "cap": "a red square", "negs": ["a blue square"],
             "split": "a/b"},
            {"img": "000000000001.jpg", "cap": "a green square", "negs": ["a red square"],
             "split": "a-b"}]
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "res"
    runner = CliRunner()
    # an earlier version's result under the colliding name goes when the cell is redone
    legacy = out / folder_name("blind:length") / "mine-a-b.json"
    legacy.parent.mkdir(parents=True)
    legacy.write_text(json.dumps({"benchmark": "mine/a-b", "model": "blind:length",
                                  "metrics": {"accuracy": 1.0}}))
    result = runner.invoke(main, ["eval", str(path), "--source-format", "columns",
                                  "--images", str(coco), "--columns",
                                  "image=img,positive=cap,negatives=negs,subset=split",
                                  "--model", "blind:length", "--output", str(out)])
    assert result.exit_code == 0, result.output
    written = sorted(json.loads(p.read_text())["benchmark"]
                     for p in (out / folder_name("blind:length")).glob("*.json"))
    assert written == ["mine/a-b", "mine/a/b"]
    assert not legacy.exists()


def test_audit_flags_blind_shortcuts_and_anomalies(sugarcrepe, coco, crepe):
    """add_obj negatives are longer than their positives: blind:length solves every item
    and blind:distinct is always wrong; swap_att pairs share their words (100% same words)
    and tie; the stray whitespace of the positives is counted."""
    from autocomp.audit import audit

    rows = {r["benchmark"]: r for r in audit(open_suite(sugarcrepe, images=coco))}
    swap, add = rows["sugarcrepe/swap_att"], rows["sugarcrepe/add_obj"]
    assert swap["same_words"] == 100.0 and add["same_words"] == 0.0
    assert swap["whitespace"] == 3 and add["whitespace"] == 0
    assert add["blind"]["blind:length"]["accuracy_tie_aware"] == 0.0
    assert swap["blind"]["blind:distinct"]["accuracy_tie_aware"] == 50.0
    assert not swap["blind"]["blind:distinct"]["flag"]
    d, vg = crepe
    rows = {r["benchmark"]: r for r in audit(open_suite(d, images=vg))}
    assert rows["crepe/atom-n5"]["positive_repeated"] == 1
    assert rows["crepe/swap-n4"]["case_only"] == 1
    result = CliRunner().invoke(main, ["audit", str(sugarcrepe), "--images", str(coco)])
    assert result.exit_code == 0, result.output
    assert "| sugarcrepe/swap_att | 3 | 50.0 |" in result.output


def test_audit_on_a_run_flags_the_distinct_shortcut(tmp_path):
    """On 40 color N=2 confusion items, blind:distinct sits far above chance (the
    never-repeat shortcut): the audit flags it; unigram and length stay unflagged on swap."""
    from autocomp.audit import audit, far_from_chance
    from autocomp.config import parse_config
    from autocomp.pipeline import run_pipeline
    from autocomp.run import Run

    cfg = parse_config({"name": "a", "concepts": [{"task": "shape_color", "n": [2],
                                                   "count": 40}],
                        "generate": {"options": {"size": 96}}})
    run = Run.create(cfg, tmp_path / "run")
    run_pipeline(run, progress=False)
    rows = {r["benchmark"]: r for r in audit(open_suite(run.dir))}
    conf = rows["shape_color-n2/minimal-confusion"]
    assert conf["chance"] == 6.25 and conf["blind"]["blind:distinct"]["flag"]
    swap = rows["shape_color-n2/minimal-swap"]
    assert swap["same_words"] == 100.0 and swap["duplicates"] == 0
    assert not any(b["flag"] for b in swap["blind"].values())
    assert far_from_chance(60.0, 50.0, 400) and not far_from_chance(53.0, 50.0, 400)


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    from autocomp.config import parse_config
    from autocomp.pipeline import run_pipeline
    from autocomp.run import Run

    cfg = parse_config({"name": "x", "concepts": [
        {"task": "shape_color", "n": [2, 3], "count": 6},
        {"task": "shape_position", "n": [2], "count": 6}],
        "captions": {"options": {"slip_rate": 0.0}},
        "generate": {"options": {"size": 96}}})
    run = Run.create(cfg, tmp_path_factory.mktemp("exp") / "run")
    run_pipeline(run, progress=False)
    return run


def _by_concept(items):
    return {i["concept"]: (i["positive"], [n["caption"] for n in i["negatives"]],
                           [n["category"] for n in i["negatives"]]) for i in items}


def test_export_hf_round_trip_rebuilds_the_runs_benchmarks(small_run, tmp_path):
    """Exported as the released Auto-Comp layout, loaded back with negatives rebuilt from
    the concept: every benchmark equals the run's own, caption for caption."""
    import datasets

    from autocomp.bench.export import export_run
    from autocomp.formats.runs import find_benchmarks

    out = tmp_path / "hf"
    got = export_run(small_run.dir, "hf", out)
    assert got["rows"] > 10 and got["minimal"] > 0 and got["contextual"] > 0
    ds = datasets.load_from_disk(str(out))["train"]
    assert {"handmade_image", "llm_caption", "objects", "relations"} <= set(ds.column_names)
    suite = open_suite(out, images=tmp_path / "imgs")
    assert suite.format == "autocomp-hf" and not suite.info["skipped"]
    mine = {(b.task, b.n, b.track, b.kind): b for b in suite.benchmarks}
    theirs = find_benchmarks(small_run.dir)
    assert len(theirs) == len(mine) > 0
    for b in theirs:
        other = mine[(b.task, b.n, b.track, b.kind)]
        assert _by_concept(other.items()) == _by_concept(b.items()), b.name
    # the same images, read from the content-addressed cache
    item = next(iter(mine[("shape_color", 2, "minimal", "swap")].items()))
    assert (tmp_path / "imgs" / item["image"]).is_file()


def test_export_parquet_and_webdataset(small_run, tmp_path):
    import datasets

    from autocomp.bench.export import export_run

    export_run(small_run.dir, "parquet", tmp_path / "pq")
    ds = datasets.load_dataset("parquet", data_files=str(tmp_path / "pq" / "train.parquet"),
                               split="train")
    assert ds.features["handmade_image"].__class__.__name__ == "Image"
    suite = open_suite(tmp_path / "pq" / "train.parquet", "autocomp-hf", tmp_path / "imgs")
    assert sum(1 for b in suite.benchmarks for _ in b.items()) > 0
    import shutil

    run_dir = shutil.copytree(small_run.dir, tmp_path / "run")
    sets = run_dir / "bench" / "sets" / "contextual.jsonl"
    sets.write_text("".join(sets.read_text().splitlines(keepends=True)[1:]))
    got = export_run(run_dir, "webdataset", tmp_path / "wds")
    assert got["rows"] > got["contextual"] > 0  # a concept lacks its contextual image
    wds = datasets.load_dataset("webdataset", split="train",  # the audit's failing case
                                data_files=[str(p) for p in (tmp_path / "wds").glob("*.tar")])
    assert len(wds) == got["minimal"] + got["contextual"]
    first = wds[0]
    assert first["png"].size[0] > 0 and first["txt"] == first["json"]["caption"]
    assert {"concept", "task", "objects", "track"} <= set(first["json"])
    assert not [k for k in os.listdir(tmp_path) if k.startswith(".")]  # no temp left
    with pytest.raises(AutocompError, match="not empty"):
        export_run(small_run.dir, "hf", tmp_path / "wds")


def test_export_never_leaves_a_partial_output(small_run, tmp_path, monkeypatch):
    """A failed export leaves nothing under its name (written to a temp folder, renamed at
    the end); an output that is a file, or a missing formats extra, is one line."""

    from autocomp.bench import export

    calls = []

    def failing(tar, files):
        calls.append(1)
        if len(calls) > 3:
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(export, "_add", failing)
    with pytest.raises(OSError):
        export.export_run(small_run.dir, "webdataset", tmp_path / "wds")
    assert os.listdir(tmp_path) == []  # neither wds/ nor a temp folder
    (tmp_path / "taken").write_text("x")
    with pytest.raises(AutocompError, match="taken.*not a folder"):
        export.export_run(small_run.dir, "parquet", tmp_path / "taken")
    monkeypatch.setitem(sys.modules, "datasets", None)
    with pytest.raises(AutocompError, match=r"needs datasets: .*autocomp\[formats\]"):
        export.export_run(small_run.dir, "hf", tmp_path / "hf")


def released_layout(tmp_path) -> Path:
    """A hand-made dataset in the released AutoComp-Minimal-N2-C layout (image, caption,
    objects, colors), saved with datasets: one minimal and one contextual caption."""
    import datasets
    from PIL import Image as PILImage

    img = tmp_path / "a.png"
    PILImage.new("RGB", (16, 16), (255, 0, 0)).save(img)
    ds = datasets.Dataset.from_dict(
        {"image": [str(img)] * 2,
         "caption": ["a red chair and a blue lamp on a white background",
                     "A red mug stands near a green kettle on the counter."],
         "objects": [["chair", "lamp"], ["mug", "kettle"]],
         "colors": [["red", "blue"], ["red", "green"]]},
        features=datasets.Features({"image": datasets.Image(),
                                    "caption": datasets.Value("string"),
                                    "objects": datasets.Sequence(datasets.Value("string")),
                                    "colors": datasets.Sequence(datasets.Value("string"))}))
    folder = tmp_path / "AutoComp-Minimal-N2-C"
    ds.save_to_disk(str(folder))
    return folder


def test_released_layout_and_offline_hub(tmp_path, monkeypatch):
    """The released layout reads as its swap and confusion benchmarks; a hub id that is not
    cached fails in one line when offline."""
    folder = released_layout(tmp_path)
    suite = open_suite(folder, images=tmp_path / "imgs")
    swap = next(b for b in suite.benchmarks if b.kind == "swap")
    items = list(swap.items())
    assert swap.task == "color" and swap.n == 2 and swap.track == "minimal"
    assert items[0]["negatives"][0]["caption"] == ("a blue chair and a red lamp on a white "
                                                   "background")
    assert items[1]["negatives"][0]["caption"] == ("A green mug stands near a red kettle on "
                                                   "the counter.")
    conf = next(b for b in suite.benchmarks if b.kind == "confusion")
    assert all(len(i["negatives"]) == 15 for i in conf.items())  # 2^4 - 1
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hfhome"))
    with pytest.raises(AutocompError, match="dataset 'AutoComp/AutoComp-Minimal-N2-C' could "
                                            "not be loaded .*hf download --repo-type dataset"):
        open_suite("hf:AutoComp/AutoComp-Minimal-N2-C")


def test_column_mapped_datasets_folder_with_embedded_images(tmp_path, monkeypatch):
    import datasets
    from PIL import Image as PILImage

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    img = tmp_path / "x.png"
    PILImage.new("RGB", (8, 8), (0, 0, 255)).save(img)
    ds = datasets.Dataset.from_dict(
        {"picture": [str(img)], "text": ["a blue square"],
         "hard": [["a red square", "a blue circle"]]},
        features=datasets.Features({"picture": datasets.Image(),
                                    "text": datasets.Value("string"),
                                    "hard": datasets.Sequence(datasets.Value("string"))}))
    ds = ds.cast_column("picture", datasets.Image(decode=True))
    ds.save_to_disk(str(tmp_path / "mine"))  # save_to_disk embeds the image bytes
    img.unlink()
    suite = open_suite(tmp_path / "mine", "columns", None,
                       parse_mapping("image=picture,positive=text,negatives=hard"))
    item = next(iter(suite.benchmarks[0].items()))
    assert item["positive"] == "a blue square" and len(item["negatives"]) == 2
    assert Path(item["image"]).is_file() and str(tmp_path / "cache") in item["image"]


def test_crepe_complexity_from_the_file_name_when_n_is_empty(crepe):
    d, vg = crepe
    (d / "negate").mkdir()
    (d / "negate" / "prod_vg_hard_negs_negate_complexity_7.csv").write_text(
        CREPE_HEADER + '1,a dog on a bed,,2,1,0,1,"[\'a dog not on a bed\']",0,0,20,20\n')
    names = [b.name for b in open_suite(d, images=vg).benchmarks]
    assert "crepe/negate-n7" in names


def test_column_mapping_from_yaml(tmp_path):
    path = tmp_path / "map.yaml"
    path.write_text("image: img\npositive: cap\nnegatives: [n1, n2]\nsubset: split\n")
    assert parse_mapping(str(path)) == {"image": "img", "positive": "cap",
                                        "negatives": ["n1", "n2"], "subset": "split"}
    path.write_text("image: img\npositive: cap\nnegs: x\n")
    with pytest.raises(AutocompError, match="map.yaml: unknown column key"):
        parse_mapping(str(path))


def test_reference_scorers_on_items_without_graphs(sugarcrepe, coco, tmp_path):
    got = evaluate(sugarcrepe, ["reference:random"], tmp_path / "r", images=coco)
    assert sum(r["n_items"] for r in got) == 5
    result = CliRunner().invoke(main, ["eval", str(sugarcrepe), "--images", str(coco),
                                       "--model", "reference:oracle", "--output",
                                       str(tmp_path / "o")])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "reference:oracle reads the items' scene graphs" in result.output


def test_hf_image_cells_read_only_regular_files_inside_images(tmp_path):
    """A path-only image cell once read any local file (a 0600 secret was copied into the
    image cache) and a FIFO blocked forever; a `task` naming a file was opened as a task
    YAML; a dataset whose rows were all skipped printed nothing."""
    import os

    from PIL import Image as PILImage

    images = tmp_path / "imgs"
    images.mkdir()
    PILImage.new("RGB", (16, 16), (255, 0, 0)).save(images / "ok.png")
    secret = tmp_path / "secret.png"
    secret.write_bytes(b"\x89PNG not an image but private")
    os.chmod(secret, 0o600)
    os.mkfifo(images / "fifo.png")
    (tmp_path / "evil.yaml").write_text("kind: nothing\n")

    def dataset(cells, tasks=None):
        """A parquet file as a hand-made dataset would be: image cells {bytes, path}."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        data = {"image": cells, "caption": ["a red chair and a blue lamp"] * len(cells),
                "objects": [["chair", "lamp"]] * len(cells),
                "colors": [["red", "blue"]] * len(cells)}
        if tasks:
            data["task"] = tasks
        path = tmp_path / f"data-{len(list(tmp_path.iterdir()))}.parquet"
        pq.write_table(pa.table(data), path)
        return path

    cells = [{"bytes": None, "path": p} for p in
             ("ok.png", str(secret), "../secret.png", "fifo.png")]
    suite = open_suite(dataset(cells), "autocomp-hf", images)
    assert suite.info["concepts"] == 1  # only ok.png
    skipped = suite.info["skipped"]
    assert skipped["minimal: an image cell's path is outside --images"] == 2
    assert skipped["minimal: an image cell's path is not a regular file"] == 1
    assert not any(p.read_bytes() == secret.read_bytes() for p in images.iterdir()
                   if p.is_file() and not p.is_fifo())
    with pytest.raises(AutocompError, match=r"none of the 1 rows could be used: task: not a "
                                            r"built-in task name \(1\)"):
        open_suite(dataset(cells[:1], tasks=[str(tmp_path / "evil.yaml")]), "autocomp-hf",
                   images)


@pytest.mark.parametrize("cell,accepted", [
    ("b64", True),  # base64 text: JSON cannot carry raw bytes
    ("not base64 at all!", False), (12345, False), ([1, 2], False)])
def test_jsonl_image_cells_take_base64_bytes_or_say_which_item(tmp_path, cell, accepted,
                                                               monkeypatch):
    import base64
    import io

    from PIL import Image as PILImage

    buf = io.BytesIO()
    PILImage.new("RGB", (8, 8), (255, 0, 0)).save(buf, format="PNG")
    data = base64.b64encode(buf.getvalue()).decode() if cell == "b64" else cell
    path = tmp_path / "cells.jsonl"
    path.write_text(json.dumps({"img": {"bytes": data, "path": None}, "cap": "a red square",
                                "negs": ["a blue square"]}) + "\n")
    result = CliRunner().invoke(main, ["eval", str(path), "--source-format", "columns",
                                       "--columns", "image=img,positive=cap,negatives=negs",
                                       "--model", "blind:length"])
    if accepted:
        assert result.exit_code == 0, (result.output, result.exception)
        from autocomp.formats.images import ImageCells

        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
        got = ImageCells(None, "cells", text_only=False).path(
            {"bytes": data, "path": None}, "0", path)  # a scorer that reads the pixels
        with PILImage.open(got) as im:
            assert im.size == (8, 8) and im.convert("RGB").getpixel((0, 0)) == (255, 0, 0)
    else:
        assert result.exit_code == 1 and isinstance(result.exception, SystemExit), \
            result.exception
        assert "an image cell's \"bytes\" must be the image's bytes (base64 text in JSON)" \
            in result.output and "cells.jsonl" in result.output


def test_image_names_too_long_or_holding_a_crop_mark(tmp_path):
    """A 5,000-character name without extension was an OSError traceback (the extension
    lookup); a file named "x#crop=0,0,8,8" was read as a crop of "x", and "y#crop=b" as a
    crop that is no number (ValueError)."""
    from PIL import Image as PILImage

    from autocomp.eval.items import image_ref, image_refs, split_ref
    from autocomp.formats.images import ImageCells, ImageRoot

    images = tmp_path / "imgs"
    images.mkdir()
    for name in ("x#crop=0,0,8,8", "y#crop=b.png"):
        PILImage.new("RGB", (16, 16), (255, 0, 0)).save(images / name, format="PNG")
    cells = ImageCells(ImageRoot(images), "t", text_only=False)
    with pytest.raises(AutocompError, match=r"item 7: image 'aaaa.*' cannot be looked up "
                                            r"\(File name too long\)"):
        cells.path("a" * 5000, "7", tmp_path / "t.jsonl")
    for name in ("x#crop=0,0,8,8", "y#crop=b.png"):
        path = cells.path(name, "1", tmp_path / "t.jsonl")
        assert split_ref(image_ref({"image": path})) == (path, None)
        assert split_ref(image_ref({"image": path, "crop": [1, 2, 3, 4]})) == (path,
                                                                               (1, 2, 3, 4))
        assert [split_ref(r) for r in image_refs({"image": path, "crop": None})] == [
            (path, None)]
    assert image_ref({"image": "plain.png"}) == "plain.png"  # cache keys of old runs hold
    import os

    os.mkfifo(images / "fifo.png")
    (images / "folder.jpg").mkdir()
    for name in ("fifo", "folder"):  # named without extension, as Winoground's are
        with pytest.raises(AutocompError, match=f"image '{name}\\..*' is not a regular file"):
            cells.path(name, "2", tmp_path / "t.jsonl")


def test_a_table_mixing_embedded_images_and_files_under_images_is_scored(tmp_path,
                                                                         monkeypatch):
    """Embedded images went to the cache and named ones stayed under --images: a scorer
    that reads pixels refused every file under --images as "outside" the suite's root."""
    import base64
    import io

    from PIL import Image as PILImage
    from test_compositional import Colors

    from autocomp.eval.harness import Harness

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    buf = io.BytesIO()
    PILImage.new("RGB", (8, 8), (255, 0, 0)).save(buf, format="PNG")
    images = tmp_path / "imgs"
    images.mkdir()
    PILImage.new("RGB", (8, 8), (0, 0, 255)).save(images / "b.png")
    path = tmp_path / "mixed.jsonl"
    path.write_text(json.dumps({"img": {"bytes": base64.b64encode(buf.getvalue()).decode(),
                                        "path": None}, "cap": "a red square",
                                "negs": ["a blue square"]}) + "\n"
                    + json.dumps({"img": "b.png", "cap": "a blue square",
                                  "negs": ["a red square"]}) + "\n")
    suite = open_suite(path, "columns", images,
                       {"image": "img", "positive": "cap", "negatives": "negs"})
    assert suite.also == (images.resolve(),)
    harness = Harness(Colors("colors"), suite.root, suite.tasks, None, workers=0,
                      also=suite.also)
    try:
        got = harness.run(suite.benchmarks[0], tmp_path / "p.jsonl")
    finally:
        harness.close()
    assert got["n_items"] == 2 and got["metrics"]["accuracy"] == 100.0


def test_a_bundled_task_reads_nothing_outside_its_tasks_folder(tmp_path):
    """An export's tasks/ is data from someone else: a task there may name built-in
    vocabularies or files inside tasks/, never a path elsewhere."""
    from autocomp.concepts.bundle import bundled_task

    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tmp_path / "elsewhere.yaml").write_text("name: x\nkind: attributes\nentries: []\n")
    for name, values in (("out", "../elsewhere.yaml"), ("abs", str(tmp_path / "elsewhere.yaml")),
                         ("ok", "colors")):
        (tasks / f"{name}.yaml").write_text(f"name: {name}\nkind: attribute\nobjects: shapes\n"
                                            f"values: {values}\nn: [2]\n")
    (tasks / "link.yaml").symlink_to(tmp_path / "elsewhere.yaml")
    assert "outside tasks/" in bundled_task(tmp_path, "out")
    assert "outside tasks/" in bundled_task(tmp_path, "abs")
    assert "not bundled" in bundled_task(tmp_path, "link")
    assert bundled_task(tmp_path, "../tasks/ok") == "task: not a built-in task name"
    assert bundled_task(tmp_path, "ok").name == "ok"


def test_export_into_a_read_only_folder_is_one_line(small_run, tmp_path, monkeypatch):
    """A traceback (PermissionError / EROFS from the temp folder) before."""
    from conftest import read_only

    locked = tmp_path / "locked"
    locked.mkdir()
    read_only(monkeypatch, locked)
    got = CliRunner().invoke(main, ["export", str(small_run.dir), "--export-format",
                                    "webdataset", "-o", str(locked / "wds")])
    assert got.exit_code == 1 and "cannot write the export here (read-only file system)" in \
        got.output and "Traceback" not in got.output, got.output


SYST_HEADER = ("image_id,caption,x,y,width,height,valid_hard_negs_atom,valid_hard_negs_comp,"
               "valid_hard_negs_combined\n")


def test_crepe_systematicity_seen_and_unseen_compounds(crepe, tmp_path):
    """CREPE's systematicity files (written here by hand in the layout its code reads:
    syst_vg_hard_negs_{seen,unseen}_compounds_in_<dataset>.csv, valid_hard_negs_{atom,comp,
    combined}) are found beside the productivity ones, one benchmark per negative type and
    training set, each item labelled seen / unseen compounds. blind:length by hand: atom,
    seen: row 1 "a red car" (3 words) vs "a blue car" (3: tie, wrong) -> 0 of 1; unseen:
    row 2 "a big brown dog" (4) vs "a dog" (2) -> right, row 3 "a cat" (2) vs "a small
    white cat" (4) -> wrong: 1 of 2. A row with no valid negative of a type is left out
    of that type, and counted."""
    d, vg = crepe
    syst = d / "syst_hard_negatives"
    syst.mkdir()
    (syst / "syst_vg_hard_negs_seen_compounds_in_cc12m.csv").write_text(
        SYST_HEADER + '1,a red car,0,0,40,30,"[\'a blue car\']","[]","[\'a blue car\']"\n')
    (syst / "syst_vg_hard_negs_unseen_compounds_in_cc12m.csv").write_text(
        SYST_HEADER
        + '2,a big brown dog,0,0,40,30,"[\'a dog\']","[\'a big black dog and a brown '
          'cat\']","[\'a dog\']"\n'
        + '1,a cat,5,5,20,20,"[\'a small white cat\']","[]","[]"\n')
    suite = open_suite(d, images=vg)
    names = [b.name for b in suite.benchmarks]
    assert names == ["crepe/atom-n5", "crepe/swap-n4", "crepe/syst-atom-cc12m",
                     "crepe/syst-combined-cc12m", "crepe/syst-comp-cc12m"]
    assert suite.info["flagged"]["crepe/syst-comp-cc12m: rows with no valid comp hard "
                                 "negative (left out)"] == 2
    atom = list(next(b for b in suite.benchmarks if b.name == "crepe/syst-atom-cc12m")
                .items())
    assert [i["breakdown"]["seen"] for i in atom] == ["seen compounds", "unseen compounds",
                                                      "unseen compounds"]
    assert atom[2]["crop"] == [5.0, 5.0, 20.0, 20.0]
    out = tmp_path / "res"
    evaluate(d, ["blind:length"], out, "crepe/syst-*", images=vg, cache_dir=tmp_path / "c")
    r = json.loads(result_file(out, "blind:length", "crepe/syst-atom-cc12m").read_text())
    by = r["metrics"]["by"]["seen"]
    assert by["seen compounds"]["n"] == 1 and by["seen compounds"]["accuracy"] == 0.0
    assert by["unseen compounds"]["n"] == 2 and by["unseen compounds"]["accuracy"] == 50.0
    assert by["unseen compounds"]["chance"] == 50.0
    assert by["unseen compounds"]["interval"] == pytest.approx([1.2579, 98.7421], abs=1e-3)
    rep = CliRunner().invoke(main, ["report", str(out), "--no-figure"])
    assert "Seen / unseen" in rep.output
    assert "| crepe/syst-atom-cc12m | blind:length | 0.0 [0.0, 97.5] | 50.0 [1.3, 98.7] |" \
        in rep.output


# ---- what a newcomer meets in eval on another project's files (issue 23) ----------------

def _dataset_files(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize("spec, needle, code", [
    ("open_clip:ViT-B-32@laion2b_nope",
     "open_clip has no weights 'laion2b_nope' for ViT-B-32 (known tags: openai, ", 1),
    ("open_clip:local-dir:{tmp}/nowhere", "no folder {tmp}/nowhere (local-dir: names a folder",
     81),  # weights missing, as for hf: (issue 68: it was 1)
    ("open_clip:local-dir:{tmp}", "the folder {tmp} has no open_clip_config.json", 81),
])
def test_a_wrong_open_clip_tag_or_folder_is_one_line_saying_what_is_known(
        sugarcrepe, coco, tmp_path, spec, needle, code):
    spec, needle = (x.format(tmp=tmp_path) for x in (spec, needle))
    out = CliRunner().invoke(main, ["eval", str(sugarcrepe), "--images", str(coco),
                                    "--model", spec, "--output", str(tmp_path / "r")])
    assert out.exit_code == code and "Traceback" not in out.output
    assert needle in " ".join(out.output.split()), out.output


def test_eval_leaves_a_dataset_folder_as_downloaded_and_a_failed_load_leaves_nothing(
        sugarcrepe, coco, tmp_path, monkeypatch):
    before = _dataset_files(sugarcrepe)
    monkeypatch.chdir(tmp_path)
    bad = CliRunner().invoke(main, ["eval", str(sugarcrepe), "--images", str(coco), "--model",
                                    f"open_clip:local-dir:{tmp_path / 'nowhere'}"])
    assert bad.exit_code == 81 and "no folder" in bad.output
    assert not (tmp_path / "sugarcrepe.autocomp").exists()  # no empty results/ or cache/
    ok = CliRunner().invoke(main, ["eval", str(sugarcrepe), "--images", str(coco), "--model",
                                   "blind:length"])
    assert ok.exit_code == 0, ok.output
    assert _dataset_files(sugarcrepe) == before  # nothing written into the dataset's folder
    results = tmp_path / "sugarcrepe.autocomp" / "results"
    got = [json.loads(p.read_text()) for p in results.rglob("*.json")
           if not p.name.endswith("predictions.json")]
    assert {r["benchmark"] for r in got if "benchmark" in r} == {"sugarcrepe/add_obj",
                                                                   "sugarcrepe/swap_att"}


def test_audit_over_several_formats_selects_across_them_and_names_the_bad_source(
        sugarcrepe, coco, crepe, tmp_path):
    """A --benchmark pattern holds across the sources (before, a source without a match
    stopped the audit); a source that cannot be read is named."""
    import shutil

    d, vg = crepe
    images = tmp_path / "both"
    shutil.copytree(coco, images)
    for p in vg.iterdir():
        shutil.copy(p, images / p.name)
    runner = CliRunner()
    out = runner.invoke(main, ["audit", str(sugarcrepe), str(d), "--images", str(images),
                               "--benchmark", "crepe/*", "--json"])
    assert out.exit_code == 0, out.output
    assert {r["benchmark"] for r in json.loads(out.output)} == {"crepe/atom-n5",
                                                               "crepe/swap-n4"}
    both = runner.invoke(main, ["audit", str(sugarcrepe), str(d), "--images", str(images),
                                "--json"])
    assert {r["benchmark"].split("/")[0] for r in json.loads(both.output)} == {
        "sugarcrepe", "crepe"}
    none = runner.invoke(main, ["audit", str(sugarcrepe), str(d), "--images", str(images),
                                "--benchmark", "vl-checklist/*"])
    assert none.exit_code == 1 and "known: sugarcrepe/add_obj" in none.output
    stray = tmp_path / "stray.jsonl"
    stray.write_text('{"a": 1}\n')
    bad = runner.invoke(main, ["audit", str(sugarcrepe), str(stray), "--images", str(images)])
    assert bad.exit_code == 1 and f"{stray}: the column mapping needs" in bad.output


@pytest.mark.parametrize("text, needle", [
    ("image: f\npositive: p\nnegatives: [n]\nid: [a, b]\n",
     "field id: expected one column name, got ['a', 'b']"),
    ("image: f\npositive: {a: 1}\nnegatives: n\n", "field positive: expected one column"),
    ("image: f\npositive: p\nnegatives: []\n", "field negatives: expected a column name or"),
    ("image: f\npositive: p\nnegatives: [n, 3]\n", "field negatives: expected a column"),
])
def test_a_column_mapping_with_a_list_where_a_name_belongs_is_one_line(tmp_path, text,
                                                                        needle):
    from autocomp.core.errors import AutocompError
    from autocomp.formats.columns import parse_mapping

    path = tmp_path / "map.yaml"
    path.write_text(text)
    with pytest.raises(AutocompError, match=f"map.yaml: {re.escape(needle)}"):
        parse_mapping(str(path))


def test_a_column_named_twice_in_a_list_is_refused():
    from autocomp.core.errors import AutocompError
    from autocomp.formats.columns import parse_mapping

    with pytest.raises(AutocompError, match="column 'a' is named twice"):
        parse_mapping("images=a+a,captions=c+d")
    assert parse_mapping("images=a+b,captions=c+d")["images"] == ["a", "b"]


def test_a_truncated_parquet_file_is_one_line(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from autocomp.formats.suite import parquet_rows

    path = tmp_path / "test-00000-of-00001.parquet"
    pq.write_table(pa.Table.from_pylist([{"id": str(i), "x": i} for i in range(500)]), path)
    assert len(list(parquet_rows(path))) == 500
    data = path.read_bytes()
    for cut in (len(data) // 2, 100):
        path.write_bytes(data[:cut])
        with pytest.raises(AutocompError, match="not a readable parquet file") as err:
            list(parquet_rows(path))
        assert str(path) in str(err.value)

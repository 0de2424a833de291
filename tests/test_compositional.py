"""Items of several images (issue 24) (Winoground's text / image / group scores), the
Winoground, ColorSwap and ARO readers on hand-written fixtures in their authors' layouts,
ARO's macro accuracy and seeded word orders, synthetic Winoground from concepts, a text-only
audit, folders detected as the authors ship them, per-dataset summaries."""

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from autocomp.cli import main
from autocomp.core.errors import AutocompError
from autocomp.eval.harness import Harness
from autocomp.eval.matrix import matrix_chance, matrix_outcome
from autocomp.eval.scorers.base import DualEncoder
from autocomp.formats import detect_format, open_suite

COLORS = {"red": (1.0, 0.0, 0.0), "green": (0.0, 1.0, 0.0), "blue": (0.0, 0.0, 1.0)}


class Colors(DualEncoder):
    """An image is its mean color (0-1 per channel); a caption is the one-hot of its
    first color word: a score is that channel of the image, so every score is known."""

    family = "test"

    def encode_images(self, images):
        return np.stack([np.asarray(im.convert("RGB"), dtype=np.float64).mean(axis=(0, 1))
                         / 255 for im in images]).astype(np.float32)

    def encode_texts(self, texts):
        out = []
        for t in texts:
            word = next(w for w in t.lower().replace(".", "").split() if w in COLORS)
            out.append(COLORS[word])
        return np.asarray(out, dtype=np.float32)


def _score(suite, bench=0):
    import tempfile
    from pathlib import Path

    harness = Harness(Colors("colors"), suite.root, suite.tasks, None, workers=0)
    with tempfile.TemporaryDirectory(prefix="autocomp-test-") as tmp:
        try:
            got = harness.run(suite.benchmarks[bench], Path(tmp) / "p.jsonl")
        finally:
            harness.close()
    return got["metrics"]


# -- the metric ------------------------------------------------------------------------
def test_matrix_scores_as_winoground_defines_them_with_exact_chance():
    eye = [[1, 0], [0, 1]]
    assert matrix_outcome([[0.9, 0.1], [0.2, 0.8]], eye)["group"] is True
    text_only = matrix_outcome([[0.9, 0.8], [0.95, 0.97]], eye)  # i1 likes every caption
    assert (text_only["text"], text_only["image"], text_only["group"]) == (True, False, False)
    image_only = matrix_outcome([[0.5, 0.6], [0.2, 0.7]], eye)
    assert (image_only["text"], image_only["image"]) == (False, True)
    ties = matrix_outcome([[0.5, 0.5], [0.5, 0.5]], eye)
    assert (ties["text"], ties["text_tie"], ties["image_tie"], ties["group_tie"]) == (
        False, 0.25, 0.25, 0.0625)
    chance = matrix_chance(eye)
    assert chance["text"] == 0.25 and chance["image"] == 0.25
    assert chance["group"] == pytest.approx(1 / 6, abs=1e-12)  # Winoground's 16.67
    one = matrix_chance([[1, 0, 0, 0]])  # one image, four captions: today's items
    assert one == {"text": 0.25, "image": None, "group": 0.25}
    assert matrix_outcome([[0.3, 0.9, 0.1]], [[1, 0, 0]])["rank"] == 2


# -- Winoground ------------------------------------------------------------------------
WINO = [  # (image 0 color, image 1 color, collapsed tag): see the test for the outcome
    ((255, 0, 0), (0, 0, 255), "Object"),      # all right
    ((255, 0, 0), (255, 0, 0), "Object"),      # all wrong (ties in the image direction)
    ((230, 0, 204), (242, 0, 247), "Relation"),  # text right, image wrong
    ((128, 0, 153), (51, 0, 179), "Relation"),   # image right, text wrong
    ((230, 0, 204), (242, 0, 247), "Relation"),  # text right, image wrong
]


def _winoground_rows():
    rows = []
    for i, (_, _, tag) in enumerate(WINO):
        rows.append({"id": i, "image_0": f"ex_{i}_img_0", "image_1": f"ex_{i}_img_1",
                     "caption_0": f"a red cup and a blue bowl {i}",
                     "caption_1": f"a blue cup and a red bowl {i}", "tag": "Noun",
                     "secondary_tag": "Symbolic" if i == 0 else "",
                     "num_main_preds": 1 if i < 3 else 2, "collapsed_tag": tag})
    return rows


@pytest.fixture
def winoground(tmp_path):
    """The hub repository's layout: data/examples.jsonl, data/images/ex_K_img_J.png."""
    data = tmp_path / "winoground" / "data"
    (data / "images").mkdir(parents=True)
    for i, (c0, c1, _) in enumerate(WINO):
        Image.new("RGB", (8, 8), c0).save(data / "images" / f"ex_{i}_img_0.png")
        Image.new("RGB", (8, 8), c1).save(data / "images" / f"ex_{i}_img_1.png")
    (data / "examples.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in _winoground_rows()))
    return tmp_path / "winoground"


def _check_winoground(m):
    # hand-computed: text right on items 0, 2, 4; image right on 0 and 3; group on 0
    assert (m["text_score"], m["image_score"], m["group_score"]) == (60.0, 40.0, 20.0)
    # tie-aware: item 1's image columns tie (1/2 each): image (1 + 0.25 + 1) / 5
    assert (m["text_score_tie_aware"], m["image_score_tie_aware"],
            m["group_score_tie_aware"]) == (60.0, 45.0, 20.0)
    assert (m["chance_text"], m["chance_image"]) == (25.0, 25.0)
    assert m["chance_group"] == pytest.approx(16.6667, abs=1e-3)
    assert m["accuracy"] == m["text_score"]
    tags = m["by"]["tag"]
    # each value with its chance (2 x 2 text: 25%) and Clopper-Pearson interval (1 of 2)
    assert tags["Object"] == {"n": 2, "accuracy": 50.0, "text_score": 50.0,
                              "image_score": 50.0, "group_score": 50.0, "chance": 25.0,
                              "interval": [1.2579, 98.7421]}
    assert tags["Relation"]["n"] == 3 and tags["Relation"]["group_score"] == 0.0
    assert tags["Relation"]["text_score"] == pytest.approx(66.6667, abs=1e-3)
    assert m["by"]["main_preds"]["2"]["n"] == 2
    assert m["by"]["secondary"] == {"Symbolic": {"n": 1, "accuracy": 100.0,
                                                 "text_score": 100.0, "image_score": 100.0,
                                                 "group_score": 100.0, "chance": 25.0,
                                                 "interval": [2.5, 100.0]}}


def test_winoground_repository_layout_detected_and_scored(winoground):
    assert detect_format(winoground) == "winoground"
    suite = open_suite(winoground)  # images/ found where the authors put them
    assert [b.name for b in suite.benchmarks] == ["winoground/test"]
    _check_winoground(_score(suite))


def test_winoground_repeated_ids_and_identical_captions_are_warned_and_audited(winoground):
    """Two rows with one id and an item whose caption_0 == caption_1 were read silently:
    the repeated id is kept apart (results pair item by item), both are warned about at
    load and counted by the audit."""
    from autocomp.audit import structure

    path = winoground / "data" / "examples.jsonl"
    rows = _winoground_rows()
    rows[1]["id"] = rows[0]["id"]
    rows[2]["caption_1"] = rows[2]["caption_0"]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.warns(UserWarning) as got:
        suite = open_suite(winoground)
    said = [str(w.message) for w in got]
    assert any("1 row(s) repeat an id of another (first: test-0, 2 rows)" in m for m in said)
    assert any("1 item(s) have two identical captions (first: test-2)" in m for m in said)
    items = list(suite.benchmarks[0].items())
    assert [it["id"] for it in items[:2]] == ["test-0", "test-0~2"]
    counts = structure(items)
    assert counts["duplicate_ids"] == 1 and counts["positive_repeated"] == 1
    assert counts["duplicates"] == 0  # different images: not the same item twice


def test_audit_of_two_sources_sharing_a_benchmark_name_tells_them_apart(winoground,
                                                                       tmp_path):
    import shutil

    other = shutil.copytree(winoground, tmp_path / "copy")
    table = CliRunner().invoke(main, ["audit", str(winoground), str(other)])
    rows = [ln for ln in table.output.splitlines() if "winoground/test" in ln]
    assert table.exit_code == 0 and len(rows) == 2, table.output
    assert rows[0].startswith(f"| {winoground} | winoground/test")
    assert rows[1].startswith(f"| {other} | winoground/test")
    got = CliRunner().invoke(main, ["audit", str(winoground), str(other), "--json"])
    assert [r["source"] for r in json.loads(got.output)] == [str(winoground), str(other)]


def test_a_loaded_benchmark_is_read_once_and_its_fingerprint_taken_on_the_way(winoground,
                                                                            tmp_path, logged):
    """Eval read a loaded benchmark (and enumerated its negatives) once for its fingerprint
    and again to score it; the fingerprint is now taken as it is scored, and still lets
    --skip_existing skip the cell."""
    from autocomp.eval.cells import evaluate
    from autocomp.formats.suite import LoadedBenchmark

    reads, real = [], LoadedBenchmark.items

    def counted(self):
        reads.append(self.name)
        return real(self)
    LoadedBenchmark.items = counted
    try:
        got = evaluate(winoground, ["reference:random"], tmp_path / "res")
        assert reads == ["winoground/test"]
        (bench,) = open_suite(winoground).benchmarks
        assert got[0]["benchmark_fingerprint"] == bench.fingerprint()
        logged()
        evaluate(winoground, ["reference:random"], tmp_path / "res", skip_existing=True)
        lines = logged()
        assert any(ln.startswith("skip   reference:random winoground/test") for ln in lines)
    finally:
        LoadedBenchmark.items = real


def test_winoground_datasets_folder_with_embedded_images(winoground, tmp_path):
    datasets = pytest.importorskip("datasets")
    rows = _winoground_rows()
    for r in rows:
        for col in ("image_0", "image_1"):
            path = winoground / "data" / "images" / f"{r[col]}.png"
            r[col] = {"bytes": path.read_bytes(), "path": None}
    features = datasets.Features({
        "id": datasets.Value("int32"), "image_0": datasets.Image(),
        "image_1": datasets.Image(), "caption_0": datasets.Value("string"),
        "caption_1": datasets.Value("string"), "tag": datasets.Value("string"),
        "secondary_tag": datasets.Value("string"), "num_main_preds": datasets.Value("int32"),
        "collapsed_tag": datasets.Value("string")})
    ds = datasets.DatasetDict({"test": datasets.Dataset.from_list(rows, features=features)})
    ds.save_to_disk(str(tmp_path / "hf"))
    assert detect_format(tmp_path / "hf") == "winoground"
    _check_winoground(_score(open_suite(tmp_path / "hf")))


def test_colorswap_parquet_layout(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import io

    import pyarrow.parquet as pq

    def png(color):
        buf = io.BytesIO()
        Image.new("RGB", (8, 8), color).save(buf, format="PNG")
        return {"bytes": buf.getvalue(), "path": None}

    rows = [{"id": 0, "image_1": png((255, 0, 0)), "image_2": png((0, 0, 255)),
             "caption_1": "a red ball on a blue box", "caption_2": "a blue ball on a red box",
             "image_source": "sd", "caption_source": "human"},
            {"id": 1, "image_1": png((0, 255, 0)), "image_2": png((0, 255, 0)),
             "caption_1": "a green hat and a red scarf",
             "caption_2": "a red hat and a green scarf", "image_source": "dalle3",
             "caption_source": "human"}]
    folder = tmp_path / "colorswap" / "data"
    folder.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), folder / "test-00000-of-00001.parquet")
    source = tmp_path / "colorswap"
    assert detect_format(source) == "colorswap"
    suite = open_suite(source)
    assert [b.name for b in suite.benchmarks] == ["colorswap/test"]
    m = _score(suite)
    # item 0 all right; item 1: row 0 green 1 > red 0, row 1 red 0 < green 1: text wrong;
    # the two images are the same color: every column ties, image and group wrong
    assert (m["text_score"], m["image_score"], m["group_score"]) == (50.0, 50.0, 50.0)
    assert m["by"]["image_source"]["sd"]["group_score"] == 100.0


def test_column_mapping_with_several_image_columns(tmp_path):
    for name, color in (("a.png", (255, 0, 0)), ("b.png", (0, 0, 255))):
        Image.new("RGB", (8, 8), color).save(tmp_path / name)
    (tmp_path / "pairs.jsonl").write_text(json.dumps(
        {"i0": "a.png", "i1": "b.png", "c0": "red thing", "c1": "blue thing"}) + "\n")
    from autocomp.formats.columns import parse_mapping

    mapping = parse_mapping("images=i0+i1,captions=c0+c1")
    suite = open_suite(tmp_path / "pairs.jsonl", "columns", columns=mapping)
    m = _score(suite)
    assert (m["text_score"], m["image_score"], m["group_score"]) == (100.0, 100.0, 100.0)
    with pytest.raises(AutocompError, match="as many captions as images"):
        parse_mapping("images=i0+i1,captions=c0")


# -- ARO -------------------------------------------------------------------------------
@pytest.fixture
def aro(tmp_path):
    """The authors' folder: the JSON files and images/ (VG crops); a red left half and a
    blue right half per image."""
    root = tmp_path / "aro"
    (root / "images").mkdir(parents=True)
    im = Image.new("RGB", (20, 10), (255, 0, 0))
    im.paste((0, 0, 255), (10, 0, 20, 10))
    im.save(root / "images" / "1.jpg", quality=100)
    red = {"bbox_x": 0, "bbox_y": 0, "bbox_w": 8, "bbox_h": 10}
    blue = {"bbox_x": 12, "bbox_y": 0, "bbox_w": 8, "bbox_h": 10}
    rel = [  # relation "on": one right, one wrong; "under": right -> macro 75, micro 66.7
        {"image_path": "1.jpg", **red, "relation_name": "on",
         "true_caption": "the red cup is on the table", "false_caption": "the blue table..."},
        {"image_path": "1.jpg", **blue, "relation_name": "on",
         "true_caption": "the red cup is on the table", "false_caption": "the blue table"},
        {"image_path": "1.jpg", **blue, "relation_name": "under",
         "true_caption": "the blue mat is under the cup", "false_caption": "the red cup"}]
    (root / "visual_genome_relation.json").write_text(json.dumps(rel))
    attr = ([{"image_path": "1.jpg", **red, "attributes": ["red", "wooden"],
              "true_caption": "the red chair", "false_caption": "the blue chair"}] * 25
            + [{"image_path": "1.jpg", **red, "attributes": ["blue", "metal"],
                "true_caption": "the blue chair", "false_caption": "the red chair"}] * 2)
    (root / "visual_genome_attribution.json").write_text(json.dumps(attr))
    (root / "val2014").mkdir()
    im.save(root / "val2014" / "COCO_val2014_1.jpg")
    (root / "coco_karpathy_test.json").write_text(json.dumps([
        {"image": "val2014/COCO_val2014_1.jpg",
         "caption": ["A small brown dog is sitting on a red couch.",
                     "Two men riding horses on a sandy beach!"]}]))
    return root


def test_aro_vg_macro_accuracy_as_the_authors_report_it(aro, tmp_path):
    assert detect_format(aro) == "aro"
    from autocomp.eval.metrics import macro_accuracy

    suite = open_suite(aro)  # images/ for the VG crops, the folder itself for COCO
    names = [b.name for b in suite.benchmarks]
    assert names[:2] == ["aro/vg-relation", "aro/vg-attribution"]
    assert names[2:] == [f"aro/coco-order/seed{k}" for k in (0, 1, 2)]
    rel = _score(suite, 0)
    assert rel["accuracy"] == pytest.approx(66.6667, abs=1e-3)  # micro
    assert rel["by"]["relation"] == {
        "on": {"n": 2, "accuracy": 50.0, "chance": 50.0, "interval": [1.2579, 98.7421]},
        "under": {"n": 1, "accuracy": 100.0, "chance": 50.0, "interval": [2.5, 100.0]}}
    assert macro_accuracy(rel, suite.benchmarks[0].meta) == 75.0
    att = _score(suite, 1)  # pairs under 25 items are left out of the macro
    assert att["accuracy"] == pytest.approx(100 * 25 / 27, abs=1e-3)
    assert macro_accuracy(att, suite.benchmarks[1].meta) == 100.0


def test_aro_word_orders_are_seeded_permutations(aro):
    suite = open_suite(aro)
    seeds = [list(b.items()) for b in suite.benchmarks[2:]]
    assert seeds[0] == list(suite.benchmarks[2].items())  # the same seed: the same orders
    first = seeds[0][0]
    assert first["positive"] == "a small brown dog is sitting on a red couch"
    for neg in first["negatives"]:  # every perturbation reorders the same words
        assert sorted(neg["caption"].split()) == sorted(first["positive"].split())
    nouns_adj = first["negatives"][0]["caption"].split()
    assert [nouns_adj[i] for i in (0, 4, 5, 6, 7)] == ["a", "is", "sitting", "on", "a"]
    assert [x["negatives"] for x in seeds[0]] != [x["negatives"] for x in seeds[1]]


def test_eval_writes_every_subset_and_a_summary_with_seed_spread(aro, tmp_path):
    out = tmp_path / "results"
    runner = CliRunner()
    got = runner.invoke(main, ["eval", str(aro), "--model",
                               "blind:length", "--output", str(out), "--cache",
                               str(tmp_path / "cache")])
    assert got.exit_code == 0, got.output
    lines = (out / "summaries.jsonl").read_text().splitlines()
    summary = next(s for s in map(json.loads, lines) if s["dataset"] == "aro")
    assert len(summary["subsets"]) == 5
    seeds = summary["seeds"]["aro/coco-order"]
    assert seeds["seeds"] == [0, 1, 2] and len(seeds["accuracy"]) == 3
    assert seeds["mean"] == pytest.approx(sum(seeds["accuracy"]) / 3, abs=1e-3)
    again = runner.invoke(main, ["eval", str(aro), "--model",
                                 "blind:length", "--output", str(out), "--cache",
                                 str(tmp_path / "cache"), "--skip_existing"])
    assert again.output.count("skip") == 5
    report = runner.invoke(main, ["report", str(out), "--no-figure", "--csv",
                                  str(tmp_path / "all.csv")])
    assert report.exit_code == 0, report.output
    assert "ARO: VG-Relation" in report.output and "(3 seeds)" in report.output
    import csv

    with open(tmp_path / "all.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert {r["row"] for r in rows} == {"cell", "micro", "macro", "seed mean"}
    assert sum(r["row"] == "cell" for r in rows) == 5
    for r in rows:  # every cell and micro-average carries its interval
        if r["row"] in ("cell", "micro") and r["accuracy"]:
            assert float(r["accuracy_ci_low"]) <= float(r["accuracy"]) \
                <= float(r["accuracy_ci_high"])


# -- audit without images; folders as the authors ship them ----------------------------
def test_audit_reads_text_alone_and_checks_images_only_when_given(tmp_path):
    sc = tmp_path / "sugar-crepe"  # the authors' repository: data/ beside the scripts
    (sc / "data").mkdir(parents=True)
    (sc / "README.md").write_text("SugarCrepe\n")
    (sc / "main_eval.py").write_text("# the authors' script\n")
    (sc / "data" / "swap_att.json").write_text(json.dumps({
        "0": {"filename": "a.jpg", "caption": "A red bus.", "negative_caption": "A bus red."},
        "1": {"filename": "b.jpg", "caption": "A big dog.", "negative_caption": "A dog."}}))
    assert detect_format(sc) == "sugarcrepe"
    runner = CliRunner()
    got = runner.invoke(main, ["audit", str(sc)])  # no images anywhere
    assert got.exit_code == 0, got.output
    assert "sugarcrepe/swap_att" in got.output and "| - | - |" in got.output
    images = tmp_path / "coco"
    images.mkdir()
    Image.new("RGB", (4, 4), "red").save(images / "a.jpg")
    (images / "b.jpg").write_bytes(b"not an image")
    got = runner.invoke(main, ["audit", str(sc), "--images", str(images), "--json"])
    assert got.exit_code == 0, got.output
    row = json.loads(got.output)[0]
    assert row["unreadable_images"] == 1 and row["duplicate_images"] == 0
    missing = runner.invoke(main, ["audit", str(tmp_path / "nope")])
    assert "does not exist" in missing.output


def test_crepe_repository_layout_is_detected_and_other_csvs_ignored(tmp_path):
    from test_external import CREPE_HEADER

    repo = tmp_path / "crepe"
    (repo / "data" / "syst_hard_negatives").mkdir(parents=True)
    (repo / "data" / "syst_hard_negatives" / "other.csv").write_text("a,b\n1,2\n")
    for kind in ("atom", "negate", "swap"):
        folder = repo / "data" / "prod_hard_negatives" / kind
        folder.mkdir(parents=True)
        (folder / f"prod_vg_hard_negs_{kind}_complexity_4.csv").write_text(
            CREPE_HEADER + "\n" + "1,a dog on a mat,4,1,1,1,1,\"['a mat on a dog']\","
            "0,0,4,4\n")
    assert detect_format(repo) == "crepe"
    suite = open_suite(repo, text_only=True)  # the text alone: no Visual Genome here
    assert [b.name for b in suite.benchmarks] == ["crepe/atom-n4", "crepe/swap-n4",
                                                  "crepe/negate-n4"]


# -- synthetic Winoground from concepts --------------------------------------------------
@pytest.fixture(scope="module")
def wino_run(tmp_path_factory, winoground_run):
    """configs/winoground.yaml's run (built once per test run), the module's own copy."""
    from conftest import copy_run

    return copy_run(winoground_run, tmp_path_factory.mktemp("wino") / "winoground")


@pytest.mark.slow
def test_synthetic_winoground_items_pair_a_concept_with_its_generated_swap(wino_run):
    from autocomp.formats.runs import find_benchmarks
    from autocomp.run import Run

    run = Run.open(wino_run)
    concepts = {c["id"]: c for c in run.records("concepts")}
    benches = find_benchmarks(wino_run, ["*winoground"])
    assert {b.track for b in benches} == {"minimal", "contextual"}
    n = 0
    for bench in benches:
        for item in bench.items():
            n += 1
            a, b = item["captions"]

            def words(text):  # articles agree with the word after them (a/an)
                return sorted(w.strip(".,") for w in text.lower().split()
                              if w not in ("a", "an"))
            assert words(a) == words(b) and a != b  # the same words, bound otherwise
            assert item["images"][0] != item["images"][1]
            partner = concepts[item["partner"]]
            if "partner_of" in partner:  # drawn for its original: the same image seed
                assert partner["seed"] == concepts[item["concept"]]["seed"]
            else:
                assert bench.track == "minimal"
    assert n > 400
    swap = sum(1 for b in find_benchmarks(wino_run, ["*-swap"]) for _ in b.items())
    drawn = sum("partner_of" not in c for c in concepts.values())
    assert swap <= 2 * drawn  # partners add no swap items of their own


@pytest.mark.slow
def test_synthetic_winoground_oracle_and_random_scorers(wino_run, tmp_path):
    out = tmp_path / "results"
    got = CliRunner().invoke(main, ["eval", str(wino_run), "--model", "reference:oracle",
                                    "--model", "reference:random", "--benchmark",
                                    "*winoground", "--output", str(out)])
    assert got.exit_code == 0, got.output
    cells = [json.loads(p.read_text()) for p in out.glob("*/*.json")]
    for r in cells:
        if r["model"] == "reference:oracle":
            m = r["metrics"]
            assert (m["text_score"], m["image_score"], m["group_score"]) == (100, 100, 100)
    rand = [r for r in cells if r["model"] == "reference:random"]
    n = sum(r["n_items"] for r in rand)
    for key, p in (("text_score", 0.25), ("image_score", 0.25), ("group_score", 1 / 6)):
        pooled = sum(r["metrics"][key] * r["n_items"] for r in rand) / n
        se = 100 * math.sqrt(p * (1 - p) / n)
        assert abs(pooled - 100 * p) < 3 * se, (key, pooled)
    report = CliRunner().invoke(main, ["report", str(out), "--no-figure"])
    assert "Synthetic Winoground" in report.output
    assert "25.0 / 25.0 / 16.7" in report.output


def test_a_format_plugin_written_before_text_only_still_opens(tmp_path, monkeypatch):
    from autocomp.core import registry

    seen = []

    from autocomp.formats.suite import Suite

    suite = Suite("tsv", tmp_path, tmp_path, [])

    def old_opener(source, images, columns, skip_missing):  # no text_only argument
        seen.append((source, images))
        return suite

    monkeypatch.setattr(registry, "resolve", lambda family, name: old_opener)
    assert open_suite(tmp_path, "tsv", text_only=True) is suite
    assert seen == [(tmp_path, None)]


def test_a_non_utf8_line_is_one_error_and_a_byte_order_mark_is_read(winoground):
    path = winoground / "data" / "examples.jsonl"
    text = path.read_bytes()
    path.write_bytes(b"\xef\xbb\xbf" + text)  # saved by a Windows editor: still read
    _check_winoground(_score(open_suite(winoground)))
    lines = text.splitlines(keepends=True)
    lines[2] = lines[2].replace(b"a red cup", b"a r\xe9d cup")  # latin-1, not UTF-8
    path.write_bytes(b"".join(lines))
    with pytest.raises(AutocompError) as err:
        _score(open_suite(winoground))
    assert "examples.jsonl" in str(err.value) and "line 3" in str(err.value)
    assert "not UTF-8 text" in str(err.value)


@pytest.mark.parametrize("box,why", [
    ({"bbox_x": 50, "bbox_y": 0}, "outside the 20x10 image"),
    ({"bbox_x": 1e308, "bbox_w": 1e308}, "not finite"),
    ({"bbox_x": 2.1, "bbox_w": 0.3}, "less than a pixel wide or high"),
    ({"bbox_w": 0}, "empty")])
def test_an_aro_box_that_cannot_be_cut_is_refused_at_load(aro, box, why):
    """Such a box once raised ValueError in the decode thread and killed the whole eval."""
    path = aro / "visual_genome_relation.json"
    rows = json.loads(path.read_text())
    rows[1].update(box)
    path.write_text(json.dumps(rows))
    with pytest.raises(AutocompError) as err:
        list(open_suite(aro).benchmarks[0].items())
    text = str(err.value)
    assert why in text and "visual_genome_relation.json" in text and "bbox_" in text
    got = CliRunner().invoke(main, ["eval", str(aro), "--model", "reference:random",
                                    "--benchmark", "aro/vg-relation"])
    assert got.exit_code == 1 and isinstance(got.exception, SystemExit) and why in got.output


# -- ColorSwap as its authors ship it on GitHub ---------------------------------------------
SWAP = [  # (image_1 color, image_2 color): all right; all wrong; text right, image wrong
    ((255, 0, 0), (0, 0, 255)), ((0, 0, 255), (255, 0, 0)), ((230, 0, 204), (242, 0, 247))]


@pytest.fixture
def colorswap_release(tmp_path):
    """The GitHub release: data/test.json and data/train.json (JSON lists), the images in
    data/images/, named from data/ ("images/img_0_1.png")."""
    data = tmp_path / "colorswap" / "data"
    (data / "images").mkdir(parents=True)
    rows = []
    for i, (c1, c2) in enumerate(SWAP):
        for k, color in ((1, c1), (2, c2)):
            Image.new("RGB", (8, 8), color).save(data / "images" / f"img_{i}_{k}.png")
        rows.append({"id": i, "caption_1": "someone holding a red umbrella wearing a blue "
                                           "dress",
                     "caption_2": "someone holding a blue umbrella wearing a red dress",
                     "image_1": f"images/img_{i}_1.png", "image_2": f"images/img_{i}_2.png",
                     "image_source": "midjourney", "caption_source": "human"})
    (data / "test.json").write_text(json.dumps(rows, indent=4))
    (data / "train.json").write_text(json.dumps(rows[:1], indent=4))
    return tmp_path / "colorswap"


def test_colorswap_github_release_detected_and_scored(colorswap_release):
    data = colorswap_release / "data"
    assert detect_format(colorswap_release) == "colorswap"
    assert detect_format(data / "test.json") == "colorswap"
    suite = open_suite(colorswap_release)
    assert [b.name for b in suite.benchmarks] == ["colorswap/test", "colorswap/train"]
    m = _score(suite)  # hand-computed from the mean colors: see SWAP
    assert (m["text_score"], m["image_score"], m["group_score"]) == pytest.approx(
        (200 / 3, 100 / 3, 100 / 3), abs=1e-3)
    assert m["by"]["image_source"]["midjourney"]["n"] == 3
    one = open_suite(data / "test.json", "colorswap")  # the file alone, images from data/
    assert [b.name for b in one.benchmarks] == ["colorswap/test"]
    (data / "images" / "img_2_2.png").unlink()
    with pytest.raises(AutocompError, match=r"1 of 8 images are missing"):
        open_suite(colorswap_release)  # 3 + 1 items, two images each


def test_colorswap_saved_as_one_dataset_keeps_its_split(colorswap_release, tmp_path):
    datasets = pytest.importorskip("datasets")
    rows = json.loads((colorswap_release / "data" / "test.json").read_text())
    root = colorswap_release / "data"
    cells = [{**r, "image_1": {"bytes": (root / r["image_1"]).read_bytes(), "path": None},
              "image_2": {"bytes": (root / r["image_2"]).read_bytes(), "path": None}}
             for r in rows]
    features = datasets.Features({"id": datasets.Value("int64"),
                                  "caption_1": datasets.Value("string"),
                                  "caption_2": datasets.Value("string"),
                                  "image_1": datasets.Image(), "image_2": datasets.Image(),
                                  "image_source": datasets.Value("string"),
                                  "caption_source": datasets.Value("string")})
    ds = datasets.Dataset.from_list(cells, features=features, split="test")
    ds.save_to_disk(str(tmp_path / "saved"))
    suite = open_suite(tmp_path / "saved")
    assert [b.name for b in suite.benchmarks] == ["colorswap/test"]  # as parquet names it
    m = _score(suite)
    assert (m["text_score"], m["group_score"]) == pytest.approx((200 / 3, 100 / 3), abs=1e-3)

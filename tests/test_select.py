"""Model-selection metrics (Auto-Comp Tables 15, 16): Distinct-n, semantic diversity and
CLIPScore, for several runs side by side."""

import json
import shutil

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import built_run
from tiny_models import tiny_open_clip

from autocomp.cli import main
from autocomp.core.errors import AutocompError
from autocomp.core.records import read_jsonl, write_jsonl
from autocomp.report.select import (
    Encoder,
    RunView,
    clip_score,
    distinct_n,
    diversity_table,
    equalize,
    faithfulness_table,
    mean_pairwise_cosine,
)
from autocomp.run import Run

CONFIG = """
name: {name}
seed: {seed}
concepts:
  - {{task: shape_color, n: [2], count: {count}}}
  - {{task: shape_position, n: [2], count: 4}}
generate: {{options: {{size: 64}}}}
"""


def _make(tmp, name, seed, count):
    return built_run(tmp, CONFIG.format(name=name, seed=seed, count=count), name)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("select")
    a, b = _make(tmp, "alpha", 1, 8), _make(tmp, "beta", 2, 5)
    # a writer that says the same thing every time: copy beta, one caption for all
    dull = tmp / "dull"
    shutil.copytree(b.dir, dull)
    for path in (dull / "captions").rglob("*.jsonl"):
        rows = list(read_jsonl(path))
        for r in rows:
            if isinstance(r.get("contextual"), str):
                r["contextual"] = "A red cube and a blue sphere sit on a table."
        write_jsonl(path, rows)
    return a, b, Run.open(dull)


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    return f"open_clip:local-dir:{tiny_open_clip(tmp_path_factory.mktemp('oc') / 'oc')}"


def test_distinct_n_counts_ngrams_over_all_captions():
    # "a b c a b": bigrams ab bc ca ab -> 3 distinct of 4
    assert distinct_n(["a b c a b"], 2) == 0.75
    # two captions: their n-grams pool, none across the caption boundary
    assert distinct_n(["red cube", "red cube"], 2) == 0.5
    assert distinct_n(["Red, cube!", "red cube"], 2) == 0.5  # words, lower case
    assert distinct_n(["one two three four"], 4) == 1.0
    assert distinct_n(["too short"], 3) is None
    # Li et al. (2016): distinct n-grams over the words: 3 distinct bigrams / 5 words
    assert distinct_n(["a b c a b"], 2, "tokens") == 0.6
    assert distinct_n(["red cube", "red cube"], 2, "tokens") == 0.25


def test_mean_pairwise_cosine_is_exact():
    rng = np.random.default_rng(0)
    v = rng.normal(size=(37, 8))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    brute = np.mean([v[i] @ v[j] for i in range(37) for j in range(37) if i != j])
    assert mean_pairwise_cosine(v) == pytest.approx(brute, abs=1e-12)
    assert mean_pairwise_cosine(np.tile(v[:1], (5, 1))) == pytest.approx(1.0)
    assert mean_pairwise_cosine(v[:1]) is None


def test_clip_score_is_100_cos_clamped_at_zero():
    img = np.array([[1.0, 0.0], [1.0, 0.0], [0.6, 0.8]])
    txt = np.array([[0.6, 0.8], [-1.0, 0.0], [0.6, 0.8]])
    assert clip_score(img, txt).tolist() == pytest.approx([60.0, 0.0, 100.0])


def test_equalize_cuts_each_group_to_its_smallest_size_seeded():
    g1 = {("color", 2): [f"a{i}" for i in range(9)], ("position", 2): ["p"] * 3}
    g2 = {("color", 2): [f"b{i}" for i in range(4)]}
    out = equalize([g1, g2], seed=3)
    assert len(out[0][("color", 2)]) == 4 == len(out[1][("color", 2)])
    assert out[0][("position", 2)] == ["p"] * 3  # a group only one run has is kept whole
    assert out == equalize([g1, g2], seed=3) and out != equalize([g1, g2], seed=4)


@pytest.mark.slow
def test_tables_side_by_side(runs, clip):
    a, b, dull = runs
    views = [RunView(r.dir) for r in (a, b, dull)]
    enc = Encoder(clip, "cpu", 16, None)
    table, data = diversity_table(views, enc)
    rows = {(d["run"], d["task"]): d for d in data}
    for task in ("shape_color", "shape_position"):
        sizes = {rows[(str(r.dir), task)]["captions"] for r in (a, b, dull)}
        assert len(sizes) == 1  # compared at one size
        live, flat = rows[(str(b.dir), task)], rows[(str(dull.dir), task)]
        assert flat["semantic_diversity"] == pytest.approx(0.0, abs=1e-6)
        assert live["semantic_diversity"] > 0.0
        for k in (2, 3, 4):
            assert 0 < flat[f"distinct_{k}"] < live[f"distinct_{k}"] <= 1
    assert len(table.rows) == 6 and table.header[4:10] == [
        "Distinct-2 (/ words)", "Distinct-3 (/ words)", "Distinct-4 (/ words)",
        "Distinct-2 (/ 2-grams)", "Distinct-3 (/ 3-grams)",
        "Distinct-4 (/ 4-grams)"]
    # CLIPScore: the mean over images of 100 * max(cos, 0), recomputed by hand for one run
    faith, fdata = faithfulness_table(views[:1], enc)
    imgs = [r for r in views[0].images() if r["track"] == "minimal"]
    iv = enc.images(a.dir, [r["image"] for r in imgs])
    tv = enc.texts([r["caption"] for r in imgs])
    manual = float(np.mean([100 * max(float(x @ y), 0.0) for x, y in zip(iv, tv, strict=True)]))
    got = next(d for d in fdata if d["track"] == "minimal")
    assert got["clip_score"] == pytest.approx(manual, rel=1e-5)
    assert got["images"] == len(imgs) and got["validated_percent"] is not None
    passed = [r["passed"] for r in imgs]
    assert got["validated_percent"] == pytest.approx(100 * sum(passed) / len(passed))


@pytest.mark.slow
def test_select_cli(runs, clip, tmp_path):
    a, b, _ = runs
    res = CliRunner().invoke(main, ["select", str(a.dir), str(b.dir), "--model", clip,
                                    "--device", "cpu", "--batch_size", "8"])
    assert res.exit_code == 0, res.output
    assert "Table 15" in res.output and "Table 16" in res.output
    assert "alpha (template)" in res.output and "beta (template)" in res.output
    res = CliRunner().invoke(main, ["select", str(a.dir), str(b.dir), "--model", clip,
                                    "--device", "cpu", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert {d["label"] for d in data["diversity"]} == {"alpha (template)", "beta (template)"}
    assert {d["track"] for d in data["faithfulness"]} == {"minimal", "contextual"}
    res = CliRunner().invoke(main, ["select", str(a.dir), "--model", "reference:oracle",
                                    "--device", "cpu"])
    assert res.exit_code != 0 and "dual encoder" in res.output


def test_select_names_a_missing_run(tmp_path):
    with pytest.raises(AutocompError):
        RunView(tmp_path / "nowhere")

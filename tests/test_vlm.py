"""Generative VLMs as test takers (vlm family, Auto-Comp Table 7): lettered options, the
image shown, confusion subsampled to 50 options, invalid answers retried once."""

import base64
import io
import json
import re

import pytest
from conftest import built_run
from tiny_models import tiny_gemma_vlm, tiny_llava_vlm

from autocomp.core.errors import AutocompError
from autocomp.core.records import read_jsonl
from autocomp.eval.cells import evaluate
from autocomp.eval.scorers import load_scorer
from autocomp.eval.scorers.choice import letters, parse_letter
from autocomp.report.tables import all_tables

CONFIG = """
name: vlmrun
seed: 5
concepts:
  - {task: shape_color, n: [2, 3], count: 4}
  - {task: shape_position, n: [2], count: 4}
generate: {options: {size: 96}}
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return built_run(tmp_path_factory.mktemp("vlmrun"), CONFIG)


def _results(out):
    return {r["benchmark"]: r for r in (json.loads(p.read_text()) for p in out.rglob("*.json"))}


def _positives(run):
    """Every positive caption of the run's benchmarks (what a perfect test taker picks)."""
    out = set()
    for path in (run.dir / "bench").rglob("*.jsonl"):
        if path.parent.name != "sets":
            out |= {r["positive"] for r in read_jsonl(path)}
    return out


def _reply(pick):
    """A chat server answer: `pick(options, body)` -> the text the VLM says, where options
    are (label, caption) pairs read back from the prompt."""
    def reply(body):
        content = body["messages"][-1]["content"]
        text = next(c["text"] for c in content if c["type"] == "text")
        options = re.findall(r"^([A-Z]{1,2})\. (.*)$", text, flags=re.M)
        reply.bodies.append(body)
        return {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                "choices": [{"index": 0, "finish_reason": "stop", "message": {
                    "role": "assistant", "content": pick(options, body)}}]}

    reply.bodies = []
    return reply


def test_letters_and_parsing():
    assert letters(3) == ["A", "B", "C"]
    labels = letters(50)
    assert labels[25:28] == ["Z", "AA", "AB"] and labels[-1] == "AX" and len(set(labels)) == 50
    opts = ["a red cube", "a blue cube", "a red sphere"]
    assert parse_letter("B", 3) == 1
    assert parse_letter(" (c). ", 3) == 2
    assert parse_letter("**A**", 3) == 0
    assert parse_letter("The answer is C.", 3) == 2
    assert parse_letter("Answer: b", 3) == 1
    assert parse_letter("answer: b.", 3) == 1
    assert parse_letter("The correct option is (C) because", 3) == 2
    assert parse_letter("The answer is a red cube", 3) is None  # "a" is an article here
    assert parse_letter("B. a blue cube", 3) == 1
    assert parse_letter("AX", 50) == 49 and parse_letter("AX", 3) is None
    assert parse_letter("a red sphere", 3, opts) == 2  # the caption itself, exactly
    assert parse_letter("A red cube is shown on the table", 3, opts) is None  # article "A"
    assert parse_letter("D", 3) is None and parse_letter("", 3) is None
    assert parse_letter(None, 3) is None
    assert parse_letter("I cannot tell", 3, opts) is None


def test_spec_errors():
    with pytest.raises(AutocompError, match="takes no @"):
        load_scorer("vlm:google/gemma-3-12b-it@main")
    with pytest.raises(AutocompError, match="names no model"):
        load_scorer("vlm:openai:")
    s = load_scorer("vlm:openai:served")
    assert (s.backend, s.model, s.family, s.scoring) == ("openai", "served", "vlm", "item")
    assert load_scorer("vlm:/w/qwen").backend == "transformers"


def test_a_seeing_vlm_is_scored_right_and_sees_each_items_image(run, fake_openai, tmp_path,
                                                                monkeypatch):
    """A test taker that always picks the positive scores 100% on every benchmark: the
    letter it names maps back through the shuffle to the positive. Each request carries
    the item's own image as a PNG data URL, and confusion shows exactly 50 options."""
    from PIL import Image

    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.url)
    positives = _positives(run)

    def oracle(options, body):
        hits = [lab for lab, cap in options if cap in positives]
        assert len(hits) == 1
        return f"The answer is {hits[0]}."

    reply = _reply(oracle)
    fake_openai.reply = staticmethod(reply)
    out = tmp_path / "res"
    evaluate(run.dir, ["vlm:openai:m"], out, cache_dir=tmp_path / "c")
    res = _results(out)
    assert res and all(r["metrics"]["accuracy"] == 100.0 for r in res.values())
    conf = res["shape_color-n3/minimal-confusion"]
    assert conf["metrics"]["chance"] == 2.0  # 1 / 50, not 1 / 729
    assert conf["scorer_stats"]["subsampled"] == conf["n_items"] > 0
    assert res["shape_color-n2/minimal-confusion"]["metrics"]["chance"] == 6.25
    assert res["shape_color-n2/minimal-swap"]["metrics"]["chance"] == 50.0
    bodies = reply.bodies
    assert sum(r["n_items"] for r in res.values()) == len(bodies)  # one question per item
    counts = {len(re.findall(r"^[A-Z]{1,2}\. ", c["text"], flags=re.M))
              for b in bodies for c in b["messages"][-1]["content"] if c["type"] == "text"}
    assert max(counts) == 50
    urls = {c["image_url"]["url"] for b in bodies for c in b["messages"][-1]["content"]
            if c["type"] == "image_url"}
    sizes = {Image.open(io.BytesIO(base64.b64decode(u.split(",", 1)[1]))).size for u in urls}
    assert sizes == {(96, 96)} and len(urls) > 1  # the items' own images, not one image
    assert all(u.startswith("data:image/png;base64,") for u in urls)


def test_invalid_answers_are_retried_once_then_scored_wrong(run, fake_openai, tmp_path,
                                                           monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.url)
    positives = _positives(run)

    def junk_then_right(options, body):
        text = body["messages"][-1]["content"][-1]["text"]
        if "single option letter" not in text:
            return "A red cube, I think"  # names no option (the article is not a label)
        return next(lab for lab, cap in options if cap in positives)

    fake_openai.reply = staticmethod(_reply(junk_then_right))
    out = tmp_path / "retry"
    evaluate(run.dir, ["vlm:openai:m"], out, ["shape_color-n2/minimal-swap"],
             cache_dir=tmp_path / "c")
    r = _results(out)["shape_color-n2/minimal-swap"]
    assert r["scorer_stats"]["retried"] == r["n_items"] > 0
    assert r["scorer_stats"]["invalid"] == 0 and r["metrics"]["accuracy"] == 100.0

    reply = _reply(lambda o, b: "I cannot tell.")
    fake_openai.reply = staticmethod(reply)
    out = tmp_path / "wrong"
    evaluate(run.dir, ["vlm:openai:m"], out, ["shape_color-n2/minimal-swap"],
             cache_dir=tmp_path / "c")
    r = _results(out)["shape_color-n2/minimal-swap"]
    assert r["scorer_stats"]["invalid"] == r["n_items"]
    assert r["metrics"]["accuracy"] == 0.0 and r["metrics"]["accuracy_tie_aware"] == 0.0
    assert len(reply.bodies) == 2 * r["n_items"]  # asked twice, no more


def test_table7_has_its_own_chance_row(run, fake_openai, tmp_path, monkeypatch):
    """VLM results go to Table 7 with the chance of what they were shown (2.0 on N=3
    confusion), and stay out of Table 4 (contrastive scorers, chance 0.1 there)."""
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.url)
    fake_openai.reply = staticmethod(_reply(lambda o, b: "A"))
    out = tmp_path / "res"
    pats = ["shape_color-n3/minimal-confusion"]
    evaluate(run.dir, ["vlm:openai:m", "reference:random"], out, pats,
             cache_dir=tmp_path / "c")
    results = [json.loads(p.read_text()) for p in out.rglob("*.json")]
    tables = {t.title.split(":")[0]: t for t in all_tables(results)}
    t7, t4 = tables["Table 7"], tables["Table 4"]
    assert t7.rows[0] == ["Random Chance", "2.0"] and t7.rows[1][0] == "Items (n)"
    assert t7.rows[2][0] == "vlm:openai:m"
    assert t4.rows[0] == ["Random Chance", "0.1"]
    assert [row[0] for row in t4.rows[1:]] == ["Items (n)", "reference:random"]


@pytest.mark.parametrize("build", [tiny_gemma_vlm, tiny_llava_vlm], ids=["gemma3", "llava"])
def test_tiny_image_text_to_text_models(build, run, tmp_path):
    """Real transformers loading and generation (AutoProcessor, AutoModelForImageTextToText,
    the processor's chat template with the image), on two model families."""
    model = build(tmp_path / "vlm")
    out = tmp_path / "res"
    evaluate(run.dir, [f"vlm:{model}"], out, ["shape_color-n2/minimal-*"],
             cache_dir=tmp_path / "c", batch_size=4)
    res = _results(out)
    assert set(res) == {"shape_color-n2/minimal-swap", "shape_color-n2/minimal-confusion"}
    for r in res.values():
        stats = r["scorer_stats"]
        assert stats["questions"] == r["n_items"] > 0
        assert stats["invalid"] <= stats["retried"] <= stats["questions"]
        assert r["family"] == "vlm"
    assert res["shape_color-n2/minimal-confusion"]["metrics"]["chance"] == 6.25

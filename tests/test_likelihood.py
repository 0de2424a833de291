"""Generative VLMs scored by likelihood (vqascore, visualgpt) through the harness, and the
multiple-choice test taker's rotation (vlm:...@circular) and option-place bias."""

import json
import math
import re

import numpy as np
import pytest
from conftest import built_run
from test_vlm import _reply
from tiny_models import tiny_gemma_vlm, tiny_llava_vlm, tiny_qwen2_vl

from autocomp.core.errors import AutocompError
from autocomp.eval.cells import evaluate
from autocomp.eval.scorers import load_scorer
from autocomp.eval.scorers.choice import position_bias, rotations
from autocomp.eval.scorers.likelihood import CAPTION_PROMPT, VQA_ANSWER, VQA_QUESTION

CONFIG = """
name: lk
seed: 3
concepts:
  - {task: shape_color, n: [2], count: 4}
generate: {options: {size: 64}}
build: {benchmarks: [swap, confusion, winoground]}
"""
BUILDS = {"gemma3": tiny_gemma_vlm, "llava": tiny_llava_vlm, "qwen2vl": tiny_qwen2_vl}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return built_run(tmp_path_factory.mktemp("lk"), CONFIG)


@pytest.fixture(scope="module", params=list(BUILDS))
def vlm(request, tmp_path_factory):
    return BUILDS[request.param](tmp_path_factory.mktemp(request.param))


def _positives(run):
    """Every positive caption of the run's swap and confusion benchmarks."""
    from autocomp.core.records import read_jsonl

    return {r["positive"] for path in (run.dir / "bench").rglob("*.jsonl")
            if path.parent.name != "sets" for r in read_jsonl(path) if "positive" in r}


def _results(out):
    return {r["benchmark"]: r for r in (json.loads(p.read_text()) for p in out.rglob("*.json"))}


def _predicted(out, bench: str, family: str, item: str) -> dict:
    """The prediction of `family`'s scorer for item `item` of a benchmark kind ("minimal-
    swap")."""
    path = next(p for p in out.rglob(f"*{bench}*.predictions.jsonl") if family in str(p))
    return next(r for r in map(json.loads, path.read_text().splitlines()) if r["id"] == item)


def _first_item(run, bench: str) -> dict:
    return json.loads((run.dir / "bench" / "shape_color-n2" / f"{bench}.jsonl")
                      .read_text().splitlines()[0])


def _by_hand(model, image_path, prompt, answer):
    """log P(answer | image, prompt) from one plain transformers forward pass of the
    rendered chat text with the answer appended: independent of the batching code."""
    import torch
    import transformers as T
    from PIL import Image

    proc = T.AutoProcessor.from_pretrained(model)
    net = T.AutoModelForImageTextToText.from_pretrained(model).eval()
    conv = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": prompt}]}]
    head = proc.apply_chat_template(conv, tokenize=False, add_generation_prompt=True)
    image = Image.open(image_path).convert("RGB")
    ids = proc(text=[head], images=[image], return_tensors="pt")
    tail = proc.tokenizer(answer, add_special_tokens=False)["input_ids"]
    inputs = dict(ids)
    for key in [k for k, v in ids.items() if getattr(v, "shape", None) == ids["input_ids"].shape]:
        extra = (torch.tensor([tail]) if key == "input_ids" else
                 torch.full((1, len(tail)), 1 if key == "attention_mask" else 0,
                            dtype=ids[key].dtype))
        inputs[key] = torch.cat([ids[key], extra], dim=1)
    with torch.no_grad():
        logits = net(**inputs).logits[0].float()
    start = ids["input_ids"].shape[1]
    steps = torch.log_softmax(logits[start - 1:start - 1 + len(tail)], dim=-1)
    return [float(steps[i, t]) for i, t in enumerate(tail)]


@pytest.mark.slow
def test_likelihood_matrices_equal_one_by_one_scoring(run, vlm, tmp_path):
    """Real loading (AutoProcessor, AutoModelForImageTextToText) on three layouts: the
    harness's batched, encode-once scores are the model's own, pair by pair; Winoground
    items get text, image and group scores; a second pass reads every pair from the cache."""
    out = tmp_path / "res"
    evaluate(run.dir, [f"vqascore:{vlm}", f"visualgpt:{vlm}"], out,
             ["shape_color-n2/minimal-winoground", "shape_color-n2/minimal-swap"],
             cache_dir=tmp_path / "c", batch_size=3)
    res = [json.loads(p.read_text()) for p in out.rglob("*.json")]
    assert len(res) == 4
    for r in res:
        assert r["n_items"] > 0
        if r["kind"] == "winoground":
            assert {"text_score", "image_score", "group_score"} <= set(r["metrics"])
            assert r["metrics"]["chance"] == 25.0
    wino = json.loads(next(p for p in out.rglob("*minimal-winoground*.json")
                           if "vqascore" in str(p)).read_text())
    item = _first_item(run, "minimal-winoground")
    row = _predicted(out, "minimal-winoground", "vqascore", item["id"])
    for i, image in enumerate(item["images"]):
        for j, caption in enumerate(item["captions"]):
            want = math.exp(sum(_by_hand(vlm, run.dir / image,
                                         VQA_QUESTION.format(caption=caption), VQA_ANSWER)))
            assert row["scores"][i][j] == pytest.approx(want, abs=2e-6)
    # a pair scored for one benchmark is read from the cache for another (swap and
    # winoground share images and captions)
    asked = sum(r["scorer_stats"]["pairs"] for r in res if r["model"].startswith("vqa"))
    assert asked == sum(r["encoded"].get("pairs", 0) for r in res
                        if r["model"].startswith("vqa")) > 0
    swap = _first_item(run, "minimal-swap")
    got = _predicted(out, "minimal-swap", "visualgpt", swap["id"])
    want = np.mean(_by_hand(vlm, run.dir / swap["image"], CAPTION_PROMPT, swap["positive"]))
    assert got["positive_score"] == pytest.approx(want, abs=2e-6)
    again = tmp_path / "again"
    evaluate(run.dir, [f"vqascore:{vlm}"], again, ["shape_color-n2/minimal-winoground"],
             cache_dir=tmp_path / "c")
    (r,) = _results(again).values()
    assert r["encoded"] == {"images": 0, "captions": 0}  # every pair from the cache
    assert r["metrics"] == wino["metrics"]


def test_likelihood_scorers_meet_the_scorer_contract(vlm, run):
    from PIL import Image

    from autocomp.contracts import scorer_problems

    images = [Image.open(p).convert("RGB") for p in sorted((run.dir / "images").rglob(
        "*.png"))[:2]]
    texts = ["a red cube", "a blue sphere left of a green cone", "a torus"]
    for family in ("vqascore", "visualgpt"):
        scorer = load_scorer(f"{family}:{vlm}", batch_size=2)
        assert scorer_problems(scorer, images, texts) == []


def test_spec_errors():
    with pytest.raises(AutocompError, match="takes no @"):
        load_scorer("vqascore:google/gemma-3-12b-it@main")
    with pytest.raises(AutocompError, match="names no model"):
        load_scorer("visualgpt:openai:")
    s = load_scorer("vqascore:openai:served")
    assert (s.backend, s.model, s.scoring) == ("openai", "served", "pair")
    with pytest.raises(AutocompError, match="cannot score a given answer"):
        load_scorer("visualgpt:openai:served").score_pairs([(None, ["a cube"])])
    assert load_scorer("vlm:m@circular").circular
    assert not load_scorer("vlm:m").circular


def _logprob_reply(p_yes):
    """A chat server answering with log-probabilities: P(Yes) from `p_yes(caption)`
    (None: "Yes" not among the listed tokens)."""
    def reply(body):
        assert body["logprobs"] is True and body["max_tokens"] == 1
        text = next(c["text"] for c in body["messages"][-1]["content"] if c["type"] == "text")
        caption = re.search(r'show "(.*)"\?', text).group(1)
        p = p_yes(caption)
        top = [{"token": "No", "logprob": math.log(0.4), "bytes": None}]
        if p is not None:
            top.insert(0, {"token": "Yes", "logprob": math.log(p), "bytes": None})
        return _top_reply(top)(body)
    return reply


def test_vqascore_from_a_chat_server_with_logprobs(run, fake_openai, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.url)
    positives = _positives(run)
    fake_openai.reply = staticmethod(_logprob_reply(
        lambda c: 0.9 if c in positives else (None if "blue" in c else 0.2)))
    out = tmp_path / "res"
    evaluate(run.dir, ["vqascore:openai:m"], out, ["shape_color-n2/minimal-swap"],
             cache_dir=tmp_path / "c")
    (r,) = _results(out).values()
    assert r["metrics"]["accuracy"] == 100.0
    pred = [json.loads(ln) for ln in next(out.rglob("*.predictions.jsonl")).read_text()
            .splitlines()]
    assert all(p["positive_score"] == pytest.approx(0.9, abs=1e-6) for p in pred)
    assert {round(p["best_negative_score"], 6) for p in pred} <= {0.2, 0.0}
    assert r["scorer_stats"]["yes_unlisted"] == sum(p["best_negative_score"] == 0 for p in pred)


def _top_reply(top):
    """A chat server listing `top` as the first token's top log-probabilities."""
    def reply(body):
        return {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                "choices": [{"index": 0, "finish_reason": "length",
                             "message": {"role": "assistant", "content": "Yes"},
                             "logprobs": {"content": [{"token": "Yes", "logprob": -0.1,
                                                       "bytes": None, "top_logprobs": top}]}}]}
    return reply


def _yes(value):
    return [{"token": "Yes", "logprob": value, "bytes": None}]


@pytest.mark.parametrize("top, script, says", [
    (_yes(float("nan")), [], "returned the log-probability nan for the token 'Yes'"),
    (_yes(float("inf")), [], "returned the log-probability inf"),
    (_yes(3.0), [], "returned the log-probability 3.0"),
    (_yes("high"), [], "returned the log-probability 'high'"),
    (_yes(-0.1), ["notjson"] * 4, "answered with something that is not a chat completion"),
    (_yes(-0.1), ["500"] * 4, "failed (500: "),
    (_yes(-0.1), ["hang"] * 4, "did not answer within 0.5 s (2 tries, "),
])
def test_a_hostile_chat_server_is_one_line_for_vqascore(run, fake_openai, tmp_path,
                                                         monkeypatch, top, script, says):
    """Issue 53's attack on `vqascore:openai`: before, NaN or inf log-probabilities died in
    a ZeroDivisionError, a string in a ValueError, a body that is not JSON in a
    JSONDecodeError, and a 500 blamed the model name and the API key."""
    import functools

    from autocomp.models import chat

    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.url)
    monkeypatch.setattr(chat, "ChatClient", functools.partial(chat.ChatClient, timeout=0.5,
                                                               max_retries=1))
    fake_openai.reply = staticmethod(_top_reply(top))
    fake_openai.script = list(script)
    with pytest.raises(AutocompError) as err:
        evaluate(run.dir, ["vqascore:openai:m"], tmp_path / "res",
                 ["shape_color-n2/minimal-swap"], cache_dir=tmp_path / "c")
    assert says in str(err.value) and "\n" not in str(err.value)


def test_a_long_list_of_log_probabilities_is_read_no_further_than_asked(run, fake_openai,
                                                                        tmp_path, monkeypatch):
    """A server listing 3,000 tokens where 20 were asked: "Yes" in 25th place is below
    the 20 likeliest, so it is scored 0 and counted, as when it is not listed at all."""
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.url)
    listed = [{"token": f"t{i}", "logprob": -1.0 - i / 1e4, "bytes": None} for i in range(3000)]
    listed[24] = {"token": "Yes", "logprob": -1.1, "bytes": None}
    fake_openai.reply = staticmethod(_top_reply(listed))
    got = evaluate(run.dir, ["vqascore:openai:m"], tmp_path / "res",
                   ["shape_color-n2/minimal-swap"], cache_dir=tmp_path / "c")
    stats = got[0]["scorer_stats"]
    assert stats["yes_unlisted"] == stats["pairs"] > 0


def test_rotations_take_every_place_once():
    order = [3, 0, 2, 1]
    turns = rotations(order)
    assert len(turns) == 4 and all(sorted(t) == sorted(order) for t in turns)
    for c in order:
        assert sorted(t.index(c) for t in turns) == [0, 1, 2, 3]


def test_position_bias_counts_and_expectation():
    # three questions of 2 options and one of 4, every answer "A"
    bias = position_bias([(2, 0), (2, 0), (2, 0), (4, 0)])
    assert bias["observed"] == [4, 0, 0, 0]
    assert bias["expected"] == [1.75, 1.75, 0.25, 0.25]
    assert bias["first_share"] == 1.0 and bias["first_expected"] == 0.4375
    from scipy.stats import chisquare

    want = chisquare([4, 0, 0, 0], [1.75, 1.75, 0.25, 0.25])
    assert bias["chi2"] == round(float(want.statistic), 4) and bias["p"] == want.pvalue
    assert position_bias([]) is None


def _circular_cells(run, fake_openai, tmp_path, pick, spec="vlm:openai:m@circular"):
    reply = _reply(pick)
    fake_openai.reply = staticmethod(reply)
    out = tmp_path / "res"
    evaluate(run.dir, [spec], out, ["shape_color-n2/minimal-*"], cache_dir=tmp_path / "c")
    return _results(out), reply.bodies


def test_circular_eval_is_right_only_under_every_rotation(run, fake_openai, tmp_path,
                                                          monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.url)
    positives = _positives(run)

    def oracle(options, body):
        return next(lab for lab, cap in options if cap in positives)

    res, bodies = _circular_cells(run, fake_openai, tmp_path / "o", oracle)
    swap, conf = res["shape_color-n2/minimal-swap"], res["shape_color-n2/minimal-confusion"]
    assert swap["metrics"]["accuracy"] == conf["metrics"]["accuracy"] == 100.0
    # one question per rotation: 2 per swap item, 16 per confusion item (N = 2: 15 negatives)
    assert swap["scorer_stats"]["questions"] == 2 * swap["n_items"]
    assert conf["scorer_stats"]["questions"] == 16 * conf["n_items"]
    assert len(bodies) == sum(r["scorer_stats"]["questions"] for r in res.values())
    # the right caption sat once in every place: an oracle's answers spread evenly
    bias = conf["position_bias"]
    assert bias["observed"] == [conf["n_items"]] * 16 and bias["chi2"] == 0.0

    # always "A": right in one rotation of each item, so never right under all of them
    res, _ = _circular_cells(run, fake_openai, tmp_path / "a", lambda o, b: "A")
    for r in res.values():
        assert r["metrics"]["accuracy"] == 0.0
        assert r["position_bias"]["first_share"] == 1.0
    assert res["shape_color-n2/minimal-confusion"]["position_bias"]["p"] < 1e-6
    # the same model without rotation is right wherever the shuffle put the positive first
    res, _ = _circular_cells(run, fake_openai, tmp_path / "plain", lambda o, b: "A",
                             spec="vlm:openai:m")
    from autocomp.eval.items import image_rows
    from autocomp.eval.scorers.choice import option_order
    from autocomp.formats import open_suite

    benches = {b.name: b for b in open_suite(run.dir).benchmarks}
    for name, r in res.items():
        items = list(benches[name].items())
        # "A" is the positive where the shuffle put it first (a Winoground item: in each
        # image's row, that image's own caption first)
        first = sum(all(option_order(row)[0] == i for i, row in enumerate(image_rows(item)))
                    if "truth" in item else option_order(item)[0] == 0 for item in items)
        assert r["metrics"]["accuracy"] == pytest.approx(100 * first / len(items))
        rows = sum(len(item["images"]) if "truth" in item else 1 for item in items)
        assert r["scorer_stats"]["questions"] == rows and r["n_items"] == len(items)

    # right except when the positive sits last: wrong under rotation, for every item
    def all_but_last(options, body):
        hit = next(lab for lab, cap in options if cap in positives)
        return options[0][0] if hit == options[-1][0] else hit

    res, _ = _circular_cells(run, fake_openai, tmp_path / "l", all_but_last)
    assert all(r["metrics"]["accuracy"] == 0.0 for r in res.values())


def test_the_report_shows_place_bias(run, fake_openai, tmp_path, monkeypatch):
    from autocomp.report.tables import all_tables

    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.url)
    res, _ = _circular_cells(run, fake_openai, tmp_path, lambda o, b: "B")
    tables = {t.title.split(":")[0]: t for t in all_tables(list(res.values()))}
    bias = tables["Option-place bias of the multiple-choice test takers"]
    (row,) = bias.rows
    n = sum(r["position_bias"]["n"] for r in res.values())
    assert row[:3] == ["vlm:openai:m@circular", f"{n:,}", str(len(res))]
    from autocomp.eval.intervals import exact

    lo, hi = exact(0, n)  # never the first option: its share and Clopper-Pearson interval
    assert row[3].startswith(f"0.0 [{lo:.1f}, {hi:.1f}] (") and row[4] == "B (100.0)"

"""The evaluation harness, its scorers and the report, on a small embedded run."""

import json
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import built_run
from tiny_models import tiny_open_clip

from autocomp.cli import main
from autocomp.concepts.load import load_task
from autocomp.concepts.sampling import sample_concepts
from autocomp.config import parse_config
from autocomp.core.errors import AutocompError
from autocomp.core.records import read_jsonl, write_jsonl
from autocomp.eval.cells import evaluate, load_model_set, result_file
from autocomp.eval.harness import Harness
from autocomp.eval.metrics import SAME_MEANING, TIED, Tally, error_category, outcome
from autocomp.eval.scorers import load_scorer
from autocomp.formats.runs import find_benchmarks
from autocomp.negatives.generate import make_negatives
from autocomp.run import Run

CONFIG = """
name: evalrun
seed: 2
concepts:
  - {task: shape_color, n: [1, 2, 3], count: 6}
  - {task: shape_position, n: [2, 3], count: 6}
generate: {options: {size: 128}}
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return built_run(tmp_path_factory.mktemp("evalrun"), CONFIG)


@pytest.fixture(scope="module")
def tiny(tiny_scorers):
    """Specs of the suite's tiny open_clip CLIP, CLIP, SigLIP and causal LM."""
    return {"open_clip": f"open_clip:local-dir:{tiny_scorers['open_clip']}",
            "clip": f"hf:{tiny_scorers['clip']}", "siglip": f"hf:{tiny_scorers['siglip']}",
            "lm": f"blind:lm@{tiny_scorers['lm']}"}


def _results(out):
    return {(r["model"], r["benchmark"]): r for r in
            (json.loads(p.read_text()) for p in out.rglob("*.json"))}


def test_outcome_strict_and_tie_aware():
    assert outcome(np.array([0.9, 0.1, 0.2]))["strict"]
    tie = outcome(np.array([0.5, 0.5, 0.5, 0.1]))
    assert not tie["strict"] and tie["tie_credit"] == pytest.approx(1 / 3)
    assert outcome(np.array([0.4, 0.5]))["tie_credit"] == 0.0
    same = outcome(np.array([0.5, 0.6, 0.1]), np.array([True, False]))
    assert not same["strict"] and same["distinct"]


def test_reference_scorers(run, tmp_path):
    out = tmp_path / "res"
    evaluate(run.dir, ["reference:oracle", "reference:bag-of-concepts"], out,
             cache_dir=tmp_path / "cache")
    res = _results(out)
    benches = find_benchmarks(run.dir)
    for b in benches:
        oracle = res[("reference:oracle", b.name)]["metrics"]
        assert oracle["accuracy"] == 100.0
        bag = res[("reference:bag-of-concepts", b.name)]["metrics"]
        if b.kind == "swap":  # every swap negative names the same objects and values
            assert bag["accuracy"] == 0.0
            assert bag["accuracy_tie_aware"] == pytest.approx(bag["chance"])
        if b.n == 1:  # nothing to bind: the bag is enough
            assert bag["accuracy"] == 100.0
    preds = list(read_jsonl(result_file(out, "reference:bag-of-concepts",
                                        "shape_color-n2/minimal-confusion")
                            .with_suffix(".predictions.jsonl")))
    # the swapped negative names the same objects and values: a tie at the top, shown as
    # a tie (no negative "chosen"), never as a pick of the first tied negative
    assert preds and all(p["tied_with"] >= 1 and p["chosen_category"] is None
                         and not p["correct"] for p in preds)


def _synthetic_run(tmp_path, count):
    """A run directory with swap benchmarks only (no images): enough for item scorers."""
    cfg = parse_config({"concepts": [{"task": "shape_color", "n": [2], "count": count}]})
    run = Run.create(cfg, tmp_path / "synthetic")
    task = load_task("shape_color")
    from autocomp.language.minimal import render_minimal

    items = []
    for c in sample_concepts(task, 2, count, seed=0):
        negs = make_negatives(c.graph, task, "swap", lambda g: render_minimal(g, task.noun))
        items.append({"id": c.id, "concept": c.id, "task": task.name, "n": 2,
                      "track": "minimal", "kind": "swap", "image": "none.png",
                      "graph": c.graph.to_dict(), "paired": False,
                      "positive": negs.positive, "negatives": [n.to_dict() for n in
                                                               negs.negatives]})
    write_jsonl(run.dir / "bench" / "shape_color-n2" / "minimal-swap.jsonl", items)
    return run


def test_random_sits_at_chance_and_unigram_ties_on_swap(tmp_path):
    run = _synthetic_run(tmp_path, 4000)
    out = tmp_path / "res"
    evaluate(run.dir, ["reference:random", "blind:unigram"], out, cache_dir=tmp_path / "c")
    res = _results(out)
    rnd = res[("reference:random", "shape_color-n2/minimal-swap")]
    assert rnd["n_items"] == 4000
    assert abs(rnd["metrics"]["accuracy"] - 50.0) < 2.0
    uni = res[("blind:unigram", "shape_color-n2/minimal-swap")]["metrics"]
    assert uni["accuracy"] == 0.0 and uni["accuracy_tie_aware"] == 50.0


@pytest.mark.slow
def test_tiny_open_clip_end_to_end_cache_and_skip(run, tiny, tmp_path):
    runner = CliRunner()
    args = ["eval", str(run.dir), "--model", tiny["open_clip"], "--output",
            str(tmp_path / "a"), "--cache", str(tmp_path / "cache"), "--batch-size", "7",
            "--benchmark", "shape_color-n2/*", "--benchmark", "shape_position-n3/*"]
    first = runner.invoke(main, args)
    assert first.exit_code == 0, first.output
    res = _results(tmp_path / "a")
    assert len(res) == 8
    r = res[(tiny["open_clip"], "shape_color-n2/minimal-confusion")]
    assert {"benchmark", "model", "pretrained", "metrics", "n_items", "chance",
            "autocomp_version"} <= set(r)
    assert r["metrics"]["chance"] == 6.25
    swap = res[(tiny["open_clip"], "shape_color-n2/minimal-swap")]
    assert swap["encoded"] == {"images": 0, "captions": 0}  # all came with confusion
    again = runner.invoke(main, [*args, "--skip_existing"])
    assert again.output.count("skip") == 8
    other = runner.invoke(main, [*args[:5], str(tmp_path / "b"), *args[6:]])
    assert other.exit_code == 0
    res_b = _results(tmp_path / "b")
    assert all(v["encoded"] == {"images": 0, "captions": 0} for v in res_b.values())
    for key, value in res.items():
        assert res_b[key]["metrics"] == value["metrics"]


def test_harness_equals_per_item_loop(run, tiny):
    from PIL import Image

    scorer = load_scorer(tiny["open_clip"], batch_size=16)
    bench = next(b for b in find_benchmarks(run.dir, ["shape_position-n3/minimal-confusion"]))
    for item in bench.items():
        img = scorer.encode_images([Image.open(run.dir / item["image"]).convert("RGB")])[0]
        texts = scorer.encode_texts([item["positive"], *[n["caption"] for n in
                                                         item["negatives"]]])
        ref = texts.astype(np.float64) @ img.astype(np.float64)
        with_cache = Harness(scorer, run.dir, run.tasks, None)
        got = with_cache._scores([item])[0]
        with_cache.close()
        assert np.allclose(got, ref, atol=1e-5)
        assert outcome(got)["strict"] == outcome(ref)["strict"]
        break


def test_trimmed_context_gives_the_same_text_vectors(tiny):
    scorer = load_scorer(tiny["open_clip"], batch_size=4)
    texts = ["a red cube", "a green cone under a yellow torus, which is above a prism", "x"]
    trimmed = scorer.encode_texts(texts)
    scorer.trim_context = False
    full = scorer.encode_texts(texts)
    assert np.abs(trimmed - full).max() < 1e-5


def test_captions_read_alike_share_one_vector_in_any_batch(tmp_path):
    """Issue 57: the text tower's last block runs at one token (its rounding may follow the
    batch), so captions alike within the context (8 tokens here) are keyed by their token
    ids: one vector, and their tie exact, whichever batch or chunk each came in."""
    scorer = load_scorer(f"open_clip:local-dir:{tiny_open_clip(tmp_path, 8)}", batch_size=3)
    h = Harness(scorer, tmp_path, {}, tmp_path / "cache")
    a = "In a rustic cabin, a polished red pyramid stands on a shelf."
    b = "In a rustic cabin, a polished blue pyramid stands on a shelf."
    keys = h.text_keys([a, b, "a red cube"])
    assert keys[a] == keys[b] != keys["a red cube"]
    first = h.text_vectors(["x", "a red cube", a, "y", "z"])[2]
    again = h.text_vectors([b])[0]  # another call, another batch: read from the cache
    assert np.array_equal(first, again) and h.encoded["captions"] == 5
    h.close()


@pytest.mark.parametrize("which", ["clip", "siglip"])
def test_hf_dual_encoders_batch_equals_one_by_one(tiny, which):
    from PIL import Image

    scorer = load_scorer(tiny[which], batch_size=3)
    texts = ["a red cube", "a blue sphere and a green cone on a white background", "a torus"]
    batch = scorer.encode_texts(texts)
    single = np.concatenate([scorer.encode_texts([t]) for t in texts])
    assert np.abs(batch - single).max() < 1e-5
    assert len({tuple(np.round(v, 4)) for v in batch}) == 3
    imgs = scorer.encode_images([Image.new("RGB", (40, 30), c) for c in ("red", "blue")])
    assert imgs.shape[0] == 2 and np.allclose(np.linalg.norm(imgs, axis=1), 1, atol=1e-5)


def test_siglip_pads_to_64(tiny):
    scorer = load_scorer(tiny["siglip"])
    tok = scorer._load()[0]
    from autocomp.eval.scorers.hf_scorer import SIGLIP_TEXT_LENGTH

    assert scorer.siglip and SIGLIP_TEXT_LENGTH == 64
    enc = tok(["a red cube"], padding="max_length", max_length=64)
    assert len(enc["input_ids"][0]) == 64


def test_siglip_and_lm_run_end_to_end(run, tiny, tmp_path):
    out = tmp_path / "res"
    evaluate(run.dir, [tiny["siglip"], tiny["lm"]], out, ["shape_color-n2/*"],
             cache_dir=tmp_path / "c", batch_size=8)
    res = _results(out)
    assert len(res) == 8
    for r in res.values():
        assert 0.0 <= r["metrics"]["accuracy"] <= 100.0 and r["n_items"] > 0


class _Dies:
    """Wraps a scorer; raises after `limit` caption batches, counts what it encodes."""

    def __init__(self, inner, limit=None):
        self.inner, self.limit, self.texts = inner, limit, 0
        self.scoring, self.batch_size, self.cache_id = (inner.scoring, inner.batch_size,
                                                      inner.cache_id)
        self.embeds_images, self.scores_items = inner.embeds_images, inner.scores_items

    def encode_texts(self, texts):
        if self.limit is not None and self.texts >= self.limit * self.batch_size:
            raise KeyboardInterrupt
        self.texts += len(texts)
        return self.inner.encode_texts(texts)

    caption_vectors = encode_texts

    def encode_images(self, images):
        return self.inner.encode_images(images)


@pytest.mark.slow
def test_killed_eval_recomputes_nothing_cached(run, tiny, tmp_path):
    bench = find_benchmarks(run.dir, ["shape_color-n3/minimal-confusion"])[0]
    inner = load_scorer(tiny["open_clip"], batch_size=50)
    dying = _Dies(inner, limit=3)
    h = Harness(dying, run.dir, run.tasks, tmp_path / "cache")
    with pytest.raises(KeyboardInterrupt):
        h.run(bench, tmp_path / "p.jsonl")
    h.close()
    assert not (tmp_path / "p.jsonl").exists()
    done_before = dying.texts
    again = _Dies(inner)
    h2 = Harness(again, run.dir, run.tasks, tmp_path / "cache")
    h2.run(bench, tmp_path / "p.jsonl")
    unique = {c for item in bench.items() for c in [item["positive"],
                                                   *[n["caption"] for n in item["negatives"]]]}
    assert done_before == 150 and again.texts == len(unique) - done_before


@pytest.mark.slow
def test_report_chance_row_is_the_papers(run, tmp_path):
    out = tmp_path / "res"
    evaluate(run.dir, ["reference:oracle"], out, cache_dir=tmp_path / "c")
    result = CliRunner().invoke(main, ["report", str(out)])
    assert result.exit_code == 0, result.output
    chance = next(line for line in result.output.splitlines() if "Random Chance" in line)
    cells = [c.strip() for c in chance.strip("|").split("|")][1:]
    assert cells == ["50.0", "6.3", "50.0", "6.3", "16.7", "0.1", "16.7", "0.1",
                     "50.0", "25.0", "50.0", "25.0", "16.7", "0.9", "16.7", "0.9"]
    for fmt in ("csv", "latex"):
        assert "Random Chance" in CliRunner().invoke(main, ["report", str(out), "--table-format",
                                                            fmt]).output
    assert "Table 8" in result.output and "Table 13" in result.output
    assert "**Table 9" not in result.output  # no blind scorer among the results: named
    assert "Table 9 (no text-only (blind:) scorer results)" in result.output


def test_model_set_has_table_4_and_real_open_clip_tags():
    import open_clip

    from autocomp.core.resources import data_dir

    specs = load_model_set(data_dir("configs") / "models" / "autocomp-cp.yaml")
    assert len(specs) == 20
    known = {f"{a}@{t}" for a, t in open_clip.list_pretrained()}
    for spec in specs:
        family, _, rest = spec.partition(":")
        assert family in ("open_clip", "hf")
        if family == "open_clip":
            assert rest in known, rest


@pytest.mark.slow
def test_clear_errors(run, tmp_path):
    with pytest.raises(AutocompError, match="unknown model family 'clip'"):
        load_scorer("clip:ViT-B-32")
    with pytest.raises(AutocompError, match="open_clip has no model 'NoSuchNet'"):
        load_scorer("open_clip:NoSuchNet").encode_texts(["a"])
    with pytest.raises(AutocompError, match="hf download laion/CLIP-ViT-B-32-laion2B-s34B-b79K "
                       "--local-dir DIR.*open_clip:local-dir:DIR"):
        load_scorer("open_clip:ViT-B-32@laion2b_s34b_b79k").encode_texts(["a"])
    with pytest.raises(AutocompError, match="no benchmarks here"):
        find_benchmarks(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "autocomp", "eval", str(run.dir), "--model",
                           "hf:someone/not-downloaded", "--benchmark", "shape_color-n2/*"],
                          capture_output=True, text=True,
                          env={"HF_HUB_OFFLINE": "1", "PATH": "", "HOME": str(tmp_path)})
    lines = [x for x in proc.stderr.splitlines() if x.strip()
             and not x.startswith(("read   ", "load   "))]  # status lines, then the error
    assert proc.returncode != 0 and len(lines) == 1 and "Traceback" not in proc.stderr
    assert "hf download someone/not-downloaded" in lines[0] and "hf:DIR" in lines[0]


def test_distinct_words_shortcut_on_confusion(run, tmp_path):
    """A confusion positive never repeats a word; a blind rule that knows it beats chance."""
    out = tmp_path / "res"
    evaluate(run.dir, ["blind:distinct"], out, ["shape_color-n2/minimal-*",
                                                "shape_position-n3/minimal-*"],
             cache_dir=tmp_path / "c")
    res = _results(out)
    conf = res[("blind:distinct", "shape_color-n2/minimal-confusion")]["metrics"]
    # 1 / (2! 2!) = 25%, a little less where "white" also appears in the suffix
    assert conf["chance"] == 6.25 and 18.0 <= conf["accuracy_tie_aware"] <= 25.0
    pos3 = res[("blind:distinct", "shape_position-n3/minimal-confusion")]["metrics"]
    assert pos3["accuracy_tie_aware"] == pytest.approx(100 / 12, abs=1e-3)  # 1 / (3! 2!)
    swap = res[("blind:distinct", "shape_color-n2/minimal-swap")]["metrics"]
    assert swap["accuracy_tie_aware"] == swap["chance"] == 50.0


def test_distributed_ranks_share_the_cells(run, tmp_path):
    out = tmp_path / "res"
    got = [evaluate(run.dir, ["reference:oracle", "reference:random"], out, ["*-n2/*"],
                    cache_dir=tmp_path / "c", rank=r, world_size=2)
           for r in (0, 1)]
    cells = [(x["model"], x["benchmark"]) for g in got for x in g]
    assert len(cells) == len(set(cells)) == 2 * len(find_benchmarks(run.dir, ["*-n2/*"]))
    assert got[0] and got[1]


def test_builtin_model_set_by_name_and_unknown(run):
    from autocomp.cli.eval import _models_file

    assert _models_file(__import__("pathlib").Path("autocomp-cp")).name == "autocomp-cp.yaml"
    result = CliRunner().invoke(main, ["eval", str(run.dir), "--models-file", "nope"])
    assert result.exit_code != 0 and "no model-set file 'nope'" in result.output


@pytest.mark.slow
def test_distributed_eval_under_accelerate_launch(run, tmp_path):
    out = tmp_path / "res"
    cmd = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu",
           "--num_processes", "2", "--num_machines", "1", "--mixed_precision", "no",
           "--dynamo_backend", "no", "-m", "autocomp", "eval", str(run.dir),
           "--model", "reference:oracle", "--model", "reference:random", "--distributed",
           "--output", str(out), "--benchmark", "shape_color-n2/*"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(list(out.rglob("*.json"))) == 8  # 2 models x 4 benchmarks, once each
    assert proc.stderr.count("done   ") == 8  # status lines: logged to stderr


def _choice_reply(pick):
    """A fake chat server answer: `pick(options, prompt)` -> the text the model says."""
    import re as _re

    def reply(body):
        user = body["messages"][-1]["content"]
        options = _re.findall(r"^(\d+)\. (.*)$", user, flags=_re.M)
        return {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                "choices": [{"index": 0, "finish_reason": "stop", "message": {
                    "role": "assistant", "content": pick(options, user)}}]}

    return reply


def test_blind_choice_sits_at_chance_and_subsamples_confusion(run, fake_openai, tmp_path,
                                                              monkeypatch):
    """The paper's blind LLM: shuffled numbered options, confusion shown as the positive +
    49 negatives (chance 2.0%), invalid answers retried once then scored wrong."""
    from autocomp.eval.scorers import load_scorer

    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.url)
    seen = []

    def always_first(options, _):
        seen.append(len(options))
        return "1"

    fake_openai.reply = staticmethod(_choice_reply(always_first))
    out = tmp_path / "res"
    evaluate(run.dir, ["blind:choice@openai:m"], out,
             ["shape_color-n3/minimal-confusion", "shape_color-n2/minimal-swap"],
             cache_dir=tmp_path / "c")
    res = _results(out)
    conf = res[("blind:choice@openai:m", "shape_color-n3/minimal-confusion")]
    assert conf["metrics"]["chance"] == 2.0  # 1 / 50, not 1 / 729
    assert conf["scorer_stats"]["subsampled"] == conf["n_items"] > 0
    assert max(seen) == 50
    swap = res[("blind:choice@openai:m", "shape_color-n2/minimal-swap")]
    assert swap["metrics"]["chance"] == 50.0 and swap["scorer_stats"]["subsampled"] == 0
    # "always option 1" is right exactly when the shuffle put the positive first
    scorer = load_scorer("blind:choice@openai:m")
    preds = [json.loads(x) for x in next(out.rglob("*minimal-confusion-*.predictions.jsonl"))
             .read_text().splitlines()]
    assert len(preds) > 0 and all(p["best_negative_score"] is not None for p in preds)
    assert len(scorer.shown({"id": "x", "negatives": [{}] * 728})) == 50
    assert scorer.shown({"id": "x", "negatives": [{}] * 728}) == \
        scorer.shown({"id": "x", "negatives": [{}] * 728})  # seeded by the item id


def test_blind_choice_retries_an_invalid_answer_then_scores_it_wrong(run, fake_openai,
                                                                     tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.url)

    def odd_invalid(options, prompt):  # every first answer is junk, every retry a number
        retry = "must be one number" in prompt
        return f"Option {len(options)}" if retry else "I cannot see the image."

    fake_openai.reply = staticmethod(_choice_reply(odd_invalid))
    out = tmp_path / "retry"
    evaluate(run.dir, ["blind:choice@openai:m"], out, ["shape_color-n2/minimal-swap"],
             cache_dir=tmp_path / "c")
    r = next(iter(_results(out).values()))
    assert r["scorer_stats"]["retried"] == r["n_items"] and r["scorer_stats"]["invalid"] == 0
    fake_openai.reply = staticmethod(_choice_reply(lambda o, _: "none of them"))
    out = tmp_path / "wrong"
    evaluate(run.dir, ["blind:choice@openai:m"], out, ["shape_color-n2/minimal-swap"],
             cache_dir=tmp_path / "c")
    r = next(iter(_results(out).values()))
    assert r["scorer_stats"]["invalid"] == r["n_items"] and r["metrics"]["accuracy"] == 0.0
    assert r["metrics"]["accuracy_tie_aware"] == 0.0


def test_blind_choice_through_a_tiny_transformers_chat_model(run, tmp_path):
    from tiny_models import tiny_gemma_lm

    lm = tiny_gemma_lm(tmp_path / "gemma")
    out = tmp_path / "res"
    evaluate(run.dir, [f"blind:choice@{lm}"], out, ["shape_color-n2/minimal-swap"],
             cache_dir=tmp_path / "c")
    r = next(iter(_results(out).values()))
    stats = r["scorer_stats"]
    assert stats["questions"] == r["n_items"] > 0
    assert stats["invalid"] <= stats["retried"] <= stats["questions"]
    assert r["metrics"]["chance"] == 50.0


def test_fast_tokenizer_gives_open_clips_ids():
    import random
    import string

    import open_clip

    from autocomp.concepts.files import builtin_tasks
    from autocomp.concepts.load import load_task
    from autocomp.concepts.sampling import sample_concepts
    from autocomp.eval.scorers.openclip_scorer import fast_tokenizer
    from autocomp.negatives.generate import make_negatives

    texts = []
    for name in builtin_tasks():
        task = load_task(name)
        for n in task.n:
            for c in sample_concepts(task, n, 3, seed=1):
                kind = "swap" if n > 1 else "vary_value"
                ns = make_negatives(c.graph, task, kind, task.minimal_caption)
                texts += [ns.positive, *(x.caption for x in ns.negatives)]
    rng = random.Random(0)
    texts += ["".join(rng.choice(string.printable) for _ in range(rng.randrange(60)))
              for _ in range(2000)]
    texts += ["  Two  spaces ", "UPPER Case", "it's a-b 3.5 ...!!", "caf\u00e9 au lait",
              "fish &amp; chips", "a &lt; b", "tab\there", "", "word " * 100]
    ref = open_clip.get_tokenizer("ViT-B-32")
    fast = fast_tokenizer(open_clip.get_tokenizer("ViT-B-32"))
    assert (ref(texts) == fast(texts)).all()
    assert (ref(texts, 16) == fast(texts, 16)).all()  # cut to the context, end token kept
    assert fast(texts).dtype == ref(texts).dtype
    assert [len(fast.encode(t)) for t in texts[:50]] == [len(ref.encode(t)) for t in texts[:50]]


def test_scorers_that_need_no_model_import_no_torch(run, tmp_path):
    """`--device auto` is resolved when a scorer that loads a model first asks for it, never
    while the arguments are parsed: reference and blind scorers run without torch (importing
    it cost 3-7 s of every such eval)."""
    code = ("import sys\nfrom autocomp.cli import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n    assert not e.code, e\n"
            "print('LOADED', sorted({m.split('.')[0] for m in sys.modules} & "
            "{'torch', 'transformers', 'open_clip', 'diffusers'}))\n")
    out = subprocess.run([sys.executable, "-c", code, "eval", str(run.dir), "--model",
                          "reference:random", "--model", "blind:unigram", "--benchmark",
                          "shape_color-n2/*", "-o", str(tmp_path / "r")],
                         capture_output=True, text=True, check=True)
    assert "LOADED []" in out.stdout
    from autocomp.eval.scorers import load_scorer

    scorer = load_scorer("open_clip:ViT-B-32", device="auto")
    assert scorer.device in ("cpu", "cuda")  # resolved on first use


def test_a_served_models_scores_are_keyed_by_its_server_and_recorded(run, fake_openai,
                                                                     tmp_path, monkeypatch):
    """Issue 67: a served model's scores were cached by spec only: a second eval against a
    dead server printed the first one's accuracy, and the result named no server. The
    cache key and the provenance hold the base URL and the model the server says it
    serves; an unreachable server is one line, no cached score."""
    from autocomp.core.errors import AutocompError

    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.url)
    fake_openai.reply = staticmethod(_choice_reply(lambda o, _: "1"))
    out, cache = tmp_path / "first", tmp_path / "c"
    evaluate(run.dir, ["blind:choice@openai:m"], out, ["shape_color-n2/minimal-swap"],
             cache_dir=cache)
    weights = next(iter(_results(out).values()))["weights"]
    assert weights == {"source": "blind:choice@openai:m", "kind": "served",
                       "base_url": fake_openai.url, "served_model": "m (org/weights-v1)"}
    asked = len(fake_openai.requests)
    fake_openai.models = {"m": "org/weights-v2"}  # the same name, other weights: scored again
    evaluate(run.dir, ["blind:choice@openai:m"], tmp_path / "second",
             ["shape_color-n2/minimal-swap"], cache_dir=cache)
    assert len(fake_openai.requests) > asked
    # a pair scorer's scores are cached: under its server and served model
    from autocomp.eval.scorers import load_scorer

    assert load_scorer("vqascore:openai:m").cache_id == (
        f"vqascore:openai:m~{fake_openai.url}~m (org/weights-v2)")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens
    with pytest.raises(AutocompError, match="cannot reach the chat server at "
                                            "http://127.0.0.1:9/v1 to ask which model"):
        load_scorer("vqascore:openai:m").cache_id  # noqa: B018 (asked before any cache read)
    with pytest.raises(AutocompError, match="cannot reach the chat server at "
                                            "http://127.0.0.1:9/v1"):
        evaluate(run.dir, ["blind:choice@openai:m"], tmp_path / "dead",
                 ["shape_color-n2/minimal-swap"], cache_dir=cache)


def test_blind_scorers_read_numerals_as_words():
    """Issue 53: VALSE's counting foils change only a numeral; with numerals dropped the
    blind scorers saw the caption and its foil as the same words (a forced tie)."""
    from autocomp.eval.scorers import load_scorer

    texts = ["There are 3 dogs.", "There are 4 dogs.", "There are dogs."]
    unigram = load_scorer("blind:unigram").score_texts(texts)[:, 0]
    assert unigram[0] != unigram[1]
    length = load_scorer("blind:length").score_texts(texts)[:, 0]
    assert list(length) == [4, 4, 3]


def test_same_meaning_and_tied_picks_have_their_own_category():
    assert error_category({"category": "swapped values", "same_meaning": True}) == SAME_MEANING
    assert error_category({"category": "swapped values"}) == "swapped values"
    from autocomp.eval.harness import Harness

    item = {"id": "x", "concept": "c", "n": 2, "positive": "p",
            "negatives": [{"caption": "n1", "category": "swapped values", "same_meaning": True},
                          {"caption": "n2", "category": "same value / same object"}]}
    tally = Tally()
    got = Harness._judge(None, item, np.array([0.1, 0.9, 0.2]), tally)
    assert tally.errors == {SAME_MEANING: 1} and got["chosen_same_meaning"]
    tally = Tally()
    got = Harness._judge(None, item, np.array([0.5, 0.5, 0.5]), tally)
    assert tally.errors == {TIED: 1} and got["tied_with"] == 2 and got["chosen"] == "p"

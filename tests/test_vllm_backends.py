"""The vllm writer, answerer and likelihood path (issue 51) on the CPU: what they hand vLLM
is the transformers path's own prompt, token for token, and what vLLM hands back is read
right. vLLM itself needs a GPU: a stand-in module records the engine's arguments and
answers; the real engine runs in tests/test_gpu_real.py (gpu-marked)."""

import math
import os
import types

import numpy as np
import pytest
from fake_vllm import FakeEngine, install

from autocomp.captions.llm import row_seed
from autocomp.captions.prompts import contextual_prompt
from autocomp.captions.vllm_writer import VLLMWriter
from autocomp.captions.writers import CaptionRequest
from autocomp.concepts.load import load_task
from autocomp.concepts.sampling import sample_concepts
from autocomp.models import vllm_engine
from autocomp.validators.vqa_vllm import VLLMAnswerer, image_prompts


@pytest.fixture(scope="module")
def requests_():
    task = load_task("shape_color")
    out = []
    for c in sample_concepts(task, 2, 3, seed=0):
        system, user = contextual_prompt(c.graph, task, 0)
        out.append(CaptionRequest(c.id, c.graph, task, c.seed, 0, system, user))
    return out


@pytest.fixture
def fake_vllm(monkeypatch):
    return install(monkeypatch)


def test_writer_prompts_are_the_transformers_writers_tokens(tiny_backends, requests_):
    from autocomp.models.loading import load_causal_lm

    tok, _ = load_causal_lm(str(tiny_backends["gemma_lm"]), "cpu")
    w = VLLMWriter(model="m", max_new_tokens=9)
    prompts, params = w.requests(tok, requests_)
    # the transformers writer's batch: the same texts, left-padded; unpadded, the same ids
    from autocomp.captions.llm import chat_texts

    enc = tok(chat_texts(tok, requests_), return_tensors="pt", padding=True,
              add_special_tokens=False)
    for prompt, ids, mask in zip(prompts, enc["input_ids"], enc["attention_mask"],
                                 strict=True):
        assert prompt["prompt_token_ids"] == ids[mask.bool()].tolist()
    assert [p["prompt_token_ids"][0] for p in prompts] == [tok.bos_token_id] * len(prompts)
    assert sum(p["prompt_token_ids"].count(tok.bos_token_id) for p in prompts) == len(prompts)
    # the paper's sampling, a seed per concept and attempt (never per batch)
    assert params == [{"temperature": 0.7, "top_p": 0.9, "max_tokens": 9,
                       "seed": row_seed(r.id, r.seed, r.attempt)} for r in requests_]


def test_writer_runs_one_engine_on_its_gpu_and_stops_it(fake_vllm, tiny_backends, requests_,
                                                        monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,5,6,7")
    monkeypatch.delenv("VLLM_BATCH_INVARIANT", raising=False)
    model = str(tiny_backends["gemma_lm"])
    w = VLLMWriter(model=model, device="cuda:1")
    got = w.write(requests_)
    engine = FakeEngine.made[0]
    prompts, params = w.requests(engine.get_tokenizer(), requests_)
    assert engine.calls[0] == (prompts, params)  # the whole batch handed at once
    assert all(c.startswith("answer ") for c in got) and len(set(got)) == 3  # cleaned
    assert w.write(requests_[:1]) == got[:1] and len(FakeEngine.made) == 1
    assert engine.kwargs == {"model": model, "dtype": "bfloat16",
                             "gpu_memory_utilization": 0.85, "max_model_len": 4096,
                             "trust_remote_code": False, "seed": 0}
    # the engine's worker sees the rank's GPU alone; the process's own list is kept
    assert engine.visible == "5" and os.environ["CUDA_VISIBLE_DEVICES"] == "4,5,6,7"
    # issue 66: vLLM's batch-invariant kernels, so a seeded caption does not change with
    # the requests that share its steps (an option: batch_invariant: false for speed)
    assert engine.invariant == "1"
    w.close()
    assert engine.stopped and w._engine is None
    monkeypatch.delenv("VLLM_BATCH_INVARIANT")
    VLLMWriter(model=model, device="cuda:1", batch_invariant=False).write(requests_[:1])
    assert FakeEngine.made[-1].invariant is None


def test_engines_of_one_node_start_staggered_by_local_rank(monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "8")
    monkeypatch.setenv("LOCAL_RANK", "3")
    monkeypatch.delenv("AUTOCOMP_ENGINE_STAGGER", raising=False)
    assert vllm_engine.stagger() == 30.0
    monkeypatch.setenv("AUTOCOMP_ENGINE_STAGGER", "2.5")
    assert vllm_engine.stagger() == 7.5
    monkeypatch.setenv("WORLD_SIZE", "1")
    assert vllm_engine.stagger() == 0.0  # one process: nothing to stagger


def test_a_rank_compiles_into_its_own_local_caches_with_its_share_of_cpus():
    from autocomp.runtime.local import rank_environment

    env = {"AUTOCOMP_LOCAL_DIR": "/local/autocomp-4242", "LOCAL_RANK": "5",
           "AUTOCOMP_CPUS_PER_RANK": "4"}
    assert rank_environment(env) == {
        "TORCHINDUCTOR_CACHE_DIR": "/local/autocomp-4242/rank-5/inductor",
        "TRITON_CACHE_DIR": "/local/autocomp-4242/rank-5/triton",
        "VLLM_CACHE_ROOT": "/local/autocomp-4242/rank-5/vllm",
        "TORCHINDUCTOR_COMPILE_THREADS": "4"}
    mine = {**env, "TORCHINDUCTOR_COMPILE_THREADS": "16"}  # the user's own setting wins
    assert "TORCHINDUCTOR_COMPILE_THREADS" not in rank_environment(mine)
    assert rank_environment({}) == {}  # not under the job script: nothing set


def test_ranks_load_their_models_staggered_when_asked():
    from autocomp.runtime.local import load_delay

    assert load_delay({"LOCAL_RANK": "5"}) == 0.0  # default: all at once
    assert load_delay({"LOCAL_RANK": "5", "AUTOCOMP_LOAD_STAGGER": "60"}) == 300.0
    assert load_delay({"LOCAL_RANK": "0", "AUTOCOMP_LOAD_STAGGER": "60"}) == 0.0
    assert load_delay({"LOCAL_RANK": "2", "AUTOCOMP_LOAD_STAGGER": "x"}) == 0.0


def test_the_run_config_takes_vllm_and_the_plan_costs_it(tmp_path):
    from pathlib import Path

    import yaml
    from click.testing import CliRunner

    from autocomp.cli import main

    root = Path(__file__).resolve().parents[1]
    cfg = yaml.safe_load((root / "configs" / "autocomp-cp.yaml").read_text())
    cfg["captions"]["writer"] = "vllm"
    cfg["captions"]["options"] = {"model": "google/gemma-3-12b-it", "max_new_tokens": 150,
                                  "gpu_memory_utilization": 0.9}
    path = tmp_path / "cp-vllm.yaml"
    path.write_text(yaml.safe_dump(cfg))
    out = CliRunner().invoke(main, ["run", str(path), "--dry-run", "--gpu", "H100"])
    assert out.exit_code == 0, out.output
    row = next(line for line in out.output.splitlines()
               if line.strip().startswith("captions "))  # the stage's row
    assert " vllm " in row
    writers = out.output.split("The captions stage by writer")[1].splitlines()[1:3]
    hf, served = (float(line.split("H100 ")[1].split("-")[0]) for line in writers)
    assert writers[0].lstrip().startswith("transformers") and served < hf / 3
    assert "generate 16 prompts at a time" in writers[0]  # its default: the config has none
    assert "256 requests at once (captions.batch_size)" in writers[1]
    # an option of another backend is one line naming the field
    cfg["captions"]["options"]["batch_size"] = 32
    path.write_text(yaml.safe_dump(cfg))
    out = CliRunner().invoke(main, ["run", str(path), "--dry-run"])
    assert out.exit_code != 0 and "batch_size" in out.output


def test_answerer_prompts_are_the_transformers_answerers(tiny_backends):
    from autocomp.models.loading import chat_padding, load_processor

    proc = load_processor(str(tiny_backends["gemma_vlm"]))
    pil = __import__("PIL.Image").Image.fromarray(np.full((32, 32, 3), 200, np.uint8))
    pairs = [(pil, "What color is the cube?"), (pil, "Is there a sphere?")]
    prompts, counts = image_prompts(proc, pairs)
    assert counts == [0, 0] and all(p["multi_modal_data"]["image"] is pil for p in prompts)
    tok = proc.tokenizer
    for (image, text), prompt in zip(pairs, prompts, strict=True):
        conv = [{"role": "user", "content": [{"type": "image", "image": image},
                                             {"type": "text", "text": text}]}]
        ours = tok.decode(prompt["prompt_token_ids"])
        # the processor expands the image placeholder of our text exactly as it does for
        # the transformers answerer's own chat
        theirs = proc.apply_chat_template([conv], tokenize=True, return_dict=True,
                                          add_generation_prompt=True, **chat_padding(proc))
        again = proc(text=[ours], images=[image])
        assert again["input_ids"][0] == list(theirs["input_ids"][0])
    # a scored continuation: its own tokens appended (models/likelihood.py's rule)
    scored, counts = image_prompts(proc, pairs, ["Yes", "a red cube"])
    for plain, with_answer, answer, n in zip(prompts, scored, ["Yes", "a red cube"], counts,
                                             strict=True):
        own = tok(answer, add_special_tokens=False)["input_ids"]
        assert with_answer["prompt_token_ids"] == plain["prompt_token_ids"] + own
        assert n == len(own)


def test_prompt_logprobs_are_read_for_the_continuation_only(fake_vllm, monkeypatch):
    logprob = types.SimpleNamespace
    out = types.SimpleNamespace(prompt_token_ids=[2, 10, 11, 12],
                                prompt_logprobs=[None, {10: logprob(logprob=-1.0)},
                                                 {11: logprob(logprob=-0.5), 3: logprob(
                                                     logprob=-2.0)},
                                                 {12: logprob(logprob=-0.25)}])
    assert vllm_engine.continuation_logprobs(out, 2) == [-0.5, -0.25]
    from autocomp.core.errors import AutocompError

    with pytest.raises(AutocompError, match="prompt_logprobs"):
        vllm_engine.continuation_logprobs(types.SimpleNamespace(
            prompt_token_ids=[2, 10], prompt_logprobs=None), 1)
    # VQAScore through vllm: P("Yes") is the product of its tokens' probabilities
    from autocomp.eval.scorers.likelihood import VQAScore

    monkeypatch.setattr(VLLMAnswerer, "reply_logprobs",
                        lambda self, rows: [[-0.1, -0.2]] * len(rows))
    scorer = VQAScore("vllm:google/gemma-3-12b-it", device="cpu")
    pil = object()
    got = scorer.score_pairs([(pil, ["a red cube", "a blue cube"])])
    assert got[0].tolist() == [math.exp(-0.3)] * 2 and scorer.stats["pairs"] == 2


def test_soft_answers_sum_the_expected_answers_spellings(monkeypatch):
    """Soft-TIFA's probability of an expected answer through vllm: the reply as written
    and capitalised, each the product of its tokens' probabilities, summed per question."""
    from autocomp.concepts.questions import Question

    logprobs = {"yes": [-1.0, -0.5], "Yes": [-2.0], "red": [-3.0], "Red": [-0.5, -0.5]}
    seen = []

    def reply_logprobs(self, rows):
        seen.extend(reply for _, _, reply in rows)
        return [logprobs[reply] for _, _, reply in rows]

    monkeypatch.setattr(VLLMAnswerer, "reply_logprobs", reply_logprobs)
    image = np.zeros((8, 8, 3), np.uint8)
    qs = [Question("Is there a cube?", ("yes", "no"), "yes", "cube", reads="presence"),
          Question("What color is the cube?", ("red", "blue"), "red", "cube")]
    got = VLLMAnswerer("m").expected_probabilities([(image, qs, []), (image, qs[1:], [])])
    assert seen == ["yes", "Yes", "red", "Red", "red", "Red"]
    red = math.exp(-3.0) + math.exp(-1.0)
    assert got == [[pytest.approx(math.exp(-1.5) + math.exp(-2.0)), pytest.approx(red)],
                   [pytest.approx(red)]]


def test_device_names_map_to_the_gpu_the_engine_sees(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert vllm_engine._physical("cuda:2") == "2" and vllm_engine._physical("cuda") is None
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,1")
    assert vllm_engine._physical("cuda:1") == "1"
    from autocomp.core.errors import AutocompError

    with pytest.raises(AutocompError, match="lists 2"):
        vllm_engine._physical("cuda:2")

"""The real backends (diffusers, transformers LLM/VLM, GroundingDINO + SAM2, openai), wired
to tiny random models or a local fake server: loading, seeds, batching, error paths. Their
quality logic (prompt, cleaning, label matching, counting) is tested as plain functions."""

import json
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from autocomp.captions.chat import clean_caption
from autocomp.captions.llm import TransformersWriter
from autocomp.captions.openai_writer import OpenAIWriter
from autocomp.captions.writers import CaptionRequest, write_with_retries
from autocomp.cli import main
from autocomp.concepts.load import load_task
from autocomp.concepts.sampling import sample_concepts
from autocomp.core.errors import AutocompError
from autocomp.synth.base import ImageRequest
from autocomp.synth.diffusers_gen import DiffusersGenerator
from autocomp.validators.grounded_sam import GroundedSam2Detector, grounding_prompt, match_label
from autocomp.validators.vqa import OpenAIAnswerer, TransformersAnswerer


@pytest.fixture(scope="module")
def concepts():
    task = load_task("shape_color")
    return task, sample_concepts(task, 2, 3, seed=0)


def _png(img):
    import io

    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


# -- plain functions -----------------------------------------------------------------------
def test_clean_caption():
    assert clean_caption('Caption: "A red cube sits on a table."\n\nNote: ...') == \
        "A red cube sits on a table."
    assert clean_caption("**Caption:** A  red cube.") == "A red cube."
    assert clean_caption("“A red cube.”") == "A red cube."
    assert clean_caption(None) == "" and clean_caption("\n\n") == ""


def test_grounding_prompt_and_labels():
    assert grounding_prompt(["Chair", "tape measure", "chair"]) == "chair. tape measure."
    names = ["tape measure", "tape", "chair"]
    assert match_label("tape measure", names) == "tape measure"
    assert match_label("tape", names) == "tape"
    assert match_label("measure tape", names) == "tape measure"
    assert match_label("chair lamp", names) == "chair"
    assert match_label("lamp", names) is None and match_label("", names) is None


# -- diffusers -------------------------------------------------------------------------------
def test_diffusers_seeds_batches_and_record(tiny_backends, concepts):
    task, cs = concepts
    gen = DiffusersGenerator(model=str(tiny_backends["sd3"]), size=32, steps=2, device="cpu")
    reqs = [ImageRequest(c.id, c.graph, task, "minimal", c.seed, "a red cube") for c in cs]
    batch = gen.generate(reqs)
    single = [gen.generate([r])[0] for r in reqs]
    for b, s in zip(batch, single, strict=True):  # equal up to float rounding across batch sizes
        diff = np.abs(np.asarray(b.image, int) - np.asarray(s.image, int))
        assert diff.max() <= 2 and diff.mean() < 0.05
    again = gen.generate(reqs)
    assert [_png(b.image) for b in batch] == [_png(a.image) for a in again]
    assert batch[0].image.size == (32, 32) and batch[0].image.mode == "RGB"
    assert len({_png(b.image) for b in batch}) == 3  # three seeds, three images
    ctx = gen.generate([ImageRequest(cs[0].id, cs[0].graph, task, "contextual", cs[0].seed,
                                     "a red cube")])[0]
    assert _png(ctx.image) == _png(batch[0].image)  # same seed and prompt, same image
    meta = batch[0].meta
    assert meta["seed"] == cs[0].seed and meta["steps"] == 2 and meta["guidance"] == 4.5
    assert meta["revision"].startswith("local:") and meta["dtype"] == "float32"


def test_diffusers_defaults_are_the_papers():
    g = DiffusersGenerator()
    assert (g.model, g.size, g.steps, g.guidance) == (
        "stabilityai/stable-diffusion-3.5-large", 1024, 28, 4.5)


def test_diffusers_missing_model_one_line(tmp_path):
    gen = DiffusersGenerator(model=str(tmp_path / "nothing"), device="cpu")
    with pytest.raises(AutocompError, match="no such folder .*nothing \\(point generate"
                                            ".options.model: DIR at a folder that exists"):
        gen.pipeline()  # a path, not a hub id: no `hf download` of a path
    gen = DiffusersGenerator(model="someone/not-downloaded", device="cpu")
    with pytest.raises(AutocompError, match="hf download someone/not-downloaded "
                                            "--local-dir DIR"):
        gen.pipeline()


# -- transformers caption writer ------------------------------------------------------------
def test_llm_writer_decodes_only_new_tokens_and_reseeds_retries(tiny_backends, concepts):
    task, cs = concepts
    w = TransformersWriter(model=str(tiny_backends["gemma_lm"]), max_new_tokens=6,
                           device="cpu", batch_size=2)

    def reqs(attempt):
        from autocomp.captions.prompts import contextual_prompt

        out = []
        for c in cs:
            system, user = contextual_prompt(c.graph, task, attempt)
            out.append(CaptionRequest(c.id, c.graph, task, c.seed, attempt, system, user))
        return out

    first, again = w.write(reqs(0)), w.write(reqs(0))
    assert first == again  # seeded
    assert w.draws >= 2 * 6 * len(cs) and 0 <= w.wide <= w.draws  # drawn by RowSampler
    assert w.write(reqs(1)) != first  # a retry samples anew
    # seeded per concept, not per batch: alone, or in a batch of another size and order
    alone = [w.write([r])[0] for r in reqs(0)]
    w.batch_size = 3
    reordered = w.write(list(reversed(reqs(0))))[::-1]
    assert alone == first == reordered and len(set(first)) > 1
    for caption in first:
        assert "expert image caption writer" not in caption and "<start_of_turn>" not in caption
    # a random model never passes the check: every concept is dropped after its retries
    out = write_with_retries(w, [(c.id, c.graph, task, c.seed) for c in cs], retries=1)
    assert all(v["caption"] is None and v["attempts"] == 2 for v in out.values())


def test_remote_code_and_missing_models_are_one_clear_line(tmp_path):

    (tmp_path / "config.json").write_text(json.dumps({
        "model_type": "my-custom", "auto_map": {"AutoConfig": "configuration_my.MyConfig",
                                                "AutoModelForCausalLM": "modeling_my.My"}}))
    for backend in (TransformersWriter(model=str(tmp_path), device="cpu"),
                    TransformersAnswerer(model=str(tmp_path), device="cpu")):
        with pytest.raises(AutocompError, match="needs its own remote code.*trust_remote_code: "
                                                "true"):
            backend._load()
    missing = TransformersWriter(model="someone/not-here", device="cpu")
    with pytest.raises(AutocompError) as err:
        missing._load()
    assert "hf download someone/not-here --local-dir DIR" in str(err.value)
    assert "\n" not in str(err.value)


# -- GroundingDINO + SAM2 --------------------------------------------------------------------
def test_grounded_sam_detections_have_masks(tiny_backends):
    det = GroundedSam2Detector(detector_model=str(tiny_backends["dino"]),
                               segmenter_model=str(tiny_backends["sam2"]), box_threshold=0.0,
                               text_threshold=0.0, device="cpu")
    img = np.full((48, 64, 3), 255, np.uint8)
    img[10:30, 10:30] = (255, 0, 0)
    dets = det.detect(img, ["cube", "sphere"])
    assert dets
    for d in dets:
        assert d.mask.shape == (48, 64) and d.mask.dtype == bool
        assert d.label in (None, "cube", "sphere")
        assert 0 <= d.box[0] <= d.box[2] <= 64 and 0 <= d.box[1] <= d.box[3] <= 48
        assert "mask_area" in d.to_dict()
    strict = GroundedSam2Detector(detector_model=str(tiny_backends["dino"]),
                                  segmenter_model=str(tiny_backends["sam2"]),
                                  box_threshold=1.0, device="cpu")
    assert strict.detect(img, ["cube"]) == []


# -- VQA -------------------------------------------------------------------------------------
def test_vlm_answerer_batch_equals_one_by_one(tiny_backends, concepts):
    task, cs = concepts
    ans = TransformersAnswerer(model=str(tiny_backends["gemma_vlm"]), max_new_tokens=4,
                               device="cpu")
    img = np.full((32, 32, 3), 200, np.uint8)
    qs = task.questions(cs[0].graph)
    batch = ans.answer(img, qs)
    assert [a["answer"] for a in batch] == [ans.answer(img, [q])[0]["answer"] for q in qs]
    assert all("What color" not in a["answer"] for a in batch)  # generated tokens only


# -- openai-compatible server -------------------------------------------------------------
def _writer(server, **kw):
    return OpenAIWriter(model="gemma", base_url=server.url, **{"max_retries": 2, "timeout": 5,
                                                                **kw})


def test_openai_writer_captions_pass_the_check(fake_openai, concepts):
    task, cs = concepts
    out = write_with_retries(_writer(fake_openai), [(c.id, c.graph, task, c.seed) for c in cs],
                             retries=0)
    assert all(v["caption"] for v in out.values()), out
    sent = fake_openai.requests[0]
    assert sent["temperature"] == 0.7 and sent["top_p"] == 0.9 and sent["max_tokens"] == 150
    assert sent["messages"][0]["role"] == "system" and "seed" in sent


def test_openai_retries_5xx_and_reads_malformed_answers_as_failures(fake_openai, concepts):
    task, cs = concepts
    fake_openai.script = ["500", "500"]
    w = _writer(fake_openai, concurrency=1)
    out = write_with_retries(w, [(cs[0].id, cs[0].graph, task, cs[0].seed)], retries=0)
    assert out[cs[0].id]["caption"]  # two 5xx, then a good answer
    fake_openai.script = ["malformed", "empty"]
    out = write_with_retries(w, [(cs[0].id, cs[0].graph, task, cs[0].seed)], retries=2)
    assert out[cs[0].id]["attempts"] == 3 and out[cs[0].id]["caption"]
    assert [t["caption"] for t in out[cs[0].id]["tried"]] == ["", ""]


def test_openai_errors_are_one_clear_line(fake_openai, concepts):
    task, cs = concepts
    req = [CaptionRequest(cs[0].id, cs[0].graph, task, cs[0].seed, 0, "s", "u")]
    fake_openai.script = ["500"] * 5
    with pytest.raises(AutocompError, match=r"failed \(500: .*\) after 1 retries: it is "
                                            "overloaded or broken"):
        _writer(fake_openai, max_retries=1).write(req)
    fake_openai.script = ["timeout"] * 3
    with pytest.raises(AutocompError, match=r"did not answer within 0.3 s \(2 tries, "):
        OpenAIWriter(model="m", base_url=fake_openai.url, timeout=0.3, max_retries=1).write(req)
    closed = fake_openai.url
    fake_openai.close()
    with pytest.raises(AutocompError, match=f"cannot reach the chat server at {closed}"):
        OpenAIWriter(model="m", base_url=closed, max_retries=0).write(req)
    fake_openai.close = lambda: None


def test_openai_answerer_sends_the_image_as_data_url(fake_openai, concepts):
    task, cs = concepts
    ans = OpenAIAnswerer(model="vlm", base_url=fake_openai.url)
    out = ans.answer(np.zeros((8, 8, 3), np.uint8), task.questions(cs[0].graph))
    assert [a["answer"] for a in out] == ["red", "red"]
    content = fake_openai.requests[0]["messages"][0]["content"]
    assert content[0]["image_url"]["url"].startswith("data:image/png;base64,")
    assert fake_openai.requests[0]["temperature"] == 0.0


def test_help_still_imports_nothing_heavy():
    code = ("import sys; from autocomp.cli import main\n"
            "try:\n    main(['run', '--help'])\nexcept SystemExit:\n    pass\n"
            "print([m for m in ('torch', 'diffusers', 'transformers', 'openai') "
            "if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip().endswith("[]")


def test_dry_run_plan_uses_the_papers_costs_or_measured_ones(tmp_path):


    out = CliRunner().invoke(main, ["run", "autocomp-cp", "--dry-run"])
    assert out.exit_code == 0, out.output
    assert "404,700 concepts, up to 809,400 images" in out.output
    assert "stabilityai/stable-diffusion-3.5-large" in out.output
    assert "google/gemma-3-12b-it" in out.output and "grounding-dino-tiny" in out.output
    images = next(line for line in out.output.splitlines() if line.strip().startswith("images"))
    assert "1100.78" in images  # 809,400 images x 4.896 s (8.5 h x 16 GPUs / 100k)
    cost = tmp_path / "cost.json"
    cost.write_text('{"device": "H100", "gpu_seconds": {"image": 1.0, "caption": 0.0, '
                    '"detect": 0.0, "vqa": 0.0}}')
    out = CliRunner().invoke(main, ["run", "autocomp-cp", "--dry-run", "--cost", str(cost),
                                    "--processes", "16"])
    assert "Expected (measured per unit in" in out.output
    assert "224.8 GPU-hours, about 14.1 h on 16 GPU(s)" in out.output
    assert not (tmp_path / "runs").exists()


def test_sam2_is_skipped_unless_a_check_reads_masks(tiny_backends, tmp_path):
    """The paper's background region is the boxes: SAM2 is neither loaded nor run; with
    region masks it is."""
    from autocomp.config import parse_config
    from autocomp.run import Run
    from autocomp.validators.stage import ValidateStage

    options = {"detector_model": str(tiny_backends["dino"]),
               "segmenter_model": str(tiny_backends["sam2"]), "box_threshold": 0.0,
               "text_threshold": 0.0, "device": "cpu"}
    img = np.full((48, 64, 3), 255, np.uint8)
    img[10:30, 10:30] = (255, 0, 0)
    for region, segmented in (("boxes", False), ("masks", True)):
        cfg = parse_config({"concepts": [{"task": "shape_color", "n": [2], "count": 1}],
                            "validate": {"detector": "grounding-dino+sam2",
                                         "detector_options": options,
                                         "background": {"region": region}}})
        stage = ValidateStage(Run.create(cfg, tmp_path / region))
        dets = stage.detector.detect(img, ["cube", "sphere"])
        assert dets and (stage.detector._sam is not None) == segmented
        assert all((d.mask is not None) == segmented for d in dets)


def test_grounding_dino_batches_images_and_agrees_with_one_by_one(tiny_backends):
    det = GroundedSam2Detector(detector_model=str(tiny_backends["dino"]),
                               segmenter_model=str(tiny_backends["sam2"]), box_threshold=0.0,
                               text_threshold=0.0, device="cpu", masks=False)
    images, labels = [], [["cube", "sphere"], ["cone"], ["torus", "cube", "prism"]]
    for k in range(3):
        img = np.full((48, 64, 3), 255, np.uint8)
        img[5 + 5 * k:30, 10:30 + 8 * k] = (200, 40 * k, 30)
        images.append(img)
    batched = det.detect_many(images, labels)
    single = [det.detect(im, names) for im, names in zip(images, labels, strict=True)]
    assert [len(b) for b in batched] == [len(s) for s in single] and any(batched)
    for b, s in zip(batched, single, strict=True):
        for x, y in zip(b, s, strict=True):
            assert x.label == y.label and abs(x.score - y.score) < 1e-3
            assert max(abs(p - q) for p, q in zip(x.box, y.box, strict=True)) <= 1


@pytest.mark.skipif(__import__("importlib").util.find_spec("vllm") is not None,
                    reason="vllm is installed here")
def test_every_vllm_backend_without_vllm_is_one_line_naming_its_extra(demo_run, concepts,
                                                                     tmp_path):
    """Issue 68: a bare `from vllm import` ran before the require() check: every vllm
    backend crashed with ModuleNotFoundError (exit 70, which the sbatch requeues)."""
    from PIL import Image

    from autocomp.captions.vllm_writer import VLLMWriter
    from autocomp.validators.vqa_vllm import VLLMAnswerer

    image = Image.new("RGB", (4, 4))
    task, cs = concepts
    request = CaptionRequest(cs[0].id, cs[0].graph, task, cs[0].seed, 0, "s", "u")
    for call in (lambda: VLLMAnswerer("m").ask([(image, "q")]),
                 lambda: VLLMAnswerer("m").reply_logprobs([(image, "q", "yes")]),
                 lambda: VLLMWriter("m").write([request])):
        with pytest.raises(AutocompError, match=r"^a vllm backend needs vllm: pip install "):
            call()
    got = CliRunner().invoke(main, ["eval", str(demo_run), "--model", "vqascore:vllm:m",
                                    "--benchmark", "shape_color-n2/minimal-swap", "-o",
                                    str(tmp_path / "r")])
    assert got.exit_code not in (0, 70) and "a vllm backend needs vllm" in got.output
    assert "Traceback" not in got.output


def test_a_vllm_config_without_vllm_is_named_by_the_dry_run_and_refused_before_concepts(
        tmp_path, monkeypatch):
    """Issue 68: the vLLM config's dry-run did not say vllm was missing; the run sampled its
    concepts first and failed at the captions stage. vllm made unimportable (here and on a
    node that has it)."""
    import sys



    monkeypatch.setitem(sys.modules, "vllm", None)
    got = CliRunner().invoke(main, ["run", "configs/autocomp-cp-vllm.yaml", "--dry-run"])
    assert got.exit_code == 0, got.output
    assert ("Not installed on this machine (install them where the run goes):\n"
            "  captions.writer 'vllm' needs vllm: pip install 'autocomp[vllm]'\n"
            "  validate.answerer 'vllm' needs vllm: pip install 'autocomp[vllm]'\n") \
        in got.output
    config = tmp_path / "small.yaml"
    config.write_text("name: small\nconcepts:\n  - {task: shape_color, n: [1], count: 3}\n"
                      "captions:\n  writer: vllm\n  options: {model: m}\n")
    got = CliRunner().invoke(main, ["run", str(config), "--output", str(tmp_path / "r")])
    assert got.exit_code == 1
    assert "1 backend(s) of this run are not installed here: captions.writer 'vllm' needs " \
           "vllm: pip install 'autocomp[vllm]'" in got.output
    assert not (tmp_path / "r" / "concepts").exists() or not any(
        (tmp_path / "r" / "concepts").iterdir())
    no_gpu = CliRunner().invoke(main, ["run", "demo", "--dry-run"])
    assert "Not installed" not in no_gpu.output  # embedded backends need no extra


def test_a_silent_chat_server_is_given_up_after_two_timeouts(fake_openai, monkeypatch):
    """Issue 68: a hanging server was waited on for 753 s (a timeout retried like an
    overload, max_retries times) and the advice named a timeout `vqascore:openai:` cannot
    set. Now a timeout is retried once, the line says how long it waited, and
    AUTOCOMP_CHAT_TIMEOUT sets it where the backend takes no options."""
    from autocomp.models.chat import TIMEOUT_ENV, ChatClient

    monkeypatch.setenv(TIMEOUT_ENV, "0.3")
    client = ChatClient("m", base_url=fake_openai.url, max_retries=5)
    assert client.timeout == 0.3
    fake_openai.script = ["timeout"] * 6
    with pytest.raises(AutocompError) as err:
        client.complete([{"role": "user", "content": "hi"}])
    assert "did not answer within 0.3 s (2 tries, " in str(err.value)
    assert f"for eval scorers {TIMEOUT_ENV}=SECONDS" in str(err.value)
    assert len(fake_openai.requests) == 2  # not six
    monkeypatch.setenv(TIMEOUT_ENV, "soon")
    with pytest.raises(AutocompError, match=f"{TIMEOUT_ENV}='soon': a number of seconds"):
        ChatClient("m", base_url=fake_openai.url)


def test_api_key_env_that_is_not_a_key_warns():
    import warnings

    from autocomp.models.chat import ChatClient

    with pytest.warns(UserWarning, match="AWS_SECRET_ACCESS_KEY.*is sent to http://x/v1"):
        ChatClient("m", "http://x/v1", api_key_env="AWS_SECRET_ACCESS_KEY")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ChatClient("m", "http://x/v1", api_key_env="TOGETHER_API_KEY")
        ChatClient("m", "http://x/v1", api_key_env="HF_TOKEN")

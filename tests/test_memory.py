"""GPU memory as a plan: every stage's models are freed when the stage ends (weak
references to them must be dead before the next stage starts), and the per-stage plan."""

import re
import weakref
from pathlib import Path

import pytest

from autocomp.runtime import runner

CONFIG = """
name: release
seed: 3
concepts:
  - {{task: shape_color, n: [2], count: 3}}
captions:
  writer: {writer}
  options: {writer_options}
  retries: 0
generate:
  generator: diffusers
  options: {{model: "{sd3}", size: 32, steps: 1}}
  batch_size: 2
validate:
  detector: grounding-dino+sam2
  detector_options: {{detector_model: "{dino}", segmenter_model: "{sam2}",
                      box_threshold: 0.0, text_threshold: 0.0}}
  answerer: transformers
  answerer_options: {{model: "{vlm}", max_new_tokens: 2}}
  background: {{min_fraction: 0.0, min_gray: 0, region: masks}}
  batch_size: 4
"""


def _modules(obj, depth: int = 3, seen=None) -> list:
    """The torch modules reachable from a backend's attributes (pipelines, pairs)."""
    import torch

    seen = set() if seen is None else seen
    if id(obj) in seen or depth < 0:
        return []
    seen.add(id(obj))
    if isinstance(obj, torch.nn.Module):
        return [obj]
    found = []
    values = (list(obj) if isinstance(obj, (tuple, list)) else
              list(obj.values()) if isinstance(obj, dict) else
              list(getattr(obj, "components", {}).values()) + list(vars(obj).values())
              if hasattr(obj, "__dict__") else [])
    for v in values:
        found += _modules(v, depth - 1, seen)
    return found


@pytest.fixture
def watched(monkeypatch):
    """Weak references to each stage's models, taken as it releases them, and the ones
    still alive once the runner has freed memory after that stage."""
    refs: dict[str, list] = {}
    alive_after: dict[str, int] = {}
    real_free = runner.free_memory
    last = []

    def release(stage):
        held = [getattr(stage, a) for a in ("_writer", "_detector", "_answerer")
                if getattr(stage, a, None)]
        held += list(getattr(stage, "_generators", {}).values())  # the images stage's
        refs[stage.name] = [weakref.ref(m) for b in held for m in _modules(b)]
        last.append(stage.name)
        return original[type(stage)](stage)

    def free():
        real_free()
        if last:
            alive_after[last[-1]] = sum(r() is not None for r in refs[last[-1]])

    original = {}
    from autocomp.captions.stage import CaptionStage
    from autocomp.synth.stage import ImageStage
    from autocomp.validators.stage import ValidateStage

    for cls in (CaptionStage, ImageStage, ValidateStage):
        original[cls] = cls.release
        monkeypatch.setattr(cls, "release", release)
    monkeypatch.setattr(runner, "free_memory", free)
    process = ValidateStage.process

    def load_both(stage, batch):  # random detections rarely reach the VQA check
        stage.answerer._load()
        return process(stage, batch)

    monkeypatch.setattr(ValidateStage, "process", load_both)
    return refs, alive_after


def _run(tmp_path, name, writer, writer_options, tiny):
    from conftest import built_run

    return built_run(tmp_path, CONFIG.format(
        writer=writer, writer_options=writer_options, sd3=tiny["sd3"], dino=tiny["dino"],
        sam2=tiny["sam2"], vlm=tiny["gemma_vlm"]), name)


@pytest.mark.slow
def test_every_stage_frees_its_models_before_the_next_starts(tmp_path, tiny_backends,
                                                             fake_openai, watched):
    refs, alive_after = watched
    # captions from a tiny transformers LM: the writer's model must go with the stage
    _run(tmp_path, "lm", "transformers",
         f'{{model: "{tiny_backends["gemma_lm"]}", max_new_tokens: 4}}', tiny_backends)
    assert len(refs["captions"]) >= 1 and alive_after["captions"] == 0
    # captions from a server (they pass), so images and validation load their models
    run = _run(tmp_path, "served", "openai",
               f'{{model: tiny-chat, base_url: "{fake_openai.url}"}}', tiny_backends)
    assert run.paths.has_records("validation")
    # SD3's transformer, VAE and two text encoders; GroundingDINO, SAM2 and Gemma-3
    assert len(refs["images"]) >= 4 and alive_after["images"] == 0
    assert len(refs["validation"]) >= 3 and alive_after["validation"] == 0


def _request(size_seed=0):
    from autocomp.concepts.load import load_task
    from autocomp.concepts.sampling import sample_concepts
    from autocomp.synth.base import ImageRequest

    task = load_task("shape_color")
    out = []
    for c in sample_concepts(task, 2, 2, seed=size_seed):
        out.append(ImageRequest(c.id, c.graph, task, "minimal", c.seed, "a red cube"))
    return out


def test_vae_decodes_one_image_at_a_time_and_tiles_at_its_own_size(tiny_backends,
                                                                   monkeypatch):
    import numpy as np

    from autocomp.synth.diffusers_gen import DiffusersGenerator

    calls = []
    whole = DiffusersGenerator(model=str(tiny_backends["sd3"]), size=32, steps=1,
                               vae_slicing=False, device="cpu")
    vae = whole.pipeline().vae
    real = type(vae)._decode
    monkeypatch.setattr(type(vae), "_decode",
                        lambda self, z, *a, **k: calls.append(z.shape[0]) or real(self, z, *a,
                                                                                   **k))
    batch = whole.generate(_request())
    assert calls == [2]  # the batch in one call
    calls.clear()
    sliced = DiffusersGenerator(model=str(tiny_backends["sd3"]), size=32, steps=1,
                                device="cpu")
    one = sliced.generate(_request())
    assert calls == [1, 1]  # the default: one image at a time, the same images
    for a, b in zip(batch, one, strict=True):
        assert np.abs(np.asarray(a.image, int) - np.asarray(b.image, int)).max() <= 1

    # the images are as large as the VAE's sample size (32 px here, 1024 px for SD3.5):
    # diffusers' own tiling never applies there; a 16 px tile does
    tiles = []
    real_tiled = type(vae).tiled_decode
    monkeypatch.setattr(type(vae), "tiled_decode", lambda self, z, *a, **k: tiles.append(
        z.shape) or real_tiled(self, z, *a, **k))
    tiled = DiffusersGenerator(model=str(tiny_backends["sd3"]), size=32, steps=1,
                               vae_tiling=True, vae_tile=16, device="cpu")
    out = tiled.generate(_request())
    assert len(tiles) == 2 and out[0].meta["vae_tile"] == 16


def test_detector_and_segmenter_load_in_the_dtype_asked_and_record_it(tiny_backends):
    import numpy as np

    from autocomp.validators.grounded_sam import GroundedSam2Detector

    det = GroundedSam2Detector(detector_model=str(tiny_backends["dino"]),
                               segmenter_model=str(tiny_backends["sam2"]), box_threshold=0.0,
                               text_threshold=0.0, device="cpu", masks=True, dtype="bfloat16")
    image = np.random.default_rng(0).integers(0, 255, (64, 64, 3), dtype=np.uint8)
    found = det.detect_many([image, image], [["cube", "sphere"], ["cone"]])
    assert found[0] and all(d.mask is not None and d.mask.shape == (64, 64) for d in found[0])
    assert det.evidence() == {"detector_model": str(tiny_backends["dino"]),
                              "detector_dtype": "bfloat16",
                              "segmenter_model": str(tiny_backends["sam2"]),
                              "segmenter_dtype": "bfloat16"}
    cpu = GroundedSam2Detector(detector_model=str(tiny_backends["dino"]), device="cpu",
                               masks=False)
    cpu.detect(image, ["cube"])
    assert cpu.evidence() == {"detector_model": str(tiny_backends["dino"]),
                              "detector_dtype": "float32"}


# -- the per-stage plan --------------------------------------------------------------------
CP = Path(__file__).parents[1] / "configs" / "autocomp-cp.yaml"


def _cp(**generate):
    """configs/autocomp-cp.yaml with its generate options changed."""
    import yaml

    from autocomp.config import parse_config

    data = yaml.safe_load(CP.read_text())
    data["generate"]["options"].update(generate)
    return parse_config(data)


def test_sd35_memory_arithmetic():
    from autocomp.planning import memory

    row = next(r for r in memory.stage_rows(_cp()) if r["stage"] == "images")
    # SD3.5-large: 8.06 B transformer, T5-XXL 4.762 B, CLIP-G 0.695 B, CLIP-L 0.124 B,
    # VAE 0.084 B, in bf16
    assert row["weights"] == pytest.approx(13.725e9 * 2 / 2 ** 30)
    tokens = 64 * 64 + 333
    denoise = [2 * 16 * tokens * 2432 * 2 * k / 2 ** 30 for k in (14, 20)]  # measured 16.7
    assert row["activations"] == pytest.approx(denoise)  # sliced decode is smaller
    whole = next(r for r in memory.stage_rows(_cp(vae_slicing=False)) if r["stage"] == "images")
    one = 256 * 1024 * 1024 * 2  # the 256-channel map at full size, bf16
    assert whole["activations"] == pytest.approx(
        [(16 * one * k + 16 * 3 * 1024 ** 2 * 4) / 2 ** 30 for k in (3, 5.5)])
    low, high = (a * 2 ** 30 / 1e9 for a in whole["activations"])
    assert 25 < low < high < 50  # GB, the 25-45 GB for 16 images at once
    tiled = next(r for r in memory.stage_rows(_cp(vae_slicing=False, vae_tiling=True))
                 if r["stage"] == "images")
    assert "tiled" in tiled["what"] and tiled["activations"][1] < whole["activations"][1] / 3


def test_dry_run_prints_each_stages_peak_and_refuses_a_batch_that_does_not_fit(tmp_path):
    import yaml
    from click.testing import CliRunner

    from autocomp.cli import main

    out = CliRunner().invoke(main, ["run", "autocomp-cp", "--dry-run", "--gpu", "A100-80",
                                    "--gpu", "H100"])
    assert out.exit_code == 0, out.output
    for gpu, usable in (("A100-80", "75.2"), ("H100", "74.9")):
        assert f"GPU memory per process on {gpu} ({usable} GiB usable" in out.output
    stages = re.findall(r"^  (captions|images|validation) +\d+\.\d +[\d.]+-[\d.]+ +"
                        r"[\d.]+-[\d.]+ +\d+  yes", out.output, re.M)
    assert stages == ["captions", "images", "validation"] * 2

    # the whole batch through the VAE at once, 32 images: 25.6 GiB of weights + up to
    # 88 GiB of decode on an 80 GB card
    cfg = tmp_path / "big.yaml"
    raw = yaml.safe_load(CP.read_text())
    raw["generate"]["batch_size"] = 32
    raw["generate"]["options"]["vae_slicing"] = False
    cfg.write_text(yaml.safe_dump(raw))
    out = CliRunner().invoke(main, ["run", str(cfg), "--dry-run", "--gpu", "A100-80"])
    assert out.exit_code == 80  # refused for memory, as the table says (issue 68: 1)
    assert ("REFUSED: stage images needs up to 113.9 GiB at generate.batch_size 32, more than "
            "the 75.2 GiB usable on A100-80: set generate.batch_size: 17") in out.output
    assert "does not fit the GPU's memory" in out.output
    out = CliRunner().invoke(main, ["run", str(cfg), "--dry-run", "--gpu", "H200"])
    assert out.exit_code == 0 and "REFUSED" not in out.output
    out = CliRunner().invoke(main, ["run", "demo", "--dry-run"])  # embedded backends
    assert out.exit_code == 0 and "No GPU work: every backend is embedded (CPU)." in out.output
    assert "GPU memory" not in out.output and "Paper, for comparison" not in out.output


def test_weights_are_counted_from_the_models_own_files(tiny_backends):
    import json

    import torch
    from diffusers import DiffusionPipeline

    from autocomp.planning import memory

    counted, source = memory.params(str(tiny_backends["sd3"]))
    pipe = DiffusionPipeline.from_pretrained(str(tiny_backends["sd3"]), text_encoder_3=None,
                                             tokenizer_3=None)
    for name, part in pipe.components.items():
        if isinstance(part, torch.nn.Module):
            assert counted[name] == sum(p.numel() for p in part.state_dict().values())
    assert source == "its weights" and set(counted) == {"transformer", "vae", "text_encoder",
                                                        "text_encoder_2"}
    cfg = json.loads((tiny_backends["gemma_lm"] / "config.json").read_text())
    cfg = cfg.get("text_config", cfg)
    layers, kv, _, hidden, _ = memory.llm_shape(str(tiny_backends["gemma_lm"]))
    assert (layers, kv, hidden) == (cfg["num_hidden_layers"], cfg["num_key_value_heads"],
                                    cfg["hidden_size"])
    assert memory.params("google/gemma-3-12b-it") == ({"model": 12.19e9}, "model card")


def test_a_gpu_run_is_refused_before_any_model_loads(tmp_path, monkeypatch):
    import torch
    import yaml

    from autocomp.config import load_config
    from autocomp.core.errors import AutocompError
    from autocomp.pipeline import check_memory
    from autocomp.run import Run

    raw = yaml.safe_load(CP.read_text())
    raw["generate"]["options"]["vae_slicing"] = False
    (tmp_path / "cp.yaml").write_text(yaml.safe_dump(raw))
    run = Run.create(load_config(tmp_path / "cp.yaml"), tmp_path / "run")

    class Card:
        name, total_memory = "A100-SXM4-40GB", 40960 * 2 ** 20

    free = {"gib": 40.0}
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device: Card)
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device: (
        int(free["gib"] * 2 ** 30), Card.total_memory))
    monkeypatch.setattr(torch.cuda, "list_gpu_processes",
                        lambda device: "GPU:0\nprocess    4242 uses 30000.000 MB GPU memory")
    with pytest.raises(AutocompError, match=r"stage images needs up to .* on A100-SXM4-40GB: "
                                            r"set generate.batch_size: 4"):
        check_memory(run, "cuda:0", ["captions", "images"])
    check_memory(run, "cuda:0", ["concepts", "captions"])  # no image stage here: it fits
    check_memory(run, "cpu", ["images"])  # nothing to check on CPU
    Card.total_memory, free["gib"] = 81920 * 2 ** 20, 80.0
    check_memory(run, "auto", ["images"])  # fits an 80 GB card
    # issue 51: the memory another process holds is not ours to plan with, and is named
    free["gib"] = 50.0
    with pytest.raises(AutocompError, match=r"more than the 46.0 GiB usable on A100-SXM4-40GB "
                                            r"\(29.2 GiB of its 80.0 GiB held by other "
                                            r"processes: process +4242 uses 30000.000 MB"):
        check_memory(run, "auto", ["images"])


def test_bf16_detections_are_thresholded_and_placed_in_float32(tiny_backends, monkeypatch):
    """The model may run in bf16; its scores and boxes reach post-processing in float32."""
    import numpy as np
    import torch

    from autocomp.validators.grounded_sam import GroundedSam2Detector

    det = GroundedSam2Detector(detector_model=str(tiny_backends["dino"]), device="cpu",
                               masks=False, dtype="bfloat16", box_threshold=0.0,
                               text_threshold=0.0)
    (proc, model), _ = det._load()
    seen = []
    real = type(proc).post_process_grounded_object_detection

    def spy(self, outputs, *args, **kwargs):
        seen.append((outputs.logits.dtype, outputs.pred_boxes.dtype))
        return real(self, outputs, *args, **kwargs)

    monkeypatch.setattr(type(proc), "post_process_grounded_object_detection", spy)
    det.detect(np.full((64, 64, 3), 200, np.uint8), ["cube"])
    assert model.dtype == torch.bfloat16 and seen == [(torch.float32, torch.float32)]

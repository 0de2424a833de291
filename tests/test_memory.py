"""GPU memory as a plan: every stage's models are freed when the stage ends (weak
references to them must be dead before the next stage starts), and the per-stage plan."""

import weakref

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
        held = [getattr(stage, a) for a in ("_writer", "_generator", "_detector",
                                            "_answerer") if getattr(stage, a, None)]
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
    assert run.layout.has_records("validation")
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

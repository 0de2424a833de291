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

"""planning/costs.py's FLOP constants (issue 66) are FLOPs (two per multiply-add) of the whole
forward pass, attention included, as torch's FlopCounterMode counts them on the
architectures built from their released configurations (before, GroundingDINO's and SAM2's
were multiply-adds and the vision tower left attention out). All three are counted on the
meta device (no memory, no arithmetic)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "scripts"))


def _count(build, *inputs, device="meta", call=None):
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    with torch.device(device):
        model = build().eval()
    model.to(device)
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        if call is None:
            model(*inputs)
        else:
            call(model, *inputs)
    return counter.get_total_flops()


@pytest.mark.slow  # two full-size architectures on the meta device (~5 s; the inner loop's)
def test_sam2_image_encoder_and_vision_tower_flops_are_counted():
    import torch
    import transformers as T
    from gpu_check import sam2_config

    from autocomp.planning import costs

    sam2 = _count(lambda: T.Sam2Model(sam2_config(tiny=False)),
                  torch.empty(1, 3, 1024, 1024, device="meta"),
                  call=lambda m, x: m.get_image_embeddings(x))
    assert sam2 == pytest.approx(costs.SAM2_LARGE, rel=0.005)
    tower = _count(lambda: T.SiglipVisionModel(T.SiglipVisionConfig(  # Gemma-3's SigLIP
        hidden_size=1152, intermediate_size=4304, num_hidden_layers=27,
        num_attention_heads=16, image_size=896, patch_size=14)),
        torch.empty(1, 3, 896, 896, device="meta"))
    assert tower == pytest.approx(costs.VISION_TOWER, rel=0.005)
    attention = 4 * 4096 ** 2 * 1152 * 27  # QK^T and AV over 4,096 tokens, 27 layers
    assert attention == pytest.approx(2.09e12, rel=0.01) and tower > 3.3e12 + 0.9 * attention


def test_grounding_dino_flops_at_the_size_validation_runs_it(monkeypatch):
    """On the meta device with transformers' shape check (it reads a value) switched off:
    the count is within 1% of the same model's real forward on the CPU (0.5035e12, which
    reads its values: 12 s here)."""
    import torch
    import transformers as T
    import transformers.models.grounding_dino.modeling_grounding_dino as dino

    from autocomp.planning import costs

    monkeypatch.setattr(dino, "torch_compilable_check", lambda *a, **k: None)
    flops = _count(lambda: T.GroundingDinoForObjectDetection(T.GroundingDinoConfig()),
                   call=lambda m: m(pixel_values=torch.empty(1, 3, 800, 800, device="meta"),
                                    input_ids=torch.ones(1, 16, dtype=torch.long,
                                                         device="meta")))
    assert flops == pytest.approx(costs.DINO_TINY, rel=0.01)

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


@pytest.mark.slow  # FLUX.1's 12B transformer on the meta device (~3 s)
def test_flux_transformer_flops_and_parameters_are_the_plans():
    """FLUX.1-dev's released transformer (19 double- and 38 single-stream blocks, width
    3,072): one pass at 1024 px with 512 T5 tokens counts what costs.DITS plans for a step
    (guidance is an input of the distilled model: one pass, where SD3.5 takes two), and its
    parameters are memory.KNOWN's."""
    import torch
    from diffusers import FluxTransformer2DModel

    from autocomp.planning import costs, memory

    def build():
        return FluxTransformer2DModel(
            patch_size=1, in_channels=64, num_layers=19, num_single_layers=38,
            attention_head_dim=128, num_attention_heads=24, joint_attention_dim=4096,
            pooled_projection_dim=768, guidance_embeds=True, axes_dims_rope=(16, 56, 56))

    image, text = (1024 // 16) ** 2, 512
    meta = {"device": "meta"}
    flops = _count(build, call=lambda m: m(
        hidden_states=torch.empty(1, image, 64, **meta),
        encoder_hidden_states=torch.empty(1, text, 4096, **meta),
        pooled_projections=torch.empty(1, 768, **meta), timestep=torch.empty(1, **meta),
        img_ids=torch.empty(image, 3, **meta), txt_ids=torch.empty(text, 3, **meta),
        guidance=torch.empty(1, **meta)))
    dit = costs.dit_of("black-forest-labs/FLUX.1-dev")
    planned = costs.dit_flops(dit.width, dit.blocks, 1024, 1, 3.5, dit.text_tokens, dit.cfg)
    assert flops == pytest.approx(planned, rel=0.001)  # 74.38 against 74.36 TFLOP
    with torch.device("meta"):
        params = sum(p.numel() for p in build().parameters())
    assert params == pytest.approx(memory.KNOWN["flux.1"]["transformer"], rel=0.001)
    sd35 = costs.dit_of("stabilityai/stable-diffusion-3.5-large")
    assert (sd35.cfg, dit.cfg) == (True, False)

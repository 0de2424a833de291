"""scripts/gpu_check.py (issue 51), the one prepared call a GPU session makes: every
component runs from tiny configurations on the CPU, and the paper's architectures are
built on the meta device (shapes only, no memory) with the parameter counts the memory
plan assumes."""

import json
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "gpu_check.py"


@pytest.mark.slow
def test_gpu_check_tiny_runs_every_component_on_the_cpu(tmp_path, monkeypatch, capsys):
    out = tmp_path / "check.json"
    # the script's main in this process (its imports are the suite's): argv as typed
    monkeypatch.setattr(sys, "argv", [str(SCRIPT), "--tiny", "--out", str(out)])
    assert _script().main() == 0
    got = capsys.readouterr()
    report = json.loads(out.read_text())
    assert report["tiny"] and report["device"] == "cpu"
    # the libraries each number was measured with, recorded beside it
    assert report["software"]["transformers"] and report["software"]["torch"]
    parts = report["components"]
    assert set(parts) == {"sd35_transformer", "sd35_fp8", "t5_xxl", "clip_l", "clip_g",
                          "vae_decode", "gemma3_12b", "gemma3_12b_vllm", "vit_l14",
                          "grounding_dino", "sam2", "host_memory"}
    # vLLM's engine needs a GPU: recorded as skipped, never as measured
    assert parts.pop("gemma3_12b_vllm")["skipped"] == "needs a GPU"
    # issue 66's parts: fp8 linear layers (torch._scaled_mm, row-wise scales) beside bf16,
    # the VAE at 1, 4 and 8 images, the old and the new pipeline load's host memory
    fp8 = parts.pop("sd35_fp8")
    assert "error" not in fp8, fp8.get("trace")
    assert fp8["fp8_impl"] == "scaled_mm" and fp8["fp8_linears"] > 10
    assert fp8["step_s_fp8"] > 0 and fp8["step_s_bf16"] > 0
    assert "step_s_bf16_flash" in fp8 or "bf16_flash_error" in fp8
    assert all(parts["vae_decode"][f"decode_s_per_image_b{n}"] > 0 for n in (1, 4, 8))
    assert parts["grounding_dino"]["size"] == [64, 64]  # tiny; 800 x 800 on a GPU
    host = parts.pop("host_memory")
    assert "error" not in host, host.get("trace")
    assert host["old_t5_dtype"] == host["new_t5_dtype"] == "torch.bfloat16"
    assert host["new_anon_peak_gib"] >= 0 and host["old_anon_peak_gib"] >= 0
    for name, part in parts.items():
        assert "error" not in part, (name, part.get("trace"))
        assert part["dtypes"] == ["bfloat16"] and part["parameters"] > 0  # as on a GPU
        assert part["host_rss_peak_gib"] > 0
    lm = parts["gemma3_12b"]
    # both samplers ran (their step times are differences of wall times: >= 0, never a
    # bound a loaded machine could break)
    assert lm["step_s_before"] >= 0 and lm["step_s_after"] >= 0 and lm["prefill_s_after"] > 0
    assert "11 of 12 components measured; skipped: gemma3_12b_vllm" in got.out


@pytest.mark.slow
def test_gpu_check_builds_the_papers_architectures_with_the_planned_sizes(tmp_path):
    from autocomp.planning.memory import KNOWN

    names = ["sd35_transformer", "t5_xxl", "clip_l", "clip_g", "vae_decode", "sam2"]
    # in this process (no interpreter and imports to start again): the script's own check
    parts = _script().check(names, tiny=False, device="meta")["components"]
    sd35 = KNOWN["stable-diffusion-3.5-large"]
    planned = {"sd35_transformer": sd35["transformer"], "t5_xxl": sd35["text_encoder_3"],
               "clip_l": sd35["text_encoder"], "clip_g": sd35["text_encoder_2"],
               "vae_decode": sd35["vae"], "sam2": KNOWN["sam2.1-hiera-large"]["model"]}
    for name, count in planned.items():
        # the VAE's encoder is built too; SAM2's video memory modules are not (image model)
        assert parts[name]["parameters"] == pytest.approx(count, rel=0.05), name


def test_gpu_check_refuses_an_unwritable_report_before_measuring(tmp_path, monkeypatch,
                                                                capsys):
    """Issue 66: it used to measure for minutes (a GPU session's device time) and only then
    fail to write its JSON; now the report is written first, and after each component."""
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    out = folder / "check.json"
    script = _script()
    ran = []
    monkeypatch.setattr(script, "check", lambda *a, **k: ran.append(a))
    monkeypatch.setattr(sys, "argv", [str(SCRIPT), "--tiny", "--out", str(out)])
    try:
        if os.access(folder, os.W_OK):  # root writes anywhere: a file stands for the folder
            folder.chmod(0o700)
            out = tmp_path / "file" / "check.json"
            (tmp_path / "file").write_text("not a folder")
            monkeypatch.setattr(sys, "argv", [str(SCRIPT), "--tiny", "--out", str(out)])
        assert script.main() == 1
    finally:
        folder.chmod(0o700)
    assert not ran and f"gpu_check: cannot write {out}" in capsys.readouterr().err


def _script():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gpu_check", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_gpu_check_sets_each_measured_number_beside_the_plan():
    check = _script()
    report = {"device": "NVIDIA H100 80GB HBM3", "tiny": False, "components": {
        "sd35_transformer": {"s_per_image_28_steps": 6.0},
        "gemma3_12b": {"step_s_after": 0.065, "prefill_s_after": 0.5},
        "grounding_dino": {"error": "ValueError: no"},
        # memory against autocomp/planning/memory.py at the measured batch: weights from the count
        "sam2": {"parameters": 0.2e9, "batch": 16, "max_allocated_gib": 20.0,
                 "max_reserved_gib": 21.0},
        "vae_decode": {"parameters": 0.08e9, "max_allocated_gib": 2.5,
                       "max_reserved_gib": 2.6}}}
    lines = check.compare(report)
    assert report["plan"] == {"gpu": "H100", "over": ["sd35_transformer.s_per_image_28_steps",
                                                      "sam2.memory"]}
    assert lines[0].startswith("sd35_transformer.s_per_image_28_steps: measured 6 s, plan "
                               "3.206-5.343 s on H100: OVER PLAN")
    assert lines[1].endswith("within plan") and lines[2].endswith("faster than planned")
    # SAM2: 0.37 GiB of weights + 16 images x 0.25-0.6 GiB; the VAE: 0.15 + 1.7-2.9 GiB
    assert lines[4] == ("sam2.memory: allocated 20.0 GiB (reserved 21.0), plan 4.4-10.0 GiB: "
                        "OVER PLAN; reserved 21.0 GiB is 11.0 GiB above the plan's high "
                        "(allocator slack: the plan leaves 5% of the card)")
    assert lines[3] == "vae_decode.memory: allocated 2.5 GiB (reserved 2.6), plan 1.7-2.9 GiB: " \
        "within plan"
    assert len(lines) == 5  # a failed component has nothing to compare
    # the VAE at several batches: each against the plan at that many images at once
    report["components"]["vae_decode"] = {"parameters": 0.08e9, "max_allocated_gib_b1": 2.6,
                                          "max_allocated_gib_b8": 23.0}
    lines = check.compare(report)
    assert "vae_decode (batch 1).memory: allocated 2.6 GiB, plan 1.7-2.9 GiB: within plan" \
        in lines
    assert "vae_decode (batch 8).memory: allocated 23.0 GiB, plan 12.2-22.2 GiB: OVER PLAN" \
        in lines and "vae_decode (batch 8).memory" in report["plan"]["over"]
    assert check.compare({"device": "cpu", "tiny": True, "components": {}}) == []
    # a step below the timer's noise (a loaded CPU) is 0 s with no rate: printed, not a crash
    line = check._line("gemma3_12b", {"parameters": 10, "dtypes": ["bfloat16"],
                                      "step_s_after": 0.0, "tokens_per_s_after": None,
                                      "host_rss_peak_gib": 1.0})
    assert "step_s_after 0," in line and "tokens_per_s" not in line

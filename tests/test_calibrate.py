"""`autocomp run CONFIG --dry-run --calibrate FILE` (issue 51): each unit's GPU seconds
rebuilt from what scripts/gpu_check.py measured, at the config's settings."""

import json
from pathlib import Path

import pytest

from autocomp.core.errors import AutocompError
from autocomp.planning import costs
from autocomp.planning.calibrate import Calibration

ROOT = Path(__file__).resolve().parents[1]
MEASURED = ROOT / "docs" / "measured" / "gpu_check-h200.json"


@pytest.fixture(scope="module")
def data():
    return json.loads(MEASURED.read_text())["components"]


def test_each_unit_is_built_from_the_measured_components(data):
    cal = Calibration(MEASURED)
    assert cal.gpu == "H200" and cal.device == "NVIDIA H200"
    dit, batch = data["sd35_transformer"], data["sd35_transformer"]["batch_images"]
    encoders = 2 * sum(data[c]["forward_s"] / data[c]["batch"]
                       for c in ("t5_xxl", "clip_l", "clip_g"))
    vae = data["vae_decode"]["decode_s_per_image"]
    image = {"model": "stabilityai/stable-diffusion-3.5-large", "steps": 28}
    assert cal.seconds("image", image) == (
        pytest.approx(dit["step_s"] / batch * 28 + encoders + vae), [])
    compiled = cal.seconds("image", {**image, "compile": True})[0]
    assert compiled == pytest.approx(dit["step_s_compiled"] / batch * 28 + encoders + vae)
    assert compiled < cal.seconds("image", image)[0]
    # half the steps: half the denoising; 512 px: the FLOPs' ratio, not a guess
    assert cal.seconds("image", {**image, "steps": 14})[0] == pytest.approx(
        dit["step_s"] / batch * 14 + encoders + vae)
    small = (costs.dit_flops(2432, 38, 512, 1, 4.5) / costs.dit_flops(2432, 38, 1024, 1, 4.5))
    assert cal.seconds("image", {**image, "size": 512})[0] == pytest.approx(
        dit["step_s"] / batch * 28 * small + encoders + vae)

    lm = data["gemma3_12b"]
    per_token = (lm["prefill_s_after"] - lm["step_s_after"]) / (lm["batch"] * lm["prompt_tokens"])
    writer = {"model": "google/gemma-3-12b-it", "batch_size": 32, "max_new_tokens": 150}
    assert cal.seconds("caption", writer)[0] == pytest.approx(
        per_token * 450 + lm["step_s_after"] * 150 / 32)
    detect = data["grounding_dino"]["s_per_image"] + costs.DECODE_PNG
    assert cal.seconds("detect", {})[0] == pytest.approx(detect)
    assert cal.seconds("detect", {}, masks=True)[0] == pytest.approx(
        detect + data["sam2"]["s_per_image"])
    vqa, estimated = cal.seconds("vqa", {"model": "google/gemma-3-12b-it"}, mean_n=2.0)
    assert estimated == ["vision tower"] and vqa > 2 * per_token * 296


def test_another_model_than_the_measured_one_is_not_calibrated():
    cal = Calibration(MEASURED)
    # a vllm writer: transformers' step is not vLLM's (the H200 file has no vLLM figure)
    with pytest.raises(KeyError, match="gemma3_12b_vllm"):
        cal.seconds("caption", {"model": "google/gemma-3-12b-it", "engine": "vllm"})
    cal.parts["gemma3_12b_vllm"] = {"batch": 32, "prompt_tokens": 450, "prefill_s": 0.5,
                                    "step_s": 0.01, "step_s_batch256": 0.03}
    got = cal.seconds("caption", {"model": "google/gemma-3-12b-it", "engine": "vllm",
                                  "max_new_tokens": 150})[0]
    assert got == pytest.approx((0.5 - 0.01) / (32 * 450) * 450 + 0.03 * 150 / 256)
    with pytest.raises(KeyError, match="gemma-3-27b"):
        cal.seconds("caption", {"model": "google/gemma-3-27b-it"})
    with pytest.raises(KeyError, match="medium"):
        cal.seconds("image", {"model": "stabilityai/stable-diffusion-3.5-medium"})


@pytest.mark.parametrize("content, says", [
    ("{not json", "not a readable gpu_check JSON"),
    ('{"device": "NVIDIA H100"}', "field components: missing"),
    ('{"device": "cpu", "tiny": true, "components": {}}', "field tiny: true"),
    ('{"device": "cpu", "components": {}}', "field device: 'cpu'"),
])
def test_a_file_that_is_no_gpu_measurement_is_one_line(tmp_path, content, says):
    path = tmp_path / "check.json"
    path.write_text(content)
    with pytest.raises(AutocompError, match=says) as err:
        Calibration(path)
    assert str(path) in str(err.value)


def test_the_dry_run_says_what_it_calibrated_and_what_stays_estimated(tmp_path):
    from click.testing import CliRunner

    from autocomp.cli import main

    args = ["run", "autocomp-cp", "--dry-run", "--gpu", "H200"]
    out = CliRunner().invoke(main, [*args, "--calibrate", str(MEASURED)])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    head = next(line for line in lines if line.startswith("Expected (calibrated on H200"))
    notes = lines[lines.index(head) + 1:lines.index(head) + 5]
    assert [n.split(":")[0].strip() for n in notes] == ["captions", "images", "validation",
                                                        "validation"]
    assert notes[3].endswith("measured (estimated: vision tower)")
    # the estimate stays beside it, labelled as one
    assert any(line.startswith("Estimated on H200:") for line in lines)
    assert not any("estimated only, a different card" in line for line in lines)
    # issue 68: a calibration of one card beside --gpu of another printed both headlines
    # without saying they are different cards
    other = CliRunner().invoke(main, ["run", "autocomp-cp", "--dry-run", "--gpu", "A100-80",
                                      "--calibrate", str(MEASURED)])
    assert "  (measured on H200; A100-80 below is estimated only, a different card: " \
        "calibrate on it with scripts/gpu_check.py there)" in other.output.splitlines()
    # a measurement without the answerer's model: that stage is the estimate, and says so
    partial = json.loads(MEASURED.read_text())
    del partial["components"]["gemma3_12b"]
    path = tmp_path / "partial.json"
    path.write_text(json.dumps(partial))
    out = CliRunner().invoke(main, [*args, "--calibrate", str(path)])
    assert out.exit_code == 0, out.output
    assert "GPU-h, gemma3_12b not measured: the estimate's worst case" in out.output
    both = CliRunner().invoke(main, [*args, "--calibrate", str(MEASURED), "--cost",
                                     str(MEASURED)])
    assert both.exit_code != 0 and "give one" in both.output


def test_host_memory_per_node_is_planned_and_the_sbatch_asks_for_it():
    import re

    from autocomp.config import load_config
    from autocomp.planning import host_memory, memory

    rows = memory.stage_rows(load_config(ROOT / "configs" / "autocomp-cp.yaml"))
    got = host_memory.plan(rows, 8)
    # the largest stage's weights (SD3.5-large and its encoders, 25.6 GiB) once, 5 GiB a rank
    assert got["page_cache"] == pytest.approx(13.725e9 * 2 / 2 ** 30)
    assert got["total"] == pytest.approx((got["page_cache"] + 8 * 5.0) * 1.15)
    assert got["mem"] == 80 and got["mem"] >= got["total"]
    assert host_memory.plan(rows, 4)["mem"] < got["mem"]  # fewer ranks a node, less memory
    sbatch = (ROOT / "scripts" / "slurm_autocomp.sbatch").read_text()
    asked = int(re.search(r"^#SBATCH --mem=(\d+)G$", sbatch, re.M).group(1))
    assert asked == host_memory.SBATCH_MEM >= got["mem"]
    assert host_memory.format_plan(got)[0].endswith("sbatch --mem=80G (scripts/slurm_autocomp."
                                             "sbatch asks 96G)")
    assert "loading 2.0, estimated" in host_memory.format_plan(got)[0]
    # issue 66: a measured load replaces the estimate; ranks loading one at a time hold
    # one rank's in-flight tensors, not eight
    measured = host_memory.plan(rows, 8, load=0.4)
    assert "loading 0.4, measured" in host_memory.format_plan(measured)[0]
    assert got["staggered"] == pytest.approx((got["page_cache"] + 8 * 3.0 + 2.0) * 1.15)
    big = host_memory.plan(rows, 16)  # 16 ranks a node: over the sbatch's 96G
    assert host_memory.format_plan(big)[1] == (
        f"  over the sbatch's --mem: ask --mem={big['mem']}G, or load one rank at a time "
        f"(export AUTOCOMP_LOAD_STAGGER=60: {big['staggered']:.0f} GiB, "
        f"--mem={big['mem_staggered']}G)")


def test_fp8_is_calibrated_only_where_measured_and_labelled(tmp_path):
    """Issue 66: `fp8: true` used to be costed with the bf16 step and labelled measured.
    Without an fp8 measurement the dry-run says so and uses the estimate's worst case; with
    gpu_check's sd35_fp8 part it uses the fp8 step (compiled when compile is on)."""
    from click.testing import CliRunner

    from autocomp.cli import main

    config = tmp_path / "fp8.yaml"
    config.write_text((ROOT / "configs" / "autocomp-cp.yaml").read_text().replace(
        "compile: true}", "compile: true, fp8: true}"))
    args = ["run", str(config), "--dry-run", "--gpu", "H200", "--calibrate"]
    h200 = ROOT / "docs" / "measured" / "gpu_check-h200.json"  # fp8 never measured there
    out = CliRunner().invoke(main, [*args, str(h200)])
    assert out.exit_code == 0, out.output
    line = next(ln for ln in out.output.splitlines() if ln.strip().startswith("images: "))
    assert line.endswith("sd35_transformer.step_s_fp8 (fp8 was not measured on this GPU) not "
                         "measured: the estimate's worst case"), line
    report = json.loads(h200.read_text())
    batch = report["components"]["sd35_transformer"]["batch_images"]
    report["components"]["sd35_fp8"] = {"batch_images": batch, "step_s_fp8": 1.50,
                                        "step_s_fp8_compiled": 1.20}
    measured = tmp_path / "with-fp8.json"
    measured.write_text(json.dumps(report))
    cal = Calibration(measured)
    image = {"model": "stabilityai/stable-diffusion-3.5-large", "fp8": True}
    eager, compiled = (cal.seconds("image", image)[0],
                       cal.seconds("image", {**image, "compile": True})[0])
    assert eager - compiled == pytest.approx((1.50 - 1.20) / batch * 28)
    out = CliRunner().invoke(main, [*args, str(measured)])
    line = next(ln for ln in out.output.splitlines() if ln.strip().startswith("images: "))
    assert line.endswith(", measured") and f"{compiled:.3g} s a unit" in line


@pytest.mark.parametrize("field, value, needle", [
    (("sd35_transformer", "batch_images"), 0, "components.sd35_transformer.batch_images: "
                                              "expected a number in (0, 1e+06], got 0"),
    (("sd35_transformer", "batch_images"), "4", "got '4'"),
    (("vae_decode", "decode_s_per_image"), float("nan"), "got nan"),
    (("vae_decode", "decode_s_per_image"), float("inf"), "got inf"),
    (("vae_decode", "decode_s_per_image"), 1e308, "got 1e+308"),
    (("t5_xxl", "forward_s"), 0.0, "components.t5_xxl.forward_s: expected a number in "
                                   "(0, 3600], got 0.0"),
])
def test_a_bad_number_in_a_calibration_file_is_one_line(tmp_path, field, value, needle):
    """Issue 68: batch 0 divided by zero, "4" was a TypeError, NaN / inf / 1e308 / zero
    timings printed "nan GPU-hours", "inf GPU-hours" or 13.4 GPU-h with exit 0."""
    from click.testing import CliRunner

    from autocomp.cli import main

    report = json.loads((ROOT / "docs" / "measured" / "gpu_check-h100.json").read_text())
    report["components"][field[0]][field[1]] = value
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(report))
    got = CliRunner().invoke(main, ["run", "autocomp-cp", "--dry-run", "--gpu", "H100",
                                    "--calibrate", str(bad)])
    assert got.exit_code == 1, got.output
    line = got.output.strip().splitlines()[-1]
    assert str(bad) in line and needle in line, line


def test_a_bad_cost_file_and_planning_options_without_dry_run_are_one_line(tmp_path):
    from click.testing import CliRunner

    from autocomp.cli import main

    for body, needle in (("not json", "not a readable JSON file (JSONDecodeError)"),
                         ('{"gpu_seconds": {"image": -1}}',
                          "field 'gpu_seconds.image': expected seconds in [0, 3600] (0: a "
                          "stage not counted), got -1"),
                         ('{"gpu_seconds": {"image": 1e308}}', "got 1e+308"),
                         ('{"gpu_seconds": {"image": "nan"}}', "got 'nan'")):
        cost = tmp_path / "cost.json"
        cost.write_text(body)
        got = CliRunner().invoke(main, ["run", "demo", "--dry-run", "--cost", str(cost)])
        assert got.exit_code == 1 and needle in got.output, got.output
        assert "Traceback" not in got.output
    for extra in (["--gpu", "H100"], ["--nodes", "2"], ["--cost", str(cost)]):
        got = CliRunner().invoke(main, ["run", "demo", "-o", str(tmp_path / "never"), *extra])
        assert got.exit_code == 1 and "need --dry-run (without it the run starts)" in \
            got.output, got.output
        assert not (tmp_path / "never").exists()

"""The pipeline through every real backend, wired to tiny random models and a local
OpenAI-compatible server: 2 processes, killed during image generation, resumed."""

import os
import subprocess
import sys

import pytest
from conftest import kill_after_records

from autocomp.core.records import read_jsonl
from autocomp.runtime.parts import part_files, read_part

CONFIG = """
name: tiny-real
seed: 3
concepts:
  - {{task: shape_color, n: [2], count: 4}}
  - {{task: shape_position, n: [2], count: 2}}
captions:
  writer: openai
  options: {{model: tiny-chat, base_url: "{url}", max_retries: 2, concurrency: 2}}
  retries: 1
generate:
  generator: diffusers
  options: {{model: "{sd3}", size: 32, steps: 2}}
  batch_size: 2
validate:
  detector: grounding-dino+sam2
  detector_options: {{detector_model: "{dino}", segmenter_model: "{sam2}",
                      box_threshold: 0.3, text_threshold: 0.2}}
  answerer: transformers
  answerer_options: {{model: "{vlm}", max_new_tokens: 3}}
  batch_size: 4
"""


@pytest.mark.slow
def test_tiny_real_backends_two_processes_killed_and_resumed(tmp_path, tiny_backends,
                                                             fake_openai):
    cfg = tmp_path / "tiny-real.yaml"
    cfg.write_text(CONFIG.format(url=fake_openai.url, sd3=tiny_backends["sd3"],
                                 dino=tiny_backends["dino"], sam2=tiny_backends["sam2"],
                                 vlm=tiny_backends["gemma_vlm"]))
    run_dir = tmp_path / "run"
    cmd = [sys.executable, "-m", "autocomp", "run", str(cfg), "--out", str(run_dir),
           "--processes", "2", "--no-progress"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_VERBOSITY": "error"}
    kill_after_records(cmd, run_dir / "images", 2, env)
    # resumed by one process: another world size finds every part the two left
    again = subprocess.run([*cmd[:-2], "1", "--no-progress"], capture_output=True, text=True,
                           env=env)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "Survival funnel" in again.stdout

    captions = list(read_jsonl(run_dir / "captions" / "merged.jsonl"))
    assert len(captions) == 6 and all(c["passed"] for c in captions)  # the server's captions
    images = list(read_jsonl(run_dir / "images" / "merged.jsonl"))
    assert len(images) == 12
    assert all(r["generation"]["steps"] == 2 and r["generation"]["seed"] == r["seed"]
               for r in images)
    ids = [r["id"] for p in part_files(run_dir / "images") for r in read_part(p)]
    assert sorted(ids) == sorted(r["id"] for r in images)  # none lost, none twice
    validation = list(read_jsonl(run_dir / "validation" / "merged.jsonl"))
    assert len(validation) == 12
    for v in validation:
        assert v["checks"][0]["name"] == "objects"
        for d in v["checks"][0]["evidence"]["detections"]:  # boxes region: no SAM2 masks
            assert {"box", "score", "label"} <= set(d) and "mask_area" not in d

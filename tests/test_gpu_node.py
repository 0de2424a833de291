"""What a GPU node will do, at the config's batch sizes: SD3.5 with its VAE decode,
GroundingDINO + SAM2 and Gemma-3's VQA batched as the validation stage runs them, a stage's
memory handed back when it ends, and a 2-process pipeline when 2 GPUs exist. Each asserts
the dtype recorded and that peak memory (torch.cuda.max_memory_allocated) stays under the
plan of autocomp/planning/memory.py. Skipped without CUDA (and, for real checkpoints, without the
weights in the local Hugging Face cache); run them all with

    HF_HUB_OFFLINE=1 python -m pytest -m gpu tests/test_gpu_node.py -o addopts="" -rs
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import hf_cached

from autocomp.planning import memory

pytestmark = pytest.mark.gpu
CP = Path(__file__).parents[1] / "configs" / "autocomp-cp.yaml"
GIB = 2 ** 30


def _gpus() -> int:
    try:
        import torch

        return torch.cuda.device_count() if torch.cuda.is_available() else 0
    except ImportError:
        return 0


def needs(*repos, gpus: int = 1):
    return pytest.mark.skipif(_gpus() < gpus or not all(hf_cached(r) for r in repos),
                              reason=f"needs {gpus} GPU(s)" + (f" and {', '.join(repos)} in "
                                                               "the HF cache" if repos else ""))


def _plan(stage: str, cfg=None) -> dict:
    import torch

    from autocomp.config import parse_config

    cfg = cfg or parse_config(yaml.safe_load(CP.read_text()))
    gib = memory.usable(torch.cuda.get_device_properties(0).total_memory / GIB)
    return next(r for r in memory.fit(cfg, gib) if r["stage"] == stage)


def _peak_gib() -> float:
    import torch

    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() / GIB


def _under_plan(plan: dict) -> None:
    """Allocated memory under the plan's high; reserved (what the card actually gives up)
    under it plus the allocator's share the plan leaves free (memory.HEADROOM)."""
    import torch

    reserved = torch.cuda.max_memory_reserved() / GIB
    total = torch.cuda.get_device_properties(0).total_memory / GIB
    assert _peak_gib() <= plan["peak"][1], (_peak_gib(), plan)
    assert reserved <= plan["peak"][1] + memory.HEADROOM * total, (reserved, plan)


def _requests(count: int, track: str = "minimal"):
    from autocomp.concepts.load import load_task
    from autocomp.concepts.sampling import sample_concepts
    from autocomp.synth.base import ImageRequest

    task = load_task("color")
    return [ImageRequest(c.id, c.graph, task, track, c.seed, "a red chair and a blue lamp on "
                         "a white background") for c in sample_concepts(task, 2, count, 0)]


@needs("stabilityai/stable-diffusion-3.5-large")
def test_sd35_at_the_configs_batch_decodes_under_the_plan():
    import torch

    from autocomp.synth.diffusers_gen import DiffusersGenerator

    cfg = yaml.safe_load(CP.read_text())
    batch = cfg["generate"]["batch_size"]
    gen = DiffusersGenerator(**cfg["generate"]["options"], device="cuda")
    torch.cuda.reset_peak_memory_stats()
    out = gen.generate(_requests(batch))
    assert len(out) == batch and out[0].image.size == (1024, 1024)
    assert out[0].meta["dtype"] == "bfloat16"
    pipe = gen.pipeline()  # every component as loaded, not only the one the record names
    for part in ("transformer", "text_encoder", "text_encoder_2", "text_encoder_3", "vae"):
        assert {p.dtype for p in getattr(pipe, part).parameters()} == {torch.bfloat16}, part
    _under_plan(_plan("images"))


@needs("IDEA-Research/grounding-dino-tiny", "facebook/sam2.1-hiera-large",
       "google/gemma-3-12b-it")
def test_validation_batched_as_the_stage_runs_it_under_the_plan(tmp_path):
    """One validation batch of the config's size through the stage itself: GroundingDINO on
    the whole batch, SAM2 masks, Gemma-3 answering every survivor's questions at once."""
    import torch
    from PIL import Image

    from autocomp.concepts.load import load_task
    from autocomp.concepts.sampling import sample_concepts
    from autocomp.config import load_config
    from autocomp.core.records import write_jsonl
    from autocomp.core.run_records import ConceptRecord, ImageRecord
    from autocomp.run import Run
    from autocomp.runtime.stage import Item
    from autocomp.validators.stage import ValidateStage

    raw = yaml.safe_load(CP.read_text())
    raw["validate"]["background"]["region"] = "masks"  # SAM2 loaded and run too
    (tmp_path / "cp.yaml").write_text(yaml.safe_dump(raw))
    cfg = load_config(tmp_path / "cp.yaml")
    run = Run.create(cfg, tmp_path / "run")
    batch = cfg.validate.batch_size
    items, images = [], []
    rng = np.random.default_rng(0)
    task = load_task("color")
    for drawn in sample_concepts(task, 2, batch, 0):
        c = ConceptRecord.from_dict(drawn.to_record())
        rel = f"images/{c.id}.png"
        (run.dir / rel).parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(rng.integers(0, 255, (1024, 1024, 3), dtype=np.uint8)).save(
            run.dir / rel)
        images.append(ImageRecord(c.id, c.id, "color", 2, "minimal", c.seed, rel, 1024, 1024,
                                  [], {}))
        items.append(Item(c.id, {"image": images[-1], "concept": c}))
    write_jsonl(run.paths.merged("images"), [r.to_dict() for r in images])
    stage = ValidateStage(run, "cuda")
    stage.answerer._load()  # random images rarely pass the object check: load it anyway
    torch.cuda.reset_peak_memory_stats()
    records = stage.process(items)
    assert len(records) == batch
    detector = records[0]["checks"][0]["evidence"]["detector"]
    assert detector["detector_dtype"] == detector["segmenter_dtype"] == "bfloat16"
    questions = [(it.data["image"], task.questions(it.data["concept"].scene)[:1])
                 for it in items[:4]]
    answers = stage.answerer.answer_many([(np.asarray(Image.open(run.dir / img.image)), qs, [])
                                          for img, qs in questions])
    assert all(a[0]["evidence"]["dtype"] == "bfloat16" for a in answers)
    (_, dino), (_, sam) = stage.detector._load()
    for model in (dino, sam, stage.answerer._load()[1]):
        assert {p.dtype for p in model.parameters()} == {torch.bfloat16}, type(model).__name__
    _under_plan(_plan("validation", cfg))


@needs()
def test_a_stage_hands_its_gpu_memory_back_when_it_ends(tmp_path, tiny_backends,
                                                        fake_openai, monkeypatch):
    """Tiny models on the GPU through the real pipeline: after each stage, what is still
    allocated is what was allocated before it (its models are gone)."""
    import torch
    from conftest import built_run
    from test_memory import CONFIG

    from autocomp.runtime import runner

    before = torch.cuda.memory_allocated()
    after: list[int] = []
    real = runner.free_memory

    def free():
        real()
        after.append(torch.cuda.memory_allocated())

    monkeypatch.setattr(runner, "free_memory", free)
    built_run(tmp_path, CONFIG.format(
        writer="openai", writer_options=f'{{model: tiny-chat, base_url: "{fake_openai.url}"}}',
        sd3=tiny_backends["sd3"], dino=tiny_backends["dino"], sam2=tiny_backends["sam2"],
        vlm=tiny_backends["gemma_vlm"]), "gpu")
    assert len(after) == 3 and all(a <= before + 2 ** 20 for a in after), (before, after)


@needs(gpus=2)
def test_two_processes_on_two_gpus(tmp_path, tiny_backends, fake_openai):
    from test_real_pipeline import CONFIG

    from autocomp.core.records import read_jsonl

    cfg = tmp_path / "two.yaml"
    cfg.write_text(CONFIG.format(url=fake_openai.url, sd3=tiny_backends["sd3"],
                                 dino=tiny_backends["dino"], sam2=tiny_backends["sam2"],
                                 vlm=tiny_backends["gemma_vlm"]))
    run = tmp_path / "run"
    done = subprocess.run([sys.executable, "-m", "autocomp", "run", str(cfg), "--out", str(run),
                           "--processes", "2", "--no-progress"], capture_output=True, text=True,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"}, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    images = list(read_jsonl(run / "images" / "merged.jsonl"))
    assert len(images) == 20 and {r["generation"]["dtype"] for r in images} == {"bfloat16"}
    timing = (run / "stats" / "timing" / "images.json").read_text()
    assert '"processes": 2' in timing

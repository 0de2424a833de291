"""planning/host_memory.py and the SD3.5 loader (issue 66): SD3.5 is read straight onto its
device, never held whole in host memory first. On a GPU node each rank used to load the
pipeline to the host and then move it (T5-XXL in fp16 asked in bf16: ~10 GiB of anonymous
memory a rank, 8 ranks past the sbatch's --mem); now every component is loaded with a device
map. On the CPU the device is host memory, so the bound is the weights once, in the asked
dtype: a pipeline whose files are fp16 (a T5 encoder of 84 MB, nearly all of it), asked in
bf16, grows the process's anonymous memory by at most 1.10 x its bf16 weights + 48 MiB (no
second copy in either dtype)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

MEASURE = """
import json, sys, threading, time
def anon():
    for line in open("/proc/self/status"):
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) * 1024
from autocomp.synth.diffusers_gen import DiffusersGenerator
# every module the load imports, imported before the baseline: only the load is measured
import torch, transformers
from diffusers import DiffusionPipeline, StableDiffusion3Pipeline
from transformers import T5EncoderModel
import autocomp.models.hub, autocomp.models.devices, autocomp.models.loading
gen = DiffusersGenerator(model=sys.argv[1], dtype="bfloat16", device="cpu", size=32, steps=1)
peak, stop = [0], threading.Event()
def watch():
    while not stop.is_set():
        peak[0] = max(peak[0], anon()); time.sleep(0.002)
base = anon(); t = threading.Thread(target=watch, daemon=True); t.start()
pipe = gen.pipeline()
stop.set(); t.join()
weights = sum(p.numel() * p.element_size() for m in pipe.components.values()
              if hasattr(m, "parameters") for p in m.parameters())
print(json.dumps({"weights": weights, "grew": anon() - base, "peak": max(peak[0], anon()) - base,
                  "dtype": gen.loaded_dtype, "t5": str(pipe.text_encoder_3.dtype)}))
"""


@pytest.fixture(scope="module")
def fp16_pipeline(tmp_path_factory):
    """An SD3 pipeline folder holding its T5 encoder alone (42M parameters, fp16; the other
    components absent, as a config's drop-in may leave them)."""
    import torch
    import transformers as T

    folder = tmp_path_factory.mktemp("sd3") / "pipe"
    folder.mkdir()
    (folder / "model_index.json").write_text(json.dumps({
        "_class_name": "StableDiffusion3Pipeline", "_diffusers_version": "0.42.1",
        **{name: [None, None] for name in (
            "scheduler", "text_encoder", "text_encoder_2", "tokenizer", "tokenizer_2",
            "tokenizer_3", "transformer", "vae", "image_encoder", "feature_extractor")}}))
    torch.manual_seed(0)
    t5 = T.T5EncoderModel(T.T5Config(vocab_size=32128, d_model=512, d_kv=64, d_ff=1408,
                                     num_layers=8, num_heads=8,
                                     feed_forward_proj="gated-gelu")).half()
    t5.save_pretrained(folder / "text_encoder_3")
    index = json.loads((folder / "model_index.json").read_text())
    index["text_encoder_3"] = ["transformers", "T5EncoderModel"]
    (folder / "model_index.json").write_text(json.dumps(index))
    return folder


@pytest.mark.slow
def test_a_fp16_pipeline_asked_in_bf16_is_held_once(fp16_pipeline):
    got = json.loads(subprocess.run([sys.executable, "-c", MEASURE, str(fp16_pipeline)],
                                    check=True, capture_output=True, text=True).stdout)
    assert got["dtype"] == "bfloat16" and got["t5"] == "torch.bfloat16"
    assert got["weights"] > 80e6  # the T5 dominates: ~84 MB in bf16
    bound = 1.10 * got["weights"] + 48 * 2 ** 20
    assert got["peak"] <= bound, got  # a host copy beside the device's would be 2x
    assert got["grew"] <= bound, got


def test_every_component_is_read_onto_the_ranks_gpu_with_a_device_map(monkeypatch):
    """The call a GPU rank makes (no GPU here: torch's device calls are recorded): the
    rank's GPU made current, the pipeline loaded with diffusers' device map for its type,
    nothing loaded to the host first; model CPU offload alone loads to the host."""
    import contextlib

    import torch

    from autocomp.synth.diffusers_gen import load_pipeline

    calls = []

    class Pipeline:
        @classmethod
        def from_pretrained(cls, model, **kwargs):
            calls.append((model, kwargs))
            return "pipe"

    monkeypatch.setattr(torch.cuda, "set_device", lambda index: calls.append(("set", index)))
    monkeypatch.setattr(torch.cuda, "device", lambda index: contextlib.nullcontext())
    assert load_pipeline(Pipeline, "m", None, torch.bfloat16, "cuda:3", {"a": None}) == "pipe"
    assert calls == [("set", 3), ("m", {"device_map": "cuda", "revision": None,
                                        "dtype": torch.bfloat16, "a": None})]
    calls.clear()
    load_pipeline(Pipeline, "m", "r1", torch.float32, "cpu", {})
    assert calls == [("m", {"device_map": "cpu", "revision": "r1", "dtype": torch.float32})]
    calls.clear()
    load_pipeline(Pipeline, "m", None, torch.bfloat16, None, {})  # cpu_offload
    assert calls == [("m", {"revision": None, "dtype": torch.bfloat16})]
    assert Path(__file__).exists()

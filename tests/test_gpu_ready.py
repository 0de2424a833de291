"""Ready for a GPU node (issue 22), on tiny models through the real loading code: every
Table 4 family loads (SigLIP v1's sentencepiece tokenizer), a model that cannot load stops
no other, records carry the dtype actually loaded, OpenAI weights keep QuickGELU."""

import json
import re
import sys
import warnings
from pathlib import Path

import pytest
from conftest import built_run
from tiny_models import tiny_open_clip, tiny_siglip_v1

from autocomp.core.errors import AutocompError
from autocomp.eval.cells import evaluate
from autocomp.eval.scorers import load_scorer

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
CONFIG = """
name: ready
seed: 3
concepts:
  - {task: shape_color, n: [2], count: 4}
generate: {options: {size: 64}}
build: {benchmarks: [swap]}
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return built_run(tmp_path_factory.mktemp("ready"), CONFIG)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("models")
    return {"siglip_v1": f"hf:{tiny_siglip_v1(tmp / 'siglip-v1')}",
            "open_clip": f"open_clip:local-dir:{tiny_open_clip(tmp / 'oc')}"}


def _extras() -> dict[str, list[str]]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]


def _lower_bound(requirements: list[str], package: str) -> tuple[int, ...] | None:
    for req in requirements:
        m = re.fullmatch(rf"{package}>=([\d.]+)", req)
        if m:
            return tuple(int(x) for x in m.group(1).split("."))
    return None


def test_extras_install_sentencepiece_and_versions_that_honour_dtype():
    extras = _extras()
    assert any(r.startswith("sentencepiece") for r in extras["eval"])
    assert _lower_bound(extras["gen"], "diffusers") >= (0, 40)
    for extra in ("gen", "eval"):
        assert _lower_bound(extras[extra], "transformers") >= (4, 56)


def test_siglip_v1_with_a_sentencepiece_tokenizer_loads_and_scores(run, models, tmp_path):
    scorer = load_scorer(models["siglip_v1"])
    tok = scorer._load()[0]
    assert type(tok).__name__ == "SiglipTokenizer" and scorer.siglip
    vectors = scorer.encode_texts(["a red cube", "a blue sphere left of a green cone"])
    assert vectors.shape[0] == 2
    out = tmp_path / "res"
    evaluate(run.dir, [models["siglip_v1"]], out, cache_dir=tmp_path / "c",
             echo=lambda *_: None)
    results = [json.loads(p.read_text()) for p in out.rglob("*swap.json")]
    assert results and all(r["n_items"] > 0 for r in results)


def test_a_model_missing_a_package_is_one_line_and_stops_no_other(run, models, tmp_path,
                                                                  monkeypatch):
    import transformers

    real = transformers.AutoTokenizer.from_pretrained

    def no_sentencepiece(ref, *a, **kw):
        if "siglip-v1" in str(ref):
            raise ImportError("\nSiglipTokenizer requires the SentencePiece library but it was "
                              "not found in your environment. Check out the instructions")
        return real(ref, *a, **kw)

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", no_sentencepiece)
    out, lines = tmp_path / "res", []
    with pytest.raises(AutocompError) as err:
        evaluate(run.dir, [models["siglip_v1"], models["open_clip"]], out,
                 cache_dir=tmp_path / "c", echo=lines.append)
    text = str(err.value)
    assert "1 of 2 models" in text and "sentencepiece" in text and "autocomp[eval]" in text
    assert "\n" not in text
    fail = [line for line in lines if line.startswith("fail")]
    assert len(fail) == 1 and "siglip-v1" in fail[0] and "sentencepiece" in fail[0]
    written = [json.loads(p.read_text())["model"] for p in out.rglob("*swap.json")]
    assert written and set(written) == {models["open_clip"]}


def test_per_family_batch_defaults():
    assert load_scorer("vlm:some/vlm").batch_size == 8
    assert load_scorer("blind:choice@some/lm").batch_size == 16
    assert load_scorer("open_clip:ViT-B-32-quickgelu@openai").batch_size == 64
    assert load_scorer("vlm:some/vlm", batch_size=2).batch_size == 2


# -- the dtype a record carries is the one loaded ---------------------------------------------
def _generate(folder, dtype):
    from autocomp.concepts.load import load_task
    from autocomp.concepts.sampling import sample_concepts
    from autocomp.synth.base import ImageRequest
    from autocomp.synth.diffusers_gen import DiffusersGenerator

    task = load_task("shape_color")
    c = sample_concepts(task, 1, 1, seed=0)[0]
    gen = DiffusersGenerator(model=str(folder), size=32, steps=1, dtype=dtype, device="cpu")
    return gen.generate([ImageRequest(c.id, c.graph, task, "minimal", c.seed, "a cube")])[0]


def test_generator_records_the_dtype_it_loaded(tiny_backends):
    assert _generate(tiny_backends["sd3"], "bfloat16").meta["dtype"] == "bfloat16"


def test_a_library_that_ignores_dtype_is_recorded_as_fp32_with_a_warning(tiny_backends,
                                                                         monkeypatch):
    """diffusers 0.32-0.39 drop `dtype=`: the record must say float32, not bfloat16."""
    import diffusers

    real = diffusers.DiffusionPipeline.from_pretrained.__func__

    def old_diffusers(cls, ref, *a, dtype=None, **kw):
        return real(cls, ref, *a, **kw)

    monkeypatch.setattr(diffusers.DiffusionPipeline, "from_pretrained",
                        classmethod(old_diffusers))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        meta = _generate(tiny_backends["sd3"], "bfloat16").meta
    assert meta["dtype"] == "float32"
    assert any("loaded in float32, not the bfloat16" in str(w.message) for w in caught)


def test_vqa_answers_carry_the_dtype_loaded(tiny_backends):
    import numpy as np

    from autocomp.concepts.questions import Question
    from autocomp.validators.vqa import TransformersAnswerer

    vqa = TransformersAnswerer(model=str(tiny_backends["gemma_vlm"]), max_new_tokens=2,
                               dtype="bfloat16", device="cpu")
    question = Question("What color is the cube?", ("red", "blue"), "red", "cube")
    got = vqa.answer(np.full((32, 32, 3), 255, np.uint8), [question])
    assert got[0]["evidence"]["dtype"] == "bfloat16"

"""Every registered plugin of every family passes the same contract: deterministic with a
seed, a batch equals one-by-one calls, a clear error on bad options."""

import io

import numpy as np
import pytest

from autocomp.captions.writers import CaptionRequest
from autocomp.concepts.load import load_task
from autocomp.concepts.sampling import sample_concepts
from autocomp.core.errors import AutocompError
from autocomp.core.registry import names, resolve
from autocomp.synth.base import ImageRequest


@pytest.fixture(scope="module")
def concepts():
    out = []
    for name in ("shape_color", "shape_position"):
        task = load_task(name)
        out += [(task, c) for c in sample_concepts(task, 2, 3, seed=11)]
    return out


@pytest.fixture
def make(tiny_backends, fake_openai):
    """family, name -> a fresh instance wired to a tiny model or the fake server."""
    t = {k: str(v) for k, v in tiny_backends.items()}
    table = {
        ("generator", "procedural"): lambda: resolve("generator", "procedural")(),
        ("generator", "diffusers"): lambda: resolve("generator", "diffusers")(
            model=t["sd3"], size=32, steps=2, device="cpu"),
        ("writer", "template"): lambda: resolve("writer", "template")(),
        ("writer", "transformers"): lambda: resolve("writer", "transformers")(
            model=t["gemma_lm"], max_new_tokens=4, device="cpu"),
        ("writer", "openai"): lambda: resolve("writer", "openai")(
            model="m", base_url=fake_openai.url),
        ("detector", "color-blobs"): lambda: resolve("detector", "color-blobs")(),
        ("detector", "grounding-dino+sam2"): lambda: resolve("detector", "grounding-dino+sam2")(
            detector_model=t["dino"], segmenter_model=t["sam2"], box_threshold=0.0,
            text_threshold=0.0, device="cpu"),
        ("answerer", "pixels"): lambda: resolve("answerer", "pixels")(),
        ("answerer", "transformers"): lambda: resolve("answerer", "transformers")(
            model=t["gemma_vlm"], max_new_tokens=3, device="cpu"),
        ("answerer", "openai"): lambda: resolve("answerer", "openai")(
            model="m", base_url=fake_openai.url),
    }

    def build(family, name):
        return table[(family, name)]()

    build.table = table
    return build


BACKEND_FAMILIES = ("generator", "writer", "detector", "answerer")
SAMPLED_WRITERS = {"transformers", "openai"}  # sampling: deterministic per batch only


def test_every_registered_plugin_has_a_contract_instance(make):
    registered = {(f, n) for f in BACKEND_FAMILIES for n in names(f)}
    assert registered == set(make.table)


def _png(img) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


@pytest.mark.parametrize("name", names("generator"))
def test_generator_contract(name, concepts, make):
    reqs = [ImageRequest(c.id, c.graph, t, "minimal", c.seed, "a red cube")
            for t, c in concepts]
    gen = make("generator", name)
    batch = gen.generate(reqs)
    assert [_png(b.image) for b in batch] == [_png(b.image) for b in make(
        "generator", name).generate(reqs)]  # seeded: same bytes
    single = [gen.generate([r])[0] for r in reqs]
    for b, s in zip(batch, single, strict=True):  # batch = one by one (float rounding aside)
        assert np.abs(np.asarray(b.image, int) - np.asarray(s.image, int)).max() <= 2
    assert all(b.image.mode == "RGB" for b in batch)
    with pytest.raises(AutocompError, match="generate.options.nope"):
        resolve("generator", name).check_options({"nope": 1}, field="generate.options")


@pytest.mark.parametrize("name", names("writer"))
def test_writer_contract(name, concepts, make):
    reqs = [CaptionRequest(c.id, c.graph, t, c.seed, 0, "s", "u") for t, c in concepts]
    batch = make("writer", name).write(reqs)
    assert batch == make("writer", name).write(reqs)
    if name not in SAMPLED_WRITERS:
        assert batch == [make("writer", name).write([r])[0] for r in reqs]
    assert len(batch) == len(reqs) and all(isinstance(x, str) for x in batch)
    with pytest.raises(AutocompError, match="captions.options.nope"):
        resolve("writer", name).check_options({"nope": 1}, field="captions.options")


@pytest.mark.parametrize("name", names("detector"))
def test_detector_contract(name, concepts, make):
    gen = resolve("generator", "procedural")(size=64)
    det = make("detector", name)
    for task, c in concepts[:2]:
        img = np.asarray(gen.generate_one(ImageRequest(c.id, c.graph, task, "minimal", c.seed,
                                                       "")).image)
        a, b = det.detect(img, c.graph.names), make("detector", name).detect(img, c.graph.names)
        assert [d.to_dict() for d in a] == [d.to_dict() for d in b]
        for d in a:
            assert d.mask is None or d.mask.shape == img.shape[:2]
            assert d.label is None or d.label in c.graph.names or name == "color-blobs"
    with pytest.raises(AutocompError, match="validate.detector_options.nope"):
        resolve("detector", name).check_options({"nope": 1}, field="validate.detector_options")


@pytest.mark.parametrize("name", names("answerer"))
def test_answerer_contract(name, concepts, make):
    det = resolve("detector", "color-blobs")()
    gen = resolve("generator", "procedural")()
    ans = make("answerer", name)
    for task, c in concepts[:2]:
        img = np.asarray(gen.generate_one(ImageRequest(c.id, c.graph, task, "minimal", c.seed,
                                                       "")).image)
        dets = det.detect(img, c.graph.names)
        qs = task.questions(c.graph)
        batch = ans.answer(img, qs, dets)
        assert batch == [ans.answer(img, [q], dets)[0] for q in qs]
        assert all(isinstance(a["answer"], str) for a in batch)
        if name == "pixels":
            assert [a["answer"] for a in batch] == [q.expected for q in qs]
    with pytest.raises(AutocompError, match="validate.answerer_options.nope"):
        resolve("answerer", name).check_options({"nope": 1}, field="validate.answerer_options")


def test_unknown_backend_lists_the_known_ones():
    with pytest.raises(AutocompError, match=r"unknown detector 'yolo' \(known: color-blobs, "
                                            r"grounding-dino\+sam2\)"):
        resolve("detector", "yolo")


def _extras() -> set[str]:
    from pathlib import Path

    try:

        import tomllib

    except ModuleNotFoundError:  # Python 3.10

        import tomli as tomllib

    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    return set(tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"])


@pytest.mark.parametrize("family", BACKEND_FAMILIES)
def test_backends_declare_options_once_in_their_signature(family):
    """Every backend is a Backend: its options are its __init__ keywords (no second table),
    each with a default; its install extra is a real extra; unknown options and wrong types
    are refused naming the field."""
    import inspect

    from autocomp.core.backend import Backend

    for name in names(family):
        cls = resolve(family, name)
        assert issubclass(cls, Backend), name
        assert not hasattr(cls, "OPTIONS"), f"{name} declares its options twice"
        types = cls.option_types()
        own = [n for n, p in inspect.signature(cls.__init__).parameters.items()
               if n != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
        assert set(own) <= set(types), name
        assert set(cls.defaults()) == set(types), f"{name}: every option has a default"
        assert cls.extra is None or cls.extra in _extras(), (name, cls.extra)
        for key, allowed in types.items():
            wrong = [] if str in allowed else ["text"]
            for value in wrong:
                with pytest.raises(AutocompError, match=f"options.{key}"):
                    cls.check_options({key: value})


def test_every_family_resolves_through_the_one_registry():
    """Stages (ordered, named as registered), scorers, formats: each entry imports."""
    import inspect

    from autocomp.core.registry import FAMILIES
    from autocomp.runtime.stage import Stage

    assert set(FAMILIES) == {"stage", "generator", "writer", "detector", "answerer", "check",
                             "scorer", "format", "kind"}
    # the paper's cascade comes first, in its order (a plugin's check may join it)
    assert names("check")[:3] == ("objects", "background", "attributes")
    for name in names("check"):
        check = resolve("check", name)()
        assert check.name == name and check.label and set(check.tracks) <= {"minimal",
                                                                           "contextual"}
    assert names("stage") == ("concepts", "captions", "images", "validation", "build")
    for name in names("stage"):
        cls = resolve("stage", name)
        assert issubclass(cls, Stage) and cls.name == name
        assert all(n in names("stage") for n in cls.needs)
    for name in names("scorer"):
        assert callable(resolve("scorer", name))
    for name in names("format"):
        opener = resolve("format", name)
        assert list(inspect.signature(opener).parameters) == [
            "source", "images", "columns", "skip_missing", "text_only"], name


def test_an_unknown_name_lists_the_known_ones():
    with pytest.raises(AutocompError, match="unknown generator 'paint' .*procedural"):
        resolve("generator", "paint")

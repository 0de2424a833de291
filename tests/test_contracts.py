"""Every registered plugin of every family passes the same contract: deterministic with a
seed, a batch equals one-by-one calls, a clear error on bad options."""

import io

import numpy as np
import pytest

from autocomp.captions.writers import CaptionRequest
from autocomp.concepts.sampling import sample_concepts
from autocomp.concepts.task import load_task
from autocomp.errors import AutocompError
from autocomp.registry import ANSWERERS, DETECTORS, GENERATORS, WRITERS, resolve
from autocomp.synth.base import ImageRequest
from autocomp.validators.questions import questions


@pytest.fixture(scope="module")
def concepts():
    out = []
    for name in ("shape_color", "shape_position"):
        task = load_task(name)
        out += [(task, c) for c in sample_concepts(task, 2, 3, seed=11)]
    return out


def _png(img) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_generator_contract(name, concepts):
    cls = resolve("generator", name)
    reqs = [ImageRequest(c.id, c.graph, t, "minimal", c.seed, "") for t, c in concepts]
    batch = cls().generate(reqs)
    single = [cls().generate([r])[0] for r in reqs]
    assert [_png(b.image) for b in batch] == [_png(s.image) for s in single]
    assert all(b.image.mode == "RGB" for b in batch)
    with pytest.raises(AutocompError, match="generate.options.nope"):
        cls.check_options({"nope": 1}, field="generate.options")


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_writer_contract(name, concepts):
    cls = resolve("writer", name)
    reqs = [CaptionRequest(c.id, c.graph, t, c.seed, 0, "s", "u") for t, c in concepts]
    batch = cls().write(reqs)
    assert batch == [cls().write([r])[0] for r in reqs]
    assert all(isinstance(x, str) and x for x in batch)
    with pytest.raises(AutocompError, match="captions.options.nope"):
        cls.check_options({"nope": 1}, field="captions.options")


@pytest.mark.parametrize("name", sorted(DETECTORS))
def test_detector_contract(name, concepts):
    cls = resolve("detector", name)
    gen = resolve("generator", "procedural")()
    for task, c in concepts:
        img = np.asarray(gen.generate_one(ImageRequest(c.id, c.graph, task, "minimal", c.seed,
                                                       "")).image)
        a, b = cls().detect(img, c.graph.names), cls().detect(img, c.graph.names)
        assert [d.to_dict() for d in a] == [d.to_dict() for d in b]
        for d in a:
            assert d.mask is None or d.mask.shape == img.shape[:2]
    blank = np.full((64, 64, 3), 255, np.uint8)
    assert cls().detect(blank, ["cube"]) == []
    with pytest.raises(AutocompError, match="validate.detector_options.nope"):
        cls.check_options({"nope": 1}, field="validate.detector_options")


@pytest.mark.parametrize("name", sorted(ANSWERERS))
def test_answerer_contract(name, concepts):
    cls = resolve("answerer", name)
    det = resolve("detector", "color-blobs")()
    gen = resolve("generator", "procedural")()
    for task, c in concepts:
        img = np.asarray(gen.generate_one(ImageRequest(c.id, c.graph, task, "minimal", c.seed,
                                                       "")).image)
        dets = det.detect(img, c.graph.names)
        qs = questions(c.graph, task)
        batch = cls().answer(img, qs, dets)
        assert batch == [cls().answer(img, [q], dets)[0] for q in qs]
        assert [a["answer"] for a in batch] == [q.expected for q in qs]
    with pytest.raises(AutocompError, match="validate.answerer_options.nope"):
        cls.check_options({"nope": 1}, field="validate.answerer_options")


def test_unknown_backend_lists_the_known_ones():
    with pytest.raises(AutocompError, match=r"unknown detector 'yolo' \(known: color-blobs\)"):
        resolve("detector", "yolo")

"""The procedural generator: exact, deterministic drawings with recorded ground truth."""

import io
import random

import numpy as np
import pytest

from autocomp.concepts.load import load_task
from autocomp.concepts.sampling import sample_concepts
from autocomp.core.errors import AutocompError
from autocomp.synth.base import ImageRequest
from autocomp.synth.layout import relation_component, size_ratio
from autocomp.synth.procedural import FAULTS, ProceduralGenerator
from autocomp.synth.shapes import SHAPES


def _request(task, concept, track="minimal"):
    return ImageRequest(f"{concept.id}-{track}", concept.graph, task, track, concept.seed, "")


def _png(image) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()


@pytest.fixture(scope="module")
def shape_tasks():
    return {t: load_task(t) for t in ("shape_color", "shape_position", "shape_size")}


def test_same_seed_same_bytes_and_tracks_share_the_layout(shape_tasks):
    task = shape_tasks["shape_position"]
    concept = sample_concepts(task, 3, 1, seed=4)[0]
    gen = ProceduralGenerator(128)
    a, b = gen.generate_one(_request(task, concept)), gen.generate_one(_request(task, concept))
    assert _png(a.image) == _png(b.image)
    ctx = gen.generate_one(_request(task, concept, "contextual"))
    assert [o["box"] for o in ctx.truth["objects"]] == [o["box"] for o in a.truth["objects"]]
    assert _png(ctx.image) != _png(a.image)
    assert ctx.truth["background"] == "room" and a.truth["background"] == "white"


def test_every_relation_holds_on_the_drawn_boxes(shape_tasks):
    gen = ProceduralGenerator(256)
    for name in ("shape_position", "shape_size"):
        task = shape_tasks[name]
        geometry = {e.name: e.geometry for e in task.values.entries}
        for n in (2, 3):
            for concept in sample_concepts(task, n, 25, seed=1):
                truth = gen.generate_one(_request(task, concept)).truth
                boxes = [o["box"] for o in truth["objects"]]
                for rel in concept.graph.relations:
                    g = geometry[rel.predicate]
                    s, o = boxes[rel.subject], boxes[rel.object]
                    if "dx" in g:
                        assert relation_component(s, o, g["dx"], g["dy"]) > 0.5
                    elif g["size"] > 0:
                        assert size_ratio(s, o) > 1.25
                    else:
                        assert size_ratio(s, o) < 0.8


def test_colors_are_drawn_exactly_on_white(shape_tasks):
    task = shape_tasks["shape_color"]
    concept = sample_concepts(task, 2, 1, seed=2)[0]
    out = ProceduralGenerator(128).generate_one(_request(task, concept))
    arr = np.asarray(out.image)
    assert tuple(arr[0, 0]) == (255, 255, 255)
    for obj in out.truth["objects"]:
        x0, y0, x1, y1 = obj["box"]
        patch = arr[y0:y1, x0:x1].reshape(-1, 3)
        rgb = tuple(task.values[obj["color"]].value)
        assert (patch == rgb).all(axis=1).sum() > 0.25 * len(patch)


def test_faults_are_recorded_and_happen(shape_tasks):
    gen = ProceduralGenerator(128, faults=dict.fromkeys(FAULTS, 1.0))
    task = shape_tasks["shape_color"]
    concept = sample_concepts(task, 3, 1, seed=3)[0]
    out = gen.generate_one(_request(task, concept))
    kinds = {f["kind"] for f in out.faults}
    assert kinds == set(FAULTS)
    assert out.truth["background"] == "grey"
    dropped = next(f["slot"] for f in out.faults if f["kind"] == "drop_object")
    assert out.truth["objects"][dropped]["drawn"] is False
    assert out.truth["expect"] == {"objects": False, "attributes": False, "background": False}
    drawn = [o["color"] for o in out.truth["objects"]]
    assert drawn != [o.attributes[0] for o in concept.graph.objects]
    # contextual: no grey background fault
    ctx = gen.generate_one(_request(task, concept, "contextual"))
    assert "grey_background" not in {f["kind"] for f in ctx.faults}


def test_swap_fault_reverses_a_relation(shape_tasks):
    gen = ProceduralGenerator(256, faults={"swap": 1.0})
    task = shape_tasks["shape_position"]
    geometry = {e.name: e.geometry for e in task.values.entries}
    reversed_ = 0
    for concept in sample_concepts(task, 2, 20, seed=5):
        out = gen.generate_one(_request(task, concept))
        if not out.faults:
            continue
        boxes = [o["box"] for o in out.truth["objects"]]
        rel = concept.graph.relations[0]
        g = geometry[rel.predicate]
        assert relation_component(boxes[rel.subject], boxes[rel.object], g["dx"], g["dy"]) < 0
        reversed_ += 1
    assert reversed_ >= 15


def test_refuses_objects_it_cannot_draw():
    problem = ProceduralGenerator.cannot_handle(load_task("color"))
    assert "'chair'" in problem and "diffusers" in problem
    assert ProceduralGenerator.cannot_handle(load_task("shape_size")) is None


def test_options_are_checked():
    with pytest.raises(AutocompError, match="generate.options.faults.melt"):
        ProceduralGenerator.check_options({"faults": {"melt": 0.1}}, field="generate.options")
    with pytest.raises(AutocompError, match=r"rate in \[0, 1\]"):
        ProceduralGenerator.check_options({"faults": {"swap": 2}})
    with pytest.raises(AutocompError, match="size"):
        ProceduralGenerator.check_options({"size": 16})


def test_every_shape_is_drawable_at_small_sizes():
    rng = random.Random(0)
    from autocomp.synth.shapes import render

    for name in SHAPES:
        tile = render(name, rng.randint(20, 40), rng.randint(20, 40), (10, 200, 30))
        alpha = np.asarray(tile)[..., 3]
        assert alpha.mean() > 0

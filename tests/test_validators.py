"""Embedded validators: color-blobs detector, background check, pixels answerer."""

import numpy as np
import pytest

from autocomp.concepts.load import load_task
from autocomp.concepts.sampling import sample_concepts
from autocomp.synth.base import ImageRequest
from autocomp.synth.layout import relation_component
from autocomp.synth.procedural import ProceduralGenerator
from autocomp.synth.shapes import SHAPES, fill_fraction, silhouette
from autocomp.validators.background import background_check, grayscale
from autocomp.validators.blobs import ColorBlobDetector, _iou_centred
from autocomp.validators.checks import names_only, validate_image
from autocomp.validators.pixels import PixelAnswerer, read_relation


def test_background_rule_is_70_percent_at_gray_190():
    img = np.full((10, 10, 3), 255, np.uint8)
    img.reshape(-1, 3)[:30] = 189  # 30% dark: 70% bright, passes
    assert background_check(img, None, 0.7, 190).passed
    img.reshape(-1, 3)[30] = 189  # 31% dark: fails
    result = background_check(img, None, 0.7, 190)
    assert not result.passed and result.evidence["bright_fraction"] == 0.69
    mask = np.zeros((10, 10), bool)
    mask.reshape(-1)[:31] = True  # the dark pixels are the object: masked out
    assert background_check(img, mask, 0.7, 190).passed
    assert not background_check(img, np.ones((10, 10), bool), 0.7, 190).passed


def test_grayscale_is_pil_luma():
    from PIL import Image

    rng = np.random.default_rng(0)
    arr = rng.integers(0, 256, (16, 16, 3), dtype=np.uint8)
    assert (grayscale(arr) == np.asarray(Image.fromarray(arr).convert("L"))).all()


def test_geneval_rule():
    # subject centred 100 px below the object, both 40 px boxes: dy = (100 - 8) / 100
    obj, sub = (0, 0, 40, 40), (0, 100, 40, 140)
    assert relation_component(sub, obj, 0, 1) == pytest.approx(0.92)
    assert relation_component(sub, obj, 0, -1) == pytest.approx(-0.92)
    # diagonal at 45 degrees: each component (100 - 8) / 141.4 = 0.65: both hold
    diag = (100, 100, 140, 140)
    assert relation_component(diag, obj, 1, 0) == pytest.approx(92 / (100 * 2 ** 0.5))
    # boxes side by side but overlapping in extent: offset shrinks to 0
    assert relation_component((5, 0, 45, 40), obj, 1, 0) == 0.0
    hints = {"under": {"dx": 0, "dy": 1}, "to the right of": {"dx": 1, "dy": 0}}
    assert read_relation(sub, obj, hints) == "under"
    assert read_relation((300, 10, 340, 50), obj, hints) == "to the right of"
    sizes = {"larger than": {"size": 1}, "smaller than": {"size": -1}}
    assert read_relation((0, 0, 60, 60), obj, sizes) == "larger than"
    assert read_relation((0, 0, 42, 42), obj, sizes) == "unknown"


def test_shape_silhouettes_are_told_apart():
    for a in SHAPES:
        for b in SHAPES:
            ha = 80
            sa = silhouette(a, round(SHAPES[a].aspect * ha), ha)
            hb = round(np.sqrt(sa.sum() / (fill_fraction(b) * SHAPES[b].aspect)))
            sb = silhouette(b, round(SHAPES[b].aspect * hb), hb)
            iou = _iou_centred(sa, sb)
            if a == b:
                assert iou > 0.97
            else:
                assert iou < 0.9, (a, b, iou)  # closest pair: cube / sphere, 0.87


@pytest.mark.parametrize("task_name", ["shape_color", "shape_position", "shape_size"])
def test_detector_and_answerer_read_back_clean_images(task_name):
    task = load_task(task_name)
    gen, det, ans = ProceduralGenerator(256), ColorBlobDetector(), PixelAnswerer()
    for n in task.n:
        for concept in sample_concepts(task, n, 15, seed=7):
            for track in ("minimal", "contextual"):
                out = gen.generate_one(ImageRequest("x", concept.graph, task, track,
                                                    concept.seed, ""))
                results = validate_image(np.asarray(out.image), concept.graph, task, track,
                                         det, ans)
                assert all(r.passed for r in results), [r.reason for r in results]
                assert [r.name for r in results][-1] == "attributes"


def test_each_fault_is_caught_by_its_check():
    task = load_task("shape_color")
    det, ans = ColorBlobDetector(), PixelAnswerer()
    expected = {"drop_object": "objects", "wrong_color": "attributes", "swap": "attributes",
                "grey_background": "background"}
    for fault, check in expected.items():
        gen = ProceduralGenerator(256, faults={fault: 1.0})
        for concept in sample_concepts(task, 3, 5, seed=8):
            out = gen.generate_one(ImageRequest("x", concept.graph, task, "minimal",
                                                concept.seed, ""))
            results = validate_image(np.asarray(out.image), concept.graph, task, "minimal",
                                     det, ans)
            failed = [r for r in results if not r.passed]
            assert [r.name for r in failed] == [check], (fault, [r.reason for r in results])
            assert failed[0].reason


def testnames_only_answers():
    choices = ("red", "blue", "light blue")
    assert names_only("Red.", "red", choices)
    assert not names_only("reddish", "red", choices)
    assert not names_only("red or blue", "red", choices)
    assert names_only("it is light blue", "light blue", choices)
    assert not names_only("light blue", "blue", choices)


def test_white_shape_on_white_is_found_by_its_outline():
    from autocomp.core.scene import attribute_graph

    task = load_task("shape_color")
    graph = attribute_graph(["cube", "sphere"], ["white", "silver"])
    out = ProceduralGenerator(160).generate_one(ImageRequest("w", graph, task, "minimal", 5, ""))
    results = validate_image(np.asarray(out.image), graph, task, "minimal",
                             ColorBlobDetector(), PixelAnswerer())
    assert all(r.passed for r in results), [r.reason for r in results]
    answers = results[-1].evidence["answers"]
    assert [a["answer"] for a in answers] == ["white", "silver"]


def test_object_check_counts_and_pairs():
    from autocomp.core.scene import attribute_graph
    from autocomp.validators.base import Detection
    from autocomp.validators.checks import objects_check

    task = load_task("color")

    def det(label):
        return Detection(label, (0, 0, 1, 1), 1.0)

    graph = attribute_graph(["gloves", "chair"], ["red", "blue"])  # gloves: a pair noun
    assert objects_check([det("gloves"), det("chair")], graph, task).passed
    assert objects_check([det("gloves"), det("gloves"), det("chair")], graph, task).passed
    three = objects_check([det("gloves")] * 3 + [det("chair")], graph, task)
    assert not three.passed and "gloves: expected 1, found 3" in three.reason
    extra = objects_check([det("gloves"), det("chair"), det("chair")], graph, task)
    assert not extra.passed and "chair: expected 1, found 2" in extra.reason
    stray = objects_check([det("gloves"), det("chair"), det("lamp"), det(None)], graph, task)
    assert "lamp: not in the concept" in stray.reason and "1 unrecognised" in stray.reason


class _BoxesOnly:
    """A detector that gives boxes but no masks (grounding-dino+sam2 with masks: false)."""

    def __init__(self, detections):
        self.detections = detections

    def detect(self, image, labels=()):
        return self.detections


def test_background_masks_by_boxes_by_default_and_by_masks_on_request():
    """Two large dark objects on white, each in its box with a grey shadow around it. With
    boxes (the paper's rule) the rest of the image is white; before the fix a detector
    without masks made the check test the whole image, objects included, and reject it."""
    from autocomp.validators.base import Detection
    from autocomp.validators.checks import object_region

    image = np.full((100, 100, 3), 255, np.uint8)
    boxes = [(0, 0, 60, 100), (60, 20, 100, 80)]
    for x0, y0, x1, y1 in boxes:
        image[y0:y1, x0:x1] = (120, 120, 120)  # shadow / halo inside the box
        image[y0 + 4:y1 - 4, x0 + 4:x1 - 4] = (30, 30, 30)  # the object
    masks = []
    for x0, y0, x1, y1 in boxes:
        m = np.zeros((100, 100), bool)
        m[y0 + 4:y1 - 4, x0 + 4:x1 - 4] = True
        masks.append(m)
    no_masks = [Detection(n, b, 0.9) for n, b in zip(("cube", "sphere"), boxes, strict=True)]
    with_masks = [Detection(n, b, 0.9, m)
                  for n, b, m in zip(("cube", "sphere"), boxes, masks, strict=True)]

    def background(dets, region):
        mask = object_region(image.shape[:2], dets, region)
        return background_check(image, mask, 0.7, 190)

    assert object_region((100, 100), no_masks).sum() == 60 * 100 + 40 * 60
    assert background(no_masks, "boxes").evidence["bright_fraction"] == 1.0
    assert background(with_masks, "boxes").passed
    # masks leave the grey halo in the background: 100% vs ~59% bright
    by_mask = background(with_masks, "masks")
    assert not by_mask.passed and by_mask.evidence["bright_fraction"] < 0.7
    # a detection without a mask contributes its box under region "masks" too
    assert background(no_masks, "masks").passed
    # the old behaviour (no mask -> the whole image) rejected this clean image
    assert not background_check(image, None, 0.7, 190).passed
    with pytest.raises(ValueError, match="region must be"):
        object_region((10, 10), no_masks, "circles")


def test_validate_image_uses_boxes_for_a_detector_without_masks():
    from autocomp.core.scene import attribute_graph
    from autocomp.validators.base import Detection

    task = load_task("shape_color")
    graph = attribute_graph(["cube", "sphere"], ["red", "blue"])
    image = np.full((100, 100, 3), 255, np.uint8)
    image[0:100, 0:60] = (200, 30, 30)
    image[20:80, 60:100] = (30, 30, 200)
    dets = [Detection("cube", (0, 0, 60, 100), 0.9), Detection("sphere", (60, 20, 100, 80), 0.9)]
    class Oracle:
        def answer(self, image, qs, detections):
            return [{"answer": q.expected} for q in qs]

    results = validate_image(image, graph, task, "minimal", _BoxesOnly(dets), Oracle())
    bg = [r for r in results if r.name == "background"][0]
    assert bg.passed and bg.evidence["region"] == "boxes"
    assert bg.evidence["background_pixels"] == 100 * 100 - 60 * 100 - 40 * 60

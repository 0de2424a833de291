"""VQA validation keeps the GPU busy (issue 22, item 7): an image's questions share one
pass of the vision tower, and the attribute check asks a whole validation batch at once."""

import numpy as np
import pytest
from tiny_models import tiny_gemma_vlm, tiny_llava_vlm

from autocomp.concepts.questions import Question
from autocomp.validators.base import CheckResult, Detection
from autocomp.validators.checks import Check, Sample, validate_image, validate_images
from autocomp.validators.vqa import TransformersAnswerer

BUILDS = {"gemma3": tiny_gemma_vlm, "llava": tiny_llava_vlm}


@pytest.fixture(scope="module", params=sorted(BUILDS))
def vlm(request, tmp_path_factory):
    return str(BUILDS[request.param](tmp_path_factory.mktemp(request.param)))


def _images():
    a = np.full((32, 32, 3), 250, np.uint8)
    b = np.zeros((32, 32, 3), np.uint8)
    b[8:24, 8:24] = (200, 30, 30)
    return a, b


def _questions(k):
    return [Question(f"What color is the cube number {i}?", ("red", "blue"), "red", "cube")
            for i in range(k)]


def _tower_rows(answerer):
    """Rows the vision tower encodes, counted by a hook on the tower itself."""
    rows = []
    tower = answerer._load()[1].base_model.vision_tower
    tower.register_forward_hook(lambda mod, args, kwargs, out: rows.append(
        int((kwargs.get("pixel_values") if "pixel_values" in kwargs else args[0]).shape[0])),
        with_kwargs=True)
    return rows


def test_an_images_questions_share_one_pass_of_the_vision_tower(vlm):
    ans = TransformersAnswerer(model=vlm, max_new_tokens=3, device="cpu")
    rows = _tower_rows(ans)
    a, b = _images()
    got = ans.answer_many([(a, _questions(3), []), (b, _questions(2), [])])
    assert rows == [2]  # five questions, two images: one call, one row per image
    assert [len(g) for g in got] == [3, 2]


def test_sharing_the_encoding_changes_no_logit(vlm, monkeypatch):
    """The merged image embeddings are the same: the model's logits on a batch whose rows
    interleave two images equal those of encoding every row."""
    import torch

    from autocomp.models.encode_once import encode_once, groups
    from autocomp.models.loading import chat_padding as _padding
    from autocomp.validators.vqa import _pil

    ans = TransformersAnswerer(model=vlm, device="cpu")
    proc, model = ans._load()
    a, b = (_pil(x) for x in _images())
    pairs = [(a, "one?"), (b, "two?"), (a, "three?"), (b, "four?"), (a, "five?")]
    convs = [[{"role": "user", "content": [{"type": "image", "image": p},
                                           {"type": "text", "text": t}]}] for p, t in pairs]
    enc = proc.apply_chat_template(convs, tokenize=True, return_dict=True, return_tensors="pt",
                                   add_generation_prompt=True, **_padding(proc))
    counted = []
    with torch.inference_mode():
        every = model(**enc).logits
        with encode_once(model, groups([id(p) for p, _ in pairs]), counted):
            shared = model(**enc).logits
    assert counted == [2]
    assert torch.allclose(every, shared, atol=1e-5)
    assert groups(["a", "b", "a", "b", "a"]) == [0, 1, 0, 1, 0]


def test_rows_that_only_claim_one_image_are_each_encoded(vlm):
    """encode_once trusts pixels, not the caller: rows said to share an image whose pixels
    differ are encoded one by one."""
    import torch

    from autocomp.models.encode_once import encode_once

    model = TransformersAnswerer(model=vlm, device="cpu")._load()[1]
    size = model.config.vision_config.image_size
    pixels = torch.rand(3, 3, size, size)
    counted = []
    with torch.inference_mode(), encode_once(model, [0, 0, 0], counted):
        model.base_model.get_image_features(pixel_values=pixels)
    assert counted == [3]
    assert "get_image_features" not in vars(model.base_model)  # removed on the way out


class _Recording:
    """An answerer that answers every question right and records each call."""

    def __init__(self):
        self.calls = []

    def answer_many(self, jobs):
        self.calls.append(len(jobs))
        return [[{"answer": q.expected} for q in qs] for _, qs, _ in jobs]


class _Objects(Check):
    name, label = "objects", "Obj."

    def check(self, s):
        ok = bool(s.detections)
        return CheckResult("objects", ok, "found" if ok else "nothing found", {})


class _Questions:
    name = "t"

    def questions(self, graph):
        return _questions(2)


def test_the_attribute_check_asks_the_whole_batch_at_once():
    from autocomp.validators.checks import AttributesCheck

    answerer = _Recording()
    found = [Detection("cube", (0, 0, 4, 4), 0.9)]
    samples = [Sample(np.zeros((8, 8, 3), np.uint8), None, _Questions(), "contextual",
                      found if i != 1 else [], answerer) for i in range(4)]
    checks = [_Objects(), AttributesCheck()]
    results = validate_images(samples, checks)
    assert answerer.calls == [3]  # one call; the image that failed the objects check is not asked
    assert [[r.name for r in rs] for rs in results] == [
        ["objects", "attributes"], ["objects"], ["objects", "attributes"],
        ["objects", "attributes"]]
    assert all(rs[-1].passed for i, rs in enumerate(results) if i != 1)
    # the same results as the cascade image by image
    one = [validate_image(s.image, s.graph, s.task, s.track, None, _Recording(),
                          checks=checks, detections=s.detections) for s in samples]
    assert [[r.to_dict() for r in rs] for rs in one] == \
        [[r.to_dict() for r in rs] for rs in results]


def test_an_images_questions_stay_in_one_call_where_they_fit():
    from autocomp.validators.vqa import Asking

    class Counting(Asking):
        batch_size = 4

        def __init__(self):
            self.calls = []

        def ask(self, pairs):
            self.calls.append([len({id(p) for p, _ in pairs}), len(pairs)])
            return [text for _, text in pairs]

        def evidence(self):
            return {"model": "counting"}

    ans, img = Counting(), np.zeros((4, 4, 3), np.uint8)
    sizes = [3, 3, 1, 1, 6]
    got = ans.answer_many([(img, _questions(k), []) for k in sizes])
    # [images, questions] per call: no image split where its questions fit in one call
    assert ans.calls == [[1, 3], [2, 4], [1, 1], [1, 4], [1, 2]]
    assert [len(g) for g in got] == sizes
    assert got[4][5] == {"answer": "What color is the cube number 5?",
                         "evidence": {"model": "counting"}}

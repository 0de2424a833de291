"""Issue 23: memory bounded on large and hostile inputs (eval's image decoding; COMPASS
over Visual Genome), asserted with resource limits, not timings."""

import json
import subprocess
import sys

import pytest

from autocomp.core.errors import AutocompError

MEASURE = """
import resource, sys
from pathlib import Path
import numpy as np
from autocomp.eval.harness import Harness
from autocomp.eval.scorers.base import DualEncoder

class Sizes(DualEncoder):
    family, image_side = "sizes", 224
    def encode_images(self, images):
        self.sizes = [im.size for im in images]
        return np.ones((len(images), 4), dtype=np.float32)

scorer = Sizes("x", batch_size=4)
harness = Harness(scorer, Path(sys.argv[1]), {}, None, workers=4)
harness.budget.limit = 300 * 2**20
names = sys.argv[2:]
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
harness.image_vectors(names)
grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
print(json.dumps({"sizes": scorer.sizes, "grown_mb": grown}))
""".replace("import resource, sys", "import json, resource, sys")


@pytest.mark.slow
def test_eval_decodes_large_images_reduced_with_bounded_bytes_in_flight(tmp_path):
    """Major 8: four 6000 x 6000 PNGs at batch 4 held 4 full-size RGB images (858 MB
    peak); now each is reduced to what a 224 px model needs and at most 300 MB of full-size
    decodes are in flight, over 4 decode threads."""
    from PIL import Image

    for i in range(4):
        Image.new("RGB", (6000, 6000), (40 * i, 100, 200)).save(tmp_path / f"{i}.png")
    Image.new("RGB", (6000, 4000), (1, 2, 3)).save(tmp_path / "big.jpg", quality=90)
    names = [f"{i}.png" for i in range(4)]
    got = subprocess.run([sys.executable, "-c", MEASURE, str(tmp_path), *names],
                         capture_output=True, text=True, check=True)
    out = json.loads(got.stdout)
    assert out["sizes"] == [[1000, 1000]] * 4
    assert out["grown_mb"] < 250, out  # one 144 MB decode at a time, and its reduction
    jpeg = subprocess.run([sys.executable, "-c", MEASURE, str(tmp_path), "big.jpg"],
                          capture_output=True, text=True, check=True)
    assert json.loads(jpeg.stdout)["sizes"] == [[1500, 1000]]  # decoded at 1/4 (draft)


def test_reduction_leaves_ordinary_images_alone_and_keeps_the_input_side():
    from autocomp.eval.images import reduce_factor

    assert reduce_factor(1024, 1024, 224) == 1  # SD3.5 images under a 224 px model
    assert reduce_factor(640, 480, 224) == 1  # COCO
    assert reduce_factor(1024, 1024, None) == 1  # a scorer that does not say: 896 px
    assert reduce_factor(9460, 9460, 224) == 10  # 89 M pixels, just under PIL's limit
    assert reduce_factor(2000, 2000, 384) == 1  # SigLIP 384: short side kept >= 1536
    # a long strip: reduced by its pixels, its short side never below the input side
    assert reduce_factor(100_000, 895, 224) == 3


def test_a_crop_of_a_reduced_image_and_a_decompression_bomb(tmp_path, monkeypatch):
    from PIL import Image

    from autocomp.eval.images import open_image

    Image.new("RGB", (4000, 4000), (9, 9, 9)).save(tmp_path / "a.png")
    # a small crop keeps its pixels; a large one is reduced like a whole image
    assert open_image(tmp_path / "a.png", (100, 100, 300, 200), "c", 224).size == (300, 200)
    assert open_image(tmp_path / "a.png", (0, 0, 3600, 3600), "c", 224).size == (900, 900)
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1_000_000)
    with pytest.raises(AutocompError) as err:
        open_image(tmp_path / "a.png", None, "item-7", 224)
    line = str(err.value)
    assert "\n" not in line and "a.png" in line and "item item-7: image refused" in line
    assert "16000000 pixels" in line and "decompression bomb" in line


def _big_vg(folder, images: int):
    """A Visual Genome-format folder of `images` invented scenes over a small vocabulary
    (written by hand in VG's layout)."""
    import random

    rng = random.Random(0)
    names = ["man", "dog", "car", "tree", "cup", "lamp"]
    attrs = ["red", "blue", "green", "tall", "wooden"]
    preds = ["on", "near", "behind"]
    folder.mkdir()
    graphs, extra = [], []
    for i in range(images):
        objs = [{"object_id": 100 * i + k, "names": [rng.choice(names)],
                 "attributes": [rng.choice(attrs)]} for k in range(6)]
        rels = [{"subject_id": 100 * i + k, "object_id": 100 * i + k + 1,
                 "predicate": rng.choice(preds)} for k in range(5)]
        graphs.append({"image_id": i + 1, "objects": objs, "relationships": rels})
        extra.append({"image_id": i + 1, "attributes": [
            {"object_id": 100 * i, "attributes": [rng.choice(attrs)]}]})
    (folder / "scene_graphs.json").write_text(json.dumps(graphs))
    (folder / "attributes.json").write_text(json.dumps(extra))
    return folder


@pytest.mark.slow
def test_compass_vg_build_memory_is_flat_in_the_file_size(tmp_path, monkeypatch, logged):
    """Major 9: the build kept every raw entry and a second copy (2.73 GB for a 195 MB
    file); now scene_graphs.json is streamed and each image spilled as it is read, so the
    peak of Python allocations does not grow with the number of images; and the build
    prints progress."""
    import tracemalloc

    from autocomp.compass.build import build_vg

    def peak(images):
        vg = _big_vg(tmp_path / f"vg{images}", images)
        tracemalloc.start(1)
        manifest = build_vg(vg, vg, tmp_path / f"set{images}", candidates="vocabulary")
        top = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert manifest["images"] == images and manifest["counts"]["composed"] > images
        return top

    warm = _big_vg(tmp_path / "warm", 3)  # modules imported and loaded outside the count
    build_vg(warm, warm, tmp_path / "warm-set", candidates="vocabulary")
    small, large = peak(15), peak(60)
    # 4x the images, the same memory (before: every raw entry and its copy were held)
    assert large < 1.5 * small, (small, large)  # before: 16 MB and 78 MB
    monkeypatch.setenv("AUTOCOMP_PROGRESS_EVERY", "0")
    logged()
    build_vg(tmp_path / "vg15", tmp_path / "vg15", tmp_path / "again",
             candidates="vocabulary")
    err = "\n".join(logged())
    assert "... compass build: reading scene_graphs.json:" in err
    assert "... compass build: writing the sets:" in err and "of 15 (" in err

"""eval/images.py: eval decodes images with bounded memory on large and hostile inputs
(issue 23), asserted with resource limits, not timings."""

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner
from conftest import shape_color_run

from autocomp.cli import main
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


@pytest.mark.parametrize("image, needle", [
    ("../../etc/passwd", "lies outside"),
    ("/etc/hostname", "lies outside"),
    ("/dev/zero", "lies outside"),
    ("images/fifo", "is not a regular file"),
    ("images/none.png", "does not exist"),
    ("images/truncated.png", "image cannot be read"),
    ("images/text.png", "image cannot be read"),
])
def test_eval_item_images_are_confined_and_checked(tmp_path, image, needle):
    import json
    import os

    from tiny_models import tiny_open_clip

    run = shape_color_run(tmp_path)
    os.mkfifo(run.dir / "images" / "fifo")
    good = next((run.dir / "images").rglob("*.png")).read_bytes()
    (run.dir / "images" / "truncated.png").write_bytes(good[:len(good) // 2])
    (run.dir / "images" / "text.png").write_text("not an image")
    path = next((run.dir / "bench").glob("shape_color-n2/minimal-swap.jsonl"))
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    rows[1]["image"] = image
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    spec = f"open_clip:local-dir:{tiny_open_clip(tmp_path / 'oc')}"
    out = CliRunner().invoke(main, ["eval", str(run.dir), "--model", spec, "--benchmark",
                                    "shape_color-n2/minimal-swap"])
    assert out.exit_code != 0 and needle in out.output, out.output
    assert f"item {rows[1]['id']}" in out.output and "Traceback" not in out.output

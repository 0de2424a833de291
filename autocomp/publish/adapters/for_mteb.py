"""mteb / MIEB: an image-text pair classification task per config of the export."""

from __future__ import annotations

import json
from pathlib import Path

from autocomp.publish.adapters import copy_template

FILE = "harness/mteb_autocomp.py"


def write(folder: Path, manifest: dict, dataset_path: str) -> dict:
    from autocomp.publish.card import CITATION

    copy_template("mteb_autocomp.py", folder / FILE,
                  {"CITATION": json.dumps(CITATION)[1:-1]})
    return {"title": "mteb / MIEB", "files": [FILE], "usage": (
        "An `AbsTaskImageTextPairClassification` task per config (captions `caption_0` = "
        "the positive .. `caption_K`); main score `text_acc` (Winoground configs: "
        "`accuracy`, the group score). MIEB takes the argmax (`autocomp eval --ties "
        "argmax` agrees).\n\n"
        "```python\nimport sys; sys.path.insert(0, \"harness\")\nimport mteb\n"
        "from mteb_autocomp import tasks\n"
        "results = mteb.evaluate(mteb.get_model(\"openai/clip-vit-base-patch32\"), "
        "tasks())\n```")}

"""CLIP_benchmark: its image_caption_selection metric on every config of the export."""

from __future__ import annotations

from pathlib import Path

from autocomp.publish.adapters import copy_template

FILE = "harness/clip_benchmark_autocomp.py"


def write(folder: Path, manifest: dict, dataset_path: str) -> dict:
    copy_template("clip_benchmark_autocomp.py", folder / FILE)
    return {"title": "CLIP_benchmark", "files": [FILE], "usage": (
        "Its `image_caption_selection` metric (I images x C captions, image i matches "
        "caption i) on every config; `text_acc` is the accuracy (`acc`, `image_acc` too on "
        "synthetic Winoground). It takes the argmax: a tie counts right when the positive "
        "is among the tied (`autocomp eval --ties argmax` agrees).\n\n"
        "```sh\npip install clip_benchmark datasets\n"
        f"python {FILE} --model ViT-B-32-quickgelu --pretrained openai\n```\n\n"
        "or from Python, with a model, transform and tokenizer CLIP_benchmark loads:\n\n"
        "```python\nimport sys; sys.path.insert(0, \"harness\")\n"
        "from clip_benchmark_autocomp import evaluate\n"
        "metrics = evaluate(model, transform, tokenizer, \"CONFIG\")\n```")}

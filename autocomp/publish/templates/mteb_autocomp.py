"""This autocomp export as mteb/MIEB image-text pair classification tasks, one per config.

    pip install mteb datasets
    import mteb, sys; sys.path.insert(0, "harness")
    from mteb_autocomp import tasks
    results = mteb.evaluate(mteb.get_model("openai/clip-vit-base-patch32"), tasks())

A single-image config is a task with the column `image` and the captions `caption_0` (the
positive) .. `caption_K` (its negatives, in the export's order); its main score is
text_acc, the accuracy (image_acc and accuracy are not meaningful with one image). A
synthetic Winoground config has `image_0`, `image_1`, `caption_0`, `caption_1`: text_acc,
image_acc and accuracy are the text, image and group scores. MIEB takes the argmax, so a
tie counts as the first of the tied captions: `autocomp eval --ties argmax` gives the same
numbers. Every item of a task must carry the same number of negatives (MIEB reshapes the
captions to items x K + 1); a config whose items differ is refused with its counts.
"""

from __future__ import annotations

import json
import os

from mteb.abstasks.image.image_text_pair_classification import (
    AbsTaskImageTextPairClassification,
)
from mteb.abstasks.task_metadata import TaskMetadata

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CITATION = "{{CITATION}}"  # filled with a JSON-escaped string body: valid Python escapes


def configs(path: str = HERE) -> dict:
    """config name -> its manifest entry (task, n, track, kind, rows, negatives)."""
    with open(_manifest(path), encoding="utf-8") as fh:
        return json.load(fh)["configs"]


def _manifest(path: str) -> str:
    """The export's manifest: in the folder, or fetched from the hub repo `path`."""
    if os.path.isdir(path):
        return os.path.join(path, "autocomp_export.json")
    from huggingface_hub import hf_hub_download

    return hf_hub_download(path, "autocomp_export.json", repo_type="dataset")


def _negatives(entry: dict) -> int:
    if not entry["rows"] or entry["negatives_shown"] % entry["rows"]:
        raise ValueError(f"items of {entry} carry different numbers of negatives: MIEB "
                         "needs one count per task (export with --max-negatives K)")
    return entry["negatives_shown"] // entry["rows"]


def task(config: str, path: str = HERE, revision: str = "local"):
    """The mteb task of one config of the export at `path` (a folder or a hub id)."""
    entry = configs(path)[config]
    winoground = config.endswith("-winoground")
    texts = (("caption_0", "caption_1") if winoground else
             tuple(f"caption_{j}" for j in range(1 + _negatives(entry))))

    class AutocompTask(AbsTaskImageTextPairClassification):
        images_column_names = ("image_0", "image_1") if winoground else "image"
        texts_column_names = texts
        metadata = TaskMetadata(
            name=f"AutoComp-{config}",
            description=f"autocomp benchmark {config}: one image, its true caption and "
                        "hard negatives that are graph edits of its scene graph"
                        if not winoground else f"autocomp synthetic Winoground {config}",
            reference="https://pypi.org/project/autocomp/",
            dataset={"path": path, "name": config, "revision": revision},
            type="Compositionality", category="i2t", eval_splits=["test"],
            eval_langs=["eng-Latn"], main_score="accuracy" if winoground else "text_acc",
            date=("2025-01-01", "2026-12-31"), domains=["Encyclopaedic"],
            task_subtypes=["Caption Pairing"], license="cc-by-4.0",
            annotations_creators="algorithmic", dialect=[], modalities=["text", "image"],
            sample_creation="created", bibtex_citation=CITATION)

        def load_data(self, num_proc=None, **kwargs):
            import datasets

            if self.data_loaded:
                return
            rows = datasets.load_dataset(path, config, split="test")
            if not winoground:
                k = len(texts) - 1

                def columns(batch):
                    out = {"caption_0": batch["positive"]}
                    for j in range(k):
                        out[f"caption_{j + 1}"] = [n[j] for n in batch["negatives"]]
                    return out

                counts = {len(n) for n in rows["negatives"]}
                if counts != {k}:
                    raise ValueError(f"{config}: items carry {sorted(counts)} negatives; "
                                     "MIEB needs one count per task")
                rows = rows.map(columns, batched=True, num_proc=num_proc)
            self.dataset = datasets.DatasetDict({"test": rows})
            self.data_loaded = True

    return AutocompTask()


def tasks(path: str = HERE, only=None) -> list:
    """A task per config (or those named in `only`)."""
    return [task(name, path) for name in configs(path) if not only or name in only]

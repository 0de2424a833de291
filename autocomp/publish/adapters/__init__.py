"""The harness adapters an export carries, each a plain file a stranger runs without
autocomp (harness/ in the export), copied from publish/templates/ with the export's
dataset path filled in:

  for_clip_benchmark  harness/clip_benchmark_autocomp.py: CLIP_benchmark's
                      image_caption_selection metric (I images x C captions, image i
                      matches caption i) on every config
  for_mteb            harness/mteb_autocomp.py: an mteb/MIEB image-text pair
                      classification task per config
  for_lmms_eval       harness/lmms_eval/: a task folder for generative VLMs (multiple
                      choice, its CircularEval rotations, yes/no per caption), loaded with
                      --include_path
  for_vlmevalkit      harness/vlmevalkit_tsv.py: writes VLMEvalKit's multiple-choice TSVs
                      (the same questions as lmms-eval's) into $LMUData

Each module has `write(folder, manifest, dataset_path) -> {"title", "files", "usage"}`.
"""

from __future__ import annotations

import importlib
from pathlib import Path

ADAPTERS = ("for_clip_benchmark", "for_mteb", "for_lmms_eval", "for_vlmevalkit")
TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


def copy_template(name: str, dest: Path, fill: dict[str, str] | None = None) -> Path:
    """A template file copied to `dest`, each "{{KEY}}" replaced by fill[KEY]."""
    text = (TEMPLATES / name).read_text(encoding="utf-8")
    for key, value in (fill or {}).items():
        text = text.replace("{{" + key + "}}", value)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(text, encoding="utf-8")
    return dest


def write_all(folder: Path, manifest: dict, dataset_path: str) -> dict:
    out = {}
    for name in ADAPTERS:
        module = importlib.import_module(f"autocomp.publish.adapters.{name}")
        out[name.removeprefix("for_")] = module.write(Path(folder), manifest, dataset_path)
    return out

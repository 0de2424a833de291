"""VLMEvalKit: a script that writes each config as a multiple-choice TSV its custom-MCQ
loader reads (VLMEvalKit is not on PyPI; the TSVs are made where it is installed, from the
export's parquet, so the export carries no second copy of its images)."""

from __future__ import annotations

from pathlib import Path

from autocomp.publish.adapters import copy_template

FILE = "harness/vlmevalkit_tsv.py"


def write(folder: Path, manifest: dict, dataset_path: str) -> dict:
    copy_template("vlmevalkit_tsv.py", folder / FILE)
    example = next(iter(manifest["configs"]), "CONFIG")
    return {"title": "VLMEvalKit", "files": [FILE], "usage": (
        "Multiple-choice TSVs for its custom-MCQ loader (index, image, question, A, B, ..., "
        "answer, category): the same options, subset and order as the lmms-eval tasks; "
        "`--circular` writes every rotation for its CircularEval.\n\n"
        "```sh\npython harness/vlmevalkit_tsv.py --lmudata ~/LMUData\n"
        f"python run.py --data AutoComp_{example} --model Qwen2-VL-7B-Instruct\n```")}

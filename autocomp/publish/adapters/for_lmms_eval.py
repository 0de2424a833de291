"""lmms-eval: a task folder for generative VLMs (YAML per task + utils.py), loaded with
`--include_path harness/lmms_eval`: multiple choice with seeded shuffled letters, its
CircularEval rotations, and yes/no per caption, for every config."""

from __future__ import annotations

import json
from pathlib import Path

from autocomp.publish.adapters import copy_template

FOLDER = "harness/lmms_eval"
OPTIONS = 26  # the letters A..Z
MODES = {"mc": "mc_docs", "circular": "circular_docs", "yesno": "yesno_docs"}


def task_name(config: str, mode: str) -> str:
    return f"autocomp_{config.replace('-', '_')}_{mode}"


def _yaml(config: str, mode: str, dataset_path: str) -> str:
    max_tokens = 8 if mode == "yesno" else 16
    return (f"dataset_path: {json.dumps(dataset_path)}\n"
            f"dataset_name: {json.dumps(config)}\n"
            f"task: {task_name(config, mode)}\n"
            "tag: autocomp\n"
            "test_split: test\n"
            "output_type: generate_until\n"
            f"process_docs: !function utils.{MODES[mode]}\n"
            "doc_to_visual: !function utils.doc_to_visual\n"
            "doc_to_text: !function utils.doc_to_text\n"
            "doc_to_target: !function utils.doc_to_target\n"
            "process_results: !function utils.process_results\n"
            "metric_list:\n"
            "  - metric: item_accuracy\n"
            "    aggregation: !function utils.item_accuracy\n"
            "    higher_is_better: true\n"
            "  - metric: question_accuracy\n"
            "    aggregation: !function utils.question_accuracy\n"
            "    higher_is_better: true\n"
            "generation_kwargs:\n"
            f"  max_new_tokens: {max_tokens}\n"
            "  temperature: 0\n"
            "  do_sample: false\n"
            "metadata:\n"
            "  version: 1.0\n")


def write(folder: Path, manifest: dict, dataset_path: str) -> dict:
    out = Path(folder) / FOLDER
    copy_template("lmms_eval_utils.py", out / "utils.py",
                  {"OPTIONS": str(OPTIONS), "SEED": str(manifest.get("negatives_seed") or 0)})
    files = [f"{FOLDER}/utils.py"]
    for config in manifest["configs"]:
        for mode in MODES:
            name = f"{task_name(config, mode)}.yaml"
            (out / name).write_text(_yaml(config, mode, dataset_path), encoding="utf-8")
            files.append(f"{FOLDER}/{name}")
    example = next(iter(manifest["configs"]), "CONFIG")
    return {"title": "lmms-eval", "files": files, "usage": (
        "A task folder for generative VLMs: per config, `..._mc` (the positive and up to "
        f"{OPTIONS - 1} negatives as lettered options, shuffled with a seed per item), "
        "`..._circular` (every rotation of those options; right only if right under "
        "all, as CircularEval) and `..._yesno` (a question per caption; right only with "
        "yes to the positive and no to every negative). `item_accuracy` is the number to "
        "compare; the tag `autocomp` runs them all. The YAMLs name the dataset at "
        f"`{dataset_path}` (export with --push-to-hub to name the hub repo).\n\n"
        "```sh\npip install lmms_eval\n"
        f"python -m lmms_eval --model llava_hf --model_args pretrained=llava-hf/llava-1.5-7b-hf "
        f"--tasks {task_name(example, 'mc')} --include_path {FOLDER} --batch_size 1\n```")}

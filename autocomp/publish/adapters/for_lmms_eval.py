"""lmms-eval: a task folder for generative VLMs (YAML per task + utils.py), loaded with
`--include_path harness/lmms_eval`: multiple choice with seeded shuffled letters, its
CircularEval rotations, and yes/no per caption, for every config."""

from __future__ import annotations

from pathlib import Path

import yaml

from autocomp.publish.adapters import copy_template

FOLDER = "harness/lmms_eval"
OPTIONS = 26  # the letters A..Z
MODES = {"mc": "mc_docs", "circular": "circular_docs", "yesno": "yesno_docs"}


def task_name(config: str, mode: str) -> str:
    return f"autocomp_{config.replace('-', '_')}_{mode}"


class Function(str):
    """lmms-eval's `!function module.name` reference (its own YAML tag)."""


class _Dumper(yaml.SafeDumper):
    """yaml's safe dumper plus the `!function` tag: every value is quoted as YAML needs, so
    no name can add or change a key."""


_Dumper.add_representer(Function, lambda dumper, value: dumper.represent_scalar(
    "!function", str(value)))


def task_yaml(config: str, mode: str, dataset_path: str) -> dict:
    """One task's configuration, as lmms-eval reads it. A local export's dataset is named
    by `utils.EXPORT_FOLDER` (the folder two up from utils.py, found when lmms-eval loads
    the YAML), so the export moves whole; a hub export's by its repo id."""
    where = Function("utils.EXPORT_FOLDER") if Path(dataset_path).is_absolute() \
        else str(dataset_path)
    accuracy = [{"metric": m, "aggregation": Function(f"utils.{m}"), "higher_is_better": True}
                for m in ("item_accuracy", "question_accuracy")]
    return {"dataset_path": where, "dataset_name": str(config),
            "task": task_name(config, mode), "tag": "autocomp", "test_split": "test",
            "output_type": "generate_until", "process_docs": Function(f"utils.{MODES[mode]}"),
            **{k: Function(f"utils.{k}") for k in ("doc_to_visual", "doc_to_text",
                                                   "doc_to_target", "process_results")},
            "metric_list": accuracy,
            "generation_kwargs": {"max_new_tokens": 8 if mode == "yesno" else 16,
                                  "temperature": 0, "do_sample": False},
            "metadata": {"version": 1.0}}


def _yaml(config: str, mode: str, dataset_path: str) -> str:
    return yaml.dump(task_yaml(config, mode, dataset_path), Dumper=_Dumper, sort_keys=False,
                     allow_unicode=True)


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
        "compare; the tag `autocomp` runs them all. The YAMLs name "
        + (f"the dataset at `{dataset_path}`" if not Path(dataset_path).is_absolute() else
           "this export's folder wherever it is moved (export with --push-to-hub to name "
           "the hub repo instead)") + ".\n\n"
        "```sh\npip install lmms_eval\n"
        f"python -m lmms_eval --model llava_hf --model_args pretrained=llava-hf/llava-1.5-7b-hf "
        f"--tasks {task_name(example, 'mc')} --include_path {FOLDER} --batch_size 1\n```")}

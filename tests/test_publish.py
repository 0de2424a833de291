"""`autocomp export RUN`: every benchmark as a dataset config with its negatives, a card the
Hub reads, and harness adapters that give autocomp's numbers under the harness's tie rule
(CLIP_benchmark and mteb/MIEB run from PyPI, their own code)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from autocomp.cli import main
from autocomp.core.errors import AutocompError

# every test here builds or scores an export with the harnesses' own code: slow (the inner
# loop leaves them, README's command runs them)
pytestmark = pytest.mark.slow

CONFIG = """name: pub
seed: 0
concepts:
  - {task: shape_color, n: [1, 2, 3], count: 8}
  - {task: shape_position, n: [2], count: 8}
captions:
  options: {slip_rate: 0.0}
generate:
  options: {size: 96}
build:
  benchmarks: [swap, confusion, vary_value, vary_object, winoground]
"""


@pytest.fixture(autouse=True)
def _pil_as_it_was():
    """lmms-eval sets PIL's LOAD_TRUNCATED_IMAGES at import (lmms_eval/api/task.py): put it
    back, so later tests in this process still see a truncated image refused."""
    from PIL import ImageFile

    before = ImageFile.LOAD_TRUNCATED_IMAGES
    yield
    ImageFile.LOAD_TRUNCATED_IMAGES = before


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    root = tmp_path_factory.mktemp("pub")
    mp.setenv("HF_HUB_OFFLINE", "1")
    mp.setenv("HF_DATASETS_CACHE", str(root / "hf-datasets"))
    mp.setenv("AUTOCOMP_CACHE", str(root / "autocomp-cache"))
    yield root
    mp.undo()


@pytest.fixture(scope="module")
def run(env):
    from conftest import built_run

    return built_run(env, CONFIG)


@pytest.fixture(scope="module")
def exported(run, env):
    out = env / "export"
    got = CliRunner().invoke(main, ["export", str(run.dir), "-o", str(out)])
    assert got.exit_code == 0, got.output
    return out


def _run_items(run) -> dict:
    from autocomp.formats.runs import find_benchmarks

    return {b.slug: list(b.items()) for b in find_benchmarks(run.dir)}


def _load(folder, config):
    import datasets

    return datasets.load_dataset(str(folder), config, split="test")


def test_every_config_loads_with_datasets_and_holds_every_negative(run, exported):
    items = _run_items(run)
    manifest = json.loads((exported / "autocomp_export.json").read_text())
    assert sorted(manifest["configs"]) == sorted(items)
    assert {c["kind"] for c in manifest["configs"].values()} == {
        "swap", "confusion", "vary_value", "vary_object", "winoground"}
    for config, want in items.items():
        ds = _load(exported, config)
        assert len(ds) == len(want) == manifest["configs"][config]["rows"]
        for row, item in zip(ds, want, strict=True):
            assert row["id"] == item["id"]
            if item["kind"] == "winoground":
                assert [row["caption_0"], row["caption_1"]] == item["captions"]
                for i in range(2):
                    assert row[f"image_{i}"].size == (96, 96)
                    assert json.loads(row[f"graph_{i}"]) == item["graphs"][i]
                assert row["chance_group"] == pytest.approx(1 / 6)
                continue
            negs = item["negatives"]
            assert row["positive"] == item["positive"]
            assert row["negatives"] == [n["caption"] for n in negs]
            assert row["negative_categories"] == [n["category"] for n in negs]
            assert row["negative_same_meaning"] == [n["same_meaning"] for n in negs]
            assert [json.loads(e) for e in row["negative_edits"]] == [n["edit"] for n in negs]
            assert row["negatives_total"] == len(negs)
            assert row["chance"] == pytest.approx(1 / (1 + len(negs)))
            assert json.loads(row["graph"]) == item["graph"]
            assert np.array_equal(np.asarray(row["image"].convert("RGB")), np.asarray(
                __import__("PIL.Image").Image.open(run.dir / item["image"]).convert("RGB")))
    assert max(len(i["negatives"]) for i in items["shape_color-n3-minimal-confusion"]) == 728


def test_the_card_header_names_every_config_and_its_files(exported):
    text = (exported / "README.md").read_text()
    header = yaml.safe_load(text.split("---\n")[1])
    manifest = json.loads((exported / "autocomp_export.json").read_text())
    configs = {c["config_name"]: c for c in header["configs"]}
    assert set(configs) == set(manifest["configs"])
    for name, c in configs.items():
        (files,) = c["data_files"]
        assert files["split"] == "test"
        found = sorted(p.relative_to(exported).as_posix() for p in exported.glob(files["path"]))
        assert found == manifest["configs"][name]["files"] and found
    infos = {i["config_name"]: i for i in header["dataset_info"]}
    assert set(infos) == set(configs)
    single = {f["name"]: f for f in infos["shape_color-n2-minimal-swap"]["features"]}
    assert single["image"]["dtype"] == "image"
    assert (single["negatives"].get("list") or single["negatives"].get("sequence")) == "string"
    wino = {f["name"] for f in infos["shape_color-n2-minimal-winoground"]["features"]}
    assert {"image_0", "image_1", "caption_0", "caption_1"} <= wino
    assert infos["shape_color-n2-minimal-swap"]["splits"][0]["num_examples"] == \
        manifest["configs"]["shape_color-n2-minimal-swap"]["rows"]
    # num_bytes is the data uncompressed (as `datasets` means it), download_size the files
    import pyarrow.parquet as pq

    swap = manifest["configs"]["shape_color-n2-minimal-swap"]
    data = sum(pq.ParquetFile(exported / f).metadata.row_group(i).total_byte_size
               for f in swap["files"]
               for i in range(pq.ParquetFile(exported / f).metadata.num_row_groups))
    info = infos["shape_color-n2-minimal-swap"]
    assert info["splits"][0]["num_bytes"] == info["dataset_size"] == data
    assert info["download_size"] == swap["bytes"] != data
    for key in ("license", "task_categories", "tags", "pretty_name"):
        assert header[key]
    body = text.split("---\n", 2)[2]
    for needle in ("## Configs", "Survival funnel", "Validator agreement", "## Blind audit",
                   "## Ties", "### CLIP_benchmark", "### mteb / MIEB", "## Provenance",
                   "@misc{autocomp", "chance %"):
        assert needle in body, needle
    # issue 68: the card called Confusion negatives "all permutations"; they are every
    # assignment with repetition, as the rows say: N^N x N^N - 1 = 15 at N = 2
    assert "each with repetition (N^N x N^N - 1 = 728 at N = 3" in " ".join(body.split())
    confusion = manifest["configs"]["shape_color-n2-minimal-confusion"]["files"]
    totals = {t for f in confusion
              for t in pq.read_table(exported / f, columns=["negatives_total"])
              .column(0).to_pylist()}
    assert max(totals) == 2 ** 2 * 2 ** 2 - 1


def _kept(item_id, captions, k, seed):
    """The subset rule, written out again: the K captions of smallest sha256."""
    keys = {c: hashlib.sha256(f"{seed}:{item_id}:{c}".encode()).hexdigest() for c in captions}
    chosen = set(sorted(captions, key=keys.get)[:k])
    return [c for c in captions if c in chosen]


def test_max_negatives_exports_a_recorded_seeded_subset(run, env):
    items = _run_items(run)["shape_color-n3-minimal-confusion"]
    subsets = {}
    for seed in (1, 2):
        out = env / f"sub{seed}"
        got = CliRunner().invoke(main, ["export", str(run.dir), "-o", str(out), "--no-audit",
                                        "--max-negatives", "49", "--seed", str(seed)])
        assert got.exit_code == 0, got.output
        manifest = json.loads((out / "autocomp_export.json").read_text())
        assert manifest["max_negatives"] == 49 and manifest["negatives_seed"] == seed
        ds = _load(out, "shape_color-n3-minimal-confusion")
        for row, item in zip(ds, items, strict=True):
            caps = [n["caption"] for n in item["negatives"]]
            assert row["negatives"] == _kept(item["id"], caps, 49, seed)
            assert row["negatives_total"] == 728 and row["chance"] == pytest.approx(1 / 50)
        subsets[seed] = [r["negatives"] for r in ds]
        swap = _load(out, "shape_color-n3-minimal-swap")  # 5 negatives: all kept
        assert all(len(r["negatives"]) == r["negatives_total"] == 5 for r in swap)
        assert "seed " + str(seed) in (out / "README.md").read_text()
    assert subsets[1] != subsets[2]


def _autocomp(folder, model, ties, out):
    got = CliRunner().invoke(main, ["eval", str(folder), "--model", model, "--ties", ties,
                                    "-o", str(out)])
    assert got.exit_code == 0, got.output
    results = {}
    for path in out.rglob("*.json"):
        data = json.loads(path.read_text())
        if isinstance(data, dict) and "metrics" in data and "benchmark" in data:
            rows = path.with_suffix(".predictions.jsonl").read_text().splitlines()
            data["predictions"] = [json.loads(r) for r in rows]
            results[data["benchmark"].replace("/", "-")] = data
    return results


@pytest.fixture(scope="module")
def tiny_clip(env):
    from tiny_models import tiny_open_clip

    # 8 tokens: captions alike in their first words tie, so the tie rules differ
    return tiny_open_clip(env / "clip", context_length=8)


def _tied(row: dict, key: str) -> bool:
    """Whether an exact tie decides the item's `key` outcome (text, image, group or the
    one-caption-list `correct`): a harness's float rounding may split it either way."""
    if "scores" not in row:  # one positive and its negatives
        return not row["correct"] and row["tie_credit"] > 0
    scores = np.asarray(row["scores"])
    rows = any(len(set(r)) < len(r) for r in scores)
    cols = any(len(set(c)) < len(c) for c in scores.T)
    return {"text": rows, "image": cols, "group": rows or cols}[key]


def _within(harness: float, rows: list[dict], key: str, label) -> int:
    """The harness counts right every item autocomp counts right strictly and, at most, the
    items an exact tie decides: strict <= harness <= strict + tied. Returns the tied count.
    (How a harness's matmul splits a tie of bitwise-equal embeddings depends on the BLAS,
    its threads and the load, so nothing more holds on every run.)"""
    judged = [r for r in rows if r[key] is not None]
    right = sum(bool(r[key]) for r in judged)
    tied = sum(_tied(r, key) for r in judged if not r[key])
    count = round(harness * len(judged))
    assert right <= count <= right + tied, (label, key, harness, len(judged), right, tied)
    return tied


def _agree(config, harness: dict, ours: dict, group_key: str) -> int:
    """The harness's scores are autocomp's up to exact ties: text_acc the accuracy, and on a
    Winoground config image_acc and its group score (`group_key`) too. Returns how many
    outcomes a tie decided."""
    rows = ours["predictions"]
    if config.endswith("winoground"):
        return sum(_within(harness[theirs], rows, key, config)
                   for theirs, key in (("text_acc", "text"), ("image_acc", "image"),
                                       (group_key, "group")))
    return _within(harness["text_acc"], rows, "correct", config)


def test_clip_benchmark_gives_autocomps_numbers_under_argmax(exported, tiny_clip, env):
    from clip_benchmark.models import load_clip

    sys.path.insert(0, str(exported / "harness"))
    try:
        import clip_benchmark_autocomp as adapter
    finally:
        sys.path.remove(str(exported / "harness"))
    ours = _autocomp(exported, f"open_clip:local-dir:{tiny_clip}", "argmax",
                     env / "res-argmax")
    model, transform, tokenizer = load_clip("open_clip", f"local-dir:{tiny_clip}", None, None,
                                            "cpu")
    model.eval()
    tied = 0
    for config in adapter.configs(str(exported)):
        got = adapter.evaluate(model, transform, tokenizer, config, str(exported))
        assert ours[config]["ties"] == "argmax"
        tied += _agree(config, got, ours[config], "acc")
    assert tied  # ties happened (8 tokens), so the bounds were put to the test


def test_the_clip_benchmark_adapter_writes_its_json_for_any_model_name(
        exported, tiny_clip, tmp_path, monkeypatch, capsys):
    """Issue 53: `local-dir:/abs/path` (or hf-hub:org/name) in the default --output
    template made a path into folders that do not exist, after scoring: the numbers were
    lost. Now the numbers print first and the names are made file-safe."""
    sys.path.insert(0, str(exported / "harness"))
    try:
        import clip_benchmark_autocomp as adapter
    finally:
        sys.path.remove(str(exported / "harness"))
    config = adapter.configs(str(exported))[0]
    monkeypatch.chdir(tmp_path)
    adapter.main(["--model", f"local-dir:{tiny_clip}", "--pretrained", "", "--dataset",
                  str(exported), "--config", config, "--model_type", "open_clip"])
    (written,) = tmp_path.glob("*.json")
    assert written.name.startswith(f"{config}_notag_local-dir_")  # issue 68: "_model_"
    result = json.loads(written.read_text())
    assert result["model"] == f"local-dir:{tiny_clip}" and "text_acc" in result["metrics"]
    printed = capsys.readouterr()
    assert printed.out.startswith(config)
    # never silent while the model loads and the export is read (issue 53: 35 s)
    assert printed.err.splitlines()[:4] == [
        "importing torch and CLIP_benchmark",
        f"loading open_clip local-dir:{tiny_clip} (no tag) on cpu",
        f"reading the configs of {exported}", f"[1/1] {config}: loading and scoring (a bar "
        "follows)"]


def test_mieb_tasks_give_autocomps_numbers_under_argmax(exported, tiny_clip, env):
    import mteb
    import open_clip
    import torch
    from mteb.models.abs_encoder import AbsEncoder
    from mteb.models.model_meta import ModelMeta

    sys.path.insert(0, str(exported / "harness"))
    try:
        import mteb_autocomp
    finally:
        sys.path.remove(str(exported / "harness"))

    class TinyClip(AbsEncoder):  # the user's model: MIEB's evaluator and metric do the rest
        def __init__(self, name):
            self.model, _, self.preprocess = open_clip.create_model_and_transforms(
                name, pretrained=None)
            self.model.eval()
            self.tokenizer = open_clip.get_tokenizer(name)
            self.mteb_model_meta = ModelMeta(
                loader=None, name="test/tiny-clip", revision="1", release_date=None,
                languages=["eng-Latn"], n_parameters=None, memory_usage_mb=None,
                max_tokens=8, embed_dim=32, license=None, open_weights=True,
                public_training_code=None, public_training_data=None, framework=["PyTorch"],
                similarity_fn_name="cosine", use_instructions=False, training_datasets=None,
                modalities=["image", "text"])

        def encode(self, inputs, *, task_metadata, hf_split, hf_subset, prompt_type=None,
                   **kwargs):
            out = []
            with torch.no_grad():
                for batch in inputs:
                    if "text" in batch:
                        out.append(self.model.encode_text(self.tokenizer(batch["text"])))
                    else:
                        out.append(self.model.encode_image(torch.stack(
                            [self.preprocess(im) for im in batch["image"]])))
            return torch.cat(out)

    ours = _autocomp(exported, f"open_clip:local-dir:{tiny_clip}", "argmax",
                     env / "res-mieb")
    tasks = mteb_autocomp.tasks(str(exported))
    results = mteb.evaluate(TinyClip(f"local-dir:{tiny_clip}"), tasks, cache=None,
                            overwrite_strategy="always", show_progress_bar=False)
    assert len(results.task_results) == len(ours)
    for r in results.task_results:
        config = r.task_name.removeprefix("AutoComp-")
        (scores,) = r.scores["test"]
        _agree(config, scores, ours[config], "accuracy")
        main = "accuracy" if config.endswith("winoground") else "text_acc"
        assert scores["main_score"] == scores[main]


def test_autocomp_scores_an_export_as_it_scores_the_run(run, exported, env):
    from_run = _autocomp(run.dir, "reference:oracle", "strict", env / "r-run")
    from_export = _autocomp(exported, "reference:oracle", "strict", env / "r-export")
    assert from_export.keys() == from_run.keys()
    for k, r in from_run.items():
        assert from_export[k]["metrics"]["accuracy"] == r["metrics"]["accuracy"] == 100.0
        assert from_export[k]["format"] == "autocomp-export"


def test_push_to_hub_offline_is_one_line(run, env):
    got = CliRunner().invoke(main, ["export", str(run.dir), "-o", str(env / "hub"),
                                    "--no-audit", "--push-to-hub", "me/autocomp-pub"])
    assert got.exit_code == 1
    assert "cannot push to the hub: HF_HUB_OFFLINE is set" in got.output
    assert (env / "hub" / "README.md").is_file()  # the export is kept


def test_tie_rules_on_one_item_and_on_a_winoground_pair():
    from autocomp.eval.matrix import matrix_outcome
    from autocomp.eval.metrics import Tally, outcome

    tied = outcome(np.array([0.5, 0.5, 0.1]))
    assert (tied["strict"], tied["argmax"], tied["tie_credit"]) == (False, True, 0.5)
    below = outcome(np.array([0.4, 0.5, 0.4]))
    assert (below["strict"], below["argmax"], below["tie_credit"]) == (False, False, 0.0)
    # image 1 ties its two captions: argmax picks caption 0, the wrong one for image 1
    m = matrix_outcome([[0.9, 0.1], [0.5, 0.5]], [[1, 0], [0, 1]])
    assert (m["text"], m["text_argmax"]) == (False, False)
    # image 0 ties: argmax picks caption 0, its own
    m = matrix_outcome([[0.5, 0.5], [0.1, 0.9]], [[1, 0], [0, 1]])
    assert (m["text"], m["text_argmax"], m["text_tie"]) == (False, True, 0.5)
    for rule, want in (("strict", 0.0), ("aware", 50.0), ("argmax", 100.0)):
        t = Tally(rule)
        t.add(tied, 3, 3, False, None)
        got = t.metrics()
        assert got["accuracy"] == want and got["ties"] == rule
        assert (got["accuracy_strict"], got["accuracy_tie_aware"],
                got["accuracy_argmax"]) == (0.0, 50.0, 100.0)


def test_a_result_of_another_tie_rule_is_scored_again(run, env):
    out = env / "r-ties"
    _autocomp(run.dir, "blind:unigram", "strict", out)
    got = CliRunner().invoke(main, ["eval", str(run.dir), "--model", "blind:unigram",
                                    "--ties", "argmax", "-o", str(out), "--skip-existing",
                                    "--benchmark", "shape_color-n2/minimal-swap"])
    assert "scored with ties strict, not argmax" in got.output
    data = json.loads(next(p for p in out.rglob("*.json") if "minimal-swap" in str(p)
                           and "shape_color-n2" in str(p)).read_text())
    assert data["ties"] == "argmax"
    # unigram scores a swap's negative exactly as its positive: argmax counts it right
    assert data["metrics"]["accuracy"] == 100.0 and data["metrics"]["accuracy_strict"] == 0.0


def _lmms_tasks(exported):
    from lmms_eval.tasks import TaskManager, get_task_dict

    manager = TaskManager(include_path=str(exported / "harness" / "lmms_eval"),
                          include_defaults=False)
    return manager, get_task_dict


def _order(qid, captions, seed=0):
    """The lmms-eval and VLMEvalKit adapters' option order, written out again."""
    return sorted(captions, key=lambda c: hashlib.sha256(
        f"{seed}:{qid}:order:{c}".encode()).digest())


def test_lmms_eval_loads_the_task_folder_and_scores_scripted_answers(exported):
    manager, get_task_dict = _lmms_tasks(exported)
    configs = json.loads((exported / "autocomp_export.json").read_text())["configs"]
    names = {f"autocomp_{c.replace('-', '_')}_{m}" for c in configs
             for m in ("mc", "circular", "yesno")}
    assert names <= set(manager.all_tasks) and "autocomp" in manager.all_tasks
    swap, wino = "shape_color-n3-minimal-swap", "shape_color-n2-minimal-winoground"
    want = {f"autocomp_{c.replace('-', '_')}_{m}": (c, m) for c in (swap, wino)
            for m in ("mc", "circular", "yesno")}
    tasks = get_task_dict(sorted(want), manager)
    for name, task in tasks.items():
        config, mode = want[name]
        rows = list(_load(exported, config))
        docs = list(task.test_docs())
        per_item = 2 if config == wino else 1  # questions: one per image
        options = 2 if config == wino else 6  # the positive and 5 swap negatives
        assert len(docs) == len(rows) * per_item * (1 if mode == "mc" else options)
        assert task.doc_to_visual(docs[0])[0].size == (96, 96)

        def score(replies, task=task, docs=docs):
            out = [task.process_results(d, [r]) for d, r in zip(docs, replies, strict=True)]
            agg = task.aggregation()
            return {k: agg[k]([o[k] for o in out]) for k in ("item_accuracy",
                                                             "question_accuracy")}

        oracle = score([d["answer"] for d in docs])
        assert oracle == {"item_accuracy": 1.0, "question_accuracy": 1.0}
        if mode == "yesno":
            got = score(["Yes." for _ in docs])
            assert got["item_accuracy"] == 0.0
            assert got["question_accuracy"] == pytest.approx(1 / options)
            continue
        got = score(["A" for _ in docs])
        if mode == "circular":  # the positive is at A under one rotation only
            assert got["item_accuracy"] == 0.0
            continue
        # always "A": right where the seeded order puts the true caption first
        first = []
        for row in rows:
            if config == wino:
                caps = [row["caption_0"], row["caption_1"]]
                first.append(all(_order(f"{row['id']}#image{i}", caps)[0] == caps[i]
                                 for i in range(2)))
            else:
                caps = [row["positive"], *row["negatives"]]
                first.append(_order(row["id"], caps)[0] == row["positive"])
        assert got["item_accuracy"] == pytest.approx(sum(first) / len(rows))
        assert "A. " in task.doc_to_text(docs[0]) and "B. " in task.doc_to_text(docs[0])


def test_a_moved_export_still_loads_in_lmms_eval(exported, tmp_path):
    """The YAMLs name the dataset through utils.EXPORT_FOLDER: a copy elsewhere loads its
    own rows, and no file of the export holds the folder it was written in."""
    import shutil

    moved = Path(shutil.copytree(exported, tmp_path / "moved"))
    for path in (moved / "harness").rglob("*"):
        # __pycache__: Python's own, once a harness module was imported with bytecode on
        if path.is_file() and "__pycache__" not in path.parts:
            assert str(exported) not in path.read_text(encoding="utf-8"), path
    config = "shape_color-n2-minimal-winoground"
    name = f"autocomp_{config.replace('-', '_')}_mc"
    manager, get_task_dict = _lmms_tasks(moved)
    task = get_task_dict([name], manager)[name]
    assert str(moved) == task.DATASET_PATH
    assert len(list(task.test_docs())) == 2 * len(list(_load(moved, config)))


def test_lmms_eval_runs_a_tiny_vlm_end_to_end(exported, env):
    """lmms-eval's own evaluator and Gemma-3 model class on a task of the export: its score
    is the share of items whose logged reply names the right letter."""
    from lmms_eval import evaluator
    from tiny_models import tiny_gemma_vlm

    model = tiny_gemma_vlm(env / "gemma")
    manager, _ = _lmms_tasks(exported)
    name = "autocomp_shape_color_n2_minimal_swap_mc"
    got = evaluator.simple_evaluate(model="gemma3", model_args=f"pretrained={model},"
                                    "device=cpu,device_map=cpu", tasks=[name],
                                    task_manager=manager, batch_size=1, log_samples=True)
    samples = got["samples"][name]
    assert len(samples) == len(_load(exported, "shape_color-n2-minimal-swap"))
    sys.path.insert(0, str(exported / "harness" / "lmms_eval"))
    try:
        import utils as adapter_utils
    finally:
        sys.path.remove(str(exported / "harness" / "lmms_eval"))
    right = [adapter_utils.parse_letter(s["resps"][0][0], 2) == s["target"] for s in samples]
    assert got["results"][name]["item_accuracy,none"] == pytest.approx(sum(right) / len(right))


def test_vlmevalkit_tsv_reads_as_its_loader_reads_it(exported, env):
    """VLMEvalKit is not on PyPI: its custom-MCQ loader's reading (pandas, tab-separated;
    an image field of 64 characters or fewer names another row's index; CircularEval groups
    rows by index % 1e6) is followed here, from its source."""
    import base64
    import io

    import pandas as pd
    from PIL import Image

    script = exported / "harness" / "vlmevalkit_tsv.py"
    lmu = env / "LMUData"
    for circular in ([], ["--circular"]):

        subprocess.run([sys.executable, str(script), "--lmudata", str(lmu), "--config",
                        "shape_color-n3-minimal-confusion", "--config",
                        "shape_color-n2-minimal-winoground", *circular], check=True)
    rows = {r["id"]: r for r in _load(exported, "shape_color-n3-minimal-confusion")}
    data = pd.read_csv(lmu / "AutoComp_shape_color-n3-minimal-confusion.tsv", sep="\t")
    letters = [c for c in data.columns if len(c) == 1 and c.isupper()]
    assert letters == list("ABCDEFGHIJKLMNOPQRSTUVWXYZ")  # the positive and 25 negatives
    assert {"index", "image", "question", "answer", "category"} <= set(data.columns)
    for _, line in data.iterrows():
        row = rows[line["item"]]
        options = [line[c] for c in letters]
        assert line[line["answer"]] == row["positive"]
        assert set(options) - {row["positive"]} <= set(row["negatives"])
        image = Image.open(io.BytesIO(base64.b64decode(line["image"])))
        assert np.array_equal(np.asarray(image), np.asarray(row["image"].convert("RGB")))
    circ = pd.read_csv(lmu / "AutoComp_shape_color-n2-minimal-winoground_circular.tsv",
                       sep="\t")
    circ["index"] = [str(x) for x in circ["index"]]
    images = dict(zip(circ["index"], circ["image"].astype(str), strict=True))
    for _, line in circ.iterrows():
        base = str(int(line["index"]) % 1_000_000)
        ref = images[line["index"]]
        assert ref == base if line["index"] != base else len(ref) > 64
        assert line[line["answer"]] in (line["A"], line["B"])
    groups = circ.groupby(circ["index"].astype(int) % 1_000_000)
    assert all(len(g) == 2 and g["answer"].tolist() in (["A", "B"], ["B", "A"])
               for _, g in groups)


@pytest.mark.parametrize("name", ["demo", "winoground"])
def test_the_shipped_configs_export_whole(name, env):
    """configs/demo.yaml and configs/winoground.yaml (6 concepts per task and N instead of
    100, nothing else changed) export every benchmark they build, every negative
    included, and each config loads with datasets."""
    root = Path(__file__).resolve().parents[1]
    text = (root / "configs" / f"{name}.yaml").read_text()
    assert text.count("count: 100") == 2
    from conftest import built_run

    run = built_run(env / f"shipped-{name}", text.replace("count: 100", "count: 6"))
    out = env / f"shipped-{name}-export"
    got = CliRunner().invoke(main, ["export", str(run.dir), "-o", str(out), "--no-audit"])
    assert got.exit_code == 0, got.output
    items = _run_items(run)
    kinds = set(run.config.build.benchmarks)
    assert {i.rsplit("-", 1)[1] for i in items} == kinds
    for config, want in items.items():
        ds = _load(out, config)
        assert [r["id"] for r in ds] == [i["id"] for i in want]
        if "negatives" in ds.column_names:
            assert [r["negatives"] for r in ds] == [
                [n["caption"] for n in i["negatives"]] for i in want]


def test_the_card_reads_the_runs_saved_summary_only_while_it_is_current(run):
    """The card's funnel comes from stats/ (what `autocomp run` wrote) when it is newer than
    every record, else it is counted again: a stale file is never shown."""
    import os

    from autocomp.report.summary import saved_summary, summarize

    summarize(run, figures=False, write=True)
    funnel = run.paths.stats("funnel")
    counted = saved_summary(run)["funnel"]
    funnel.write_text(json.dumps([{"benchmark": "sentinel"}]))
    assert saved_summary(run)["funnel"] == [{"benchmark": "sentinel"}]  # current: read
    validation = run.paths.merged("validation")
    later = funnel.stat().st_mtime + 5
    os.utime(validation, (later, later))
    assert saved_summary(run)["funnel"] == counted  # older than a record: counted again
    summarize(run, figures=False, write=True)


def test_a_damaged_export_is_one_line_naming_the_file(exported, env):
    """`autocomp eval` of an export whose manifest is damaged, or names a data file outside
    the folder, says so in one line naming the file; the export itself is not touched."""
    import shutil

    copy = env / "damaged"
    shutil.copytree(exported, copy)
    manifest = copy / "autocomp_export.json"
    data = json.loads(manifest.read_text())
    manifest.write_text("{not json")
    got = CliRunner().invoke(main, ["eval", str(copy), "--model", "reference:oracle"])
    assert got.exit_code == 1 and "not an autocomp export manifest" in got.output
    assert str(manifest) in got.output and "Traceback" not in got.output
    name = "shape_color-n2-minimal-swap"
    data["configs"][name]["files"] = ["../../etc/passwd"]
    manifest.write_text(json.dumps(data))
    got = CliRunner().invoke(main, ["eval", str(copy), "--model", "reference:oracle",
                                    "--benchmark", "shape_color-n2/minimal-swap"])
    assert got.exit_code == 1 and "not in the export" in got.output, got.output


def test_the_cards_audit_heading_says_what_its_table_says():
    """Issue 52: a flagged config is named in the heading, never "no text-only shortcut"."""
    from autocomp.publish.card import _audit

    def row(name, flag):
        return {"benchmark": name, "items": 80, "chance": 6.25, "same_words": 0.0,
                "whitespace": 0, "case_only": 0, "positive_repeated": 0, "duplicates": 0,
                "blind": {"blind:distinct": {"accuracy_tie_aware": 24.4 if flag else 6.0,
                                             "flag": flag}}}

    flagged = _audit([row("shape_color-n2-minimal-confusion", True),
                      row("shape_color-n2-minimal-swap", False)])
    heading = flagged.splitlines()[0]
    assert heading == "## Blind audit: text-only shortcuts in 1 of 2 configs"
    assert "`shape_color-n2-minimal-confusion`" in flagged and "24.4 !" in flagged
    clean = _audit([row("shape_color-n2-minimal-swap", False)])
    assert clean.splitlines()[0] == "## Blind audit: no text-only shortcut found in 1 configs"
    assert "| 6.0 |" in clean and "6.0 !" not in clean


def test_names_in_the_card_and_in_markdown_tables_are_shown_never_read_as_markup():
    """Issue 68: benchmark names were written raw into the dataset card's markdown: a name
    with a backtick, "|" or HTML closed its code span, split a table row or became a tag."""
    markdown_it = pytest.importorskip("markdown_it")

    from autocomp.publish.card import _audit
    from autocomp.report.table_format import Table, md_code, md_fence

    hostile = "x`</code><img src=y onerror=alert(1)>|z\n# heading"
    html = markdown_it.MarkdownIt("commonmark").enable("table").render(
        f"a {md_code(hostile)} b\n\n| h |\n|---|\n| {md_code(hostile)} |\n")
    assert "<img" not in html and "<h1>" not in html and html.count("<td>") == 1
    assert "&lt;img src=y onerror=alert(1)&gt;" in html
    fenced = markdown_it.MarkdownIt("commonmark").render(md_fence("a\n```\n<b>x</b>", "yaml"))
    assert fenced.count("<pre>") == 1 and "<b>" not in fenced
    table = Table("t", ["name", "acc"], [["a|b\nc", "1.0"]]).render("markdown")
    assert table.splitlines()[-1] == "| a\\|b c | 1.0 |"
    row = {"benchmark": hostile, "items": 80, "chance": 6.25, "same_words": 0.0,
           "whitespace": 0, "case_only": 0, "positive_repeated": 0, "duplicates": 0,
           "blind": {"blind:distinct": {"accuracy_tie_aware": 24.4, "flag": True}}}
    assert md_code(hostile) in _audit([row])


def test_every_registered_adapter_keeps_the_adapter_contract(exported):
    from autocomp.contracts import adapter_problems
    from autocomp.core.registry import names

    manifest = json.loads((exported / "autocomp_export.json").read_text())
    assert set(manifest["adapters"]) == set(names("adapter"))
    for name in names("adapter"):
        assert adapter_problems(manifest["adapters"][name], exported) == [], name


def escaping_adapter(folder, manifest, dataset_path):  # writes outside its export folder
    (folder.parent / "stray.txt").write_text("x")
    return {"title": "Stray", "files": ["../stray.txt"], "usage": "none"}


def test_a_plugin_adapter_writes_into_the_harness_folder_or_is_refused(exported, tmp_path,
                                                                       monkeypatch,
                                                                       registered):
    """docs/extending.md's adapter joins the harness folder (its export runs in the docs
    test); one writing outside the export stops the export in one line."""
    import shutil

    from conftest import docs_examples

    from autocomp.publish.adapters import write_all

    docs_examples(tmp_path, monkeypatch)
    manifest = json.loads((exported / "autocomp_export.json").read_text())
    folder = tmp_path / "export"
    shutil.copytree(exported / "data", folder / "data")
    registered("adapter", "configs_csv", "configs_csv:write")
    got = write_all(folder, manifest, str(exported))
    assert got["configs_csv"]["files"] == ["harness/configs.csv"]
    rows = (folder / "harness" / "configs.csv").read_text().splitlines()
    assert len(rows) == 1 + len(manifest["configs"])
    registered("adapter", "stray", "test_publish:escaping_adapter")
    folder = tmp_path / "second" / "export"
    shutil.copytree(exported / "data", folder / "data")
    with pytest.raises(AutocompError) as err:
        write_all(folder, manifest, str(exported))
    assert str(err.value) == ("adapter 'stray' (test_publish:escaping_adapter) breaks the "
                              "adapter contract (autocomp/contracts.py): file '../stray.txt' "
                              "is not a path inside the export folder")
    assert not (folder / "stray.txt").exists()  # nothing of it reached the export
    assert sorted(p.name for p in folder.parent.iterdir()) == ["export", "stray.txt"]


def chatty_adapter(folder, manifest, dataset_path):  # declares one file of the two it writes
    (folder / "harness").mkdir(parents=True, exist_ok=True)
    (folder / "harness" / "kept.txt").write_text("declared")
    (folder / "harness" / "extra.txt").write_text("not declared")
    return {"title": "Chatty", "files": ["harness/kept.txt"], "usage": "none"}


def test_only_the_files_an_adapter_declares_enter_the_export(exported, tmp_path, registered,
                                                             caplog):
    import shutil

    from autocomp.publish.adapters import write_all

    manifest = json.loads((exported / "autocomp_export.json").read_text())
    folder = tmp_path / "export"
    shutil.copytree(exported / "data", folder / "data")
    registered("adapter", "chatty", "test_publish:chatty_adapter")
    with caplog.at_level("WARNING", logger="autocomp"):
        write_all(folder, manifest, str(exported))
    assert (folder / "harness" / "kept.txt").read_text() == "declared"
    assert not (folder / "harness" / "extra.txt").exists()
    assert "adapter 'chatty' wrote 1 file(s) it did not declare, left out of the export: " \
           "harness/extra.txt" in caplog.text
    assert [p.name for p in tmp_path.iterdir() if ".adapter-" in p.name] == []


def _function_loader():
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: ("function",
                                                              loader.construct_scalar(node)))
    return Loader


@pytest.mark.parametrize("config", ["shape_color-n2-minimal-swap",
                                    "inj\ndataset_path: attacker_repo",
                                    "x: [1, {y: 2}] # '\"\\"])
def test_lmms_eval_yaml_holds_exactly_its_keys_whatever_the_names(config):
    from autocomp.publish.adapters.for_lmms_eval import MODES, _yaml, task_name

    for mode in MODES:
        doc = yaml.load(_yaml(config, mode, "org/export: evil\n"), Loader=_function_loader())
        assert set(doc) == {"dataset_path", "dataset_name", "task", "tag", "test_split",
                            "output_type", "process_docs", "doc_to_visual", "doc_to_text",
                            "doc_to_target", "process_results", "metric_list",
                            "generation_kwargs", "metadata"}
        assert doc["dataset_path"] == "org/export: evil\n" and doc["dataset_name"] == config
        # a local export is found from utils.py's own place: the folder moves whole
        local = yaml.load(_yaml(config, mode, "/data/export"), Loader=_function_loader())
        assert local["dataset_path"] == ("function", "utils.EXPORT_FOLDER")
        assert doc["task"] == task_name(config, mode)
        assert doc["process_docs"] == ("function", f"utils.{MODES[mode]}")
        assert doc["metric_list"][0]["aggregation"] == ("function", "utils.item_accuracy")


def test_the_mteb_template_carries_the_citation_as_a_python_string(tmp_path):
    import ast

    from autocomp.publish.adapters.for_mteb import FILE, write
    from autocomp.publish.card import CITATION

    write(tmp_path, {"configs": {}}, str(tmp_path))
    tree = ast.parse((tmp_path / FILE).read_text())
    value = next(n.value for n in tree.body if isinstance(n, ast.Assign)
                 and getattr(n.targets[0], "id", "") == "CITATION")
    assert ast.literal_eval(value) == CITATION


def test_integers_that_land_in_json_stay_exact_for_every_reader(tmp_path):
    out = CliRunner().invoke(main, ["export", str(tmp_path), "-o", str(tmp_path / "x"),
                                    "--max-negatives", "99999999999999999999"])
    assert out.exit_code == 2 and "--max-negatives" in out.output
    assert "9007199254740991" in out.output  # the range, said
    out = CliRunner().invoke(main, ["preview", "shape_color", "--seed", str(2 ** 60)])
    assert out.exit_code == 2 and "--seed" in out.output


def test_the_card_says_who_wrote_the_contextual_captions_and_cites_with_a_year():
    from autocomp.publish.card import CITATION, tracks

    assert "template writer (no language model)" in tracks("template")["contextual"]
    assert "a language model (the transformers writer)" in tracks("transformers")["contextual"]
    assert "year   = {" in CITATION and "url    = {https://pypi.org/project/autocomp/}" \
        in CITATION

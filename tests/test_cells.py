"""eval/cells.py (`autocomp eval`): what it checks before scoring (specs, device, paths,
where results go), the items and models it leaves out and says so, the temp files it
cleans, and benchmarks read once for the light scorers."""

import json
import os

import pytest
from click.testing import CliRunner
from conftest import shape_color_run

from autocomp.cli import main


def test_items_without_negatives_are_left_out_and_counted(tmp_path, logged):
    from autocomp.core.records import write_jsonl
    from autocomp.eval.cells import evaluate
    from autocomp.formats.runs import find_benchmarks

    run = shape_color_run(tmp_path)
    bench = find_benchmarks(run.dir, ["shape_color-n2/minimal-swap"])[0]
    items = list(bench.items())  # the full store: negatives written out
    write_jsonl(bench.path, [dict(items[0], negatives=[]), *items[1:]])
    got = evaluate(run.dir, ["reference:random@1"], tmp_path / "res",
                   ["shape_color-n2/minimal-swap"])
    lines = logged()
    assert got[0]["n_items"] == 2 and got[0]["skipped_items"] == {"no negatives": 1}
    assert any("1 with no negatives" in ln for ln in lines)


def test_a_missing_benchmark_path_says_it_does_not_exist(tmp_path):
    out = CliRunner().invoke(main, ["eval", str(tmp_path / "nowhere"), "--model",
                                    "reference:oracle"])
    assert out.exit_code == 1 and "nowhere: does not exist" in out.output
    assert "cannot tell its format" not in out.output


def test_eval_seed_names_the_random_scorers_seed(tmp_path):
    """eval had no --seed; reference:random's seed was documented nowhere."""
    run = shape_color_run(tmp_path)
    for seed in ("3", "4"):
        got = CliRunner().invoke(main, ["eval", str(run.dir), "--model", "reference:random",
                                        "--model", "reference:oracle", "--seed", seed,
                                        "--benchmark", "shape_color-n2/minimal-swap"])
        assert got.exit_code == 0 and f"load   reference:random@{seed}" in got.output
        assert "reference:oracle@" not in got.output
    rep = CliRunner().invoke(main, ["report", str(run.dir / "results"), "--json",
                                    "--no-figure"])
    models = {r[0] for t in json.loads(rep.stdout)["tables"] for r in t["rows"]}
    assert {"reference:random@3", "reference:random@4"} <= models


def test_a_model_that_cannot_load_is_said_once(tmp_path):
    """The reason was printed on the fail line and again in the error, which spoke of "the
    other models' results" when there were none."""
    run = shape_color_run(tmp_path)
    missing = str(tmp_path / "no-such-model")
    alone = CliRunner().invoke(main, ["eval", str(run.dir), "--model", f"hf:{missing}"])
    assert alone.exit_code == 81  # weights missing
    assert alone.output.count(f"could not be loaded: no such folder {missing}") == 1, \
        alone.output
    assert "fail   " not in alone.output and "other" not in alone.output
    assert "hf download" not in alone.output  # a path, not a hub id
    both = CliRunner().invoke(main, ["eval", str(run.dir), "--model", f"hf:{missing}",
                                     "--model", "reference:oracle"])
    assert both.exit_code == 81 and both.output.count("no such folder") == 1, both.output
    assert "1 of 2 models could not be loaded" in both.output
    assert "the other 1 models' results are written" in both.output


def test_light_scorers_share_one_reading_of_each_benchmark(tmp_path, monkeypatch):
    """Each model enumerated every benchmark's negatives again (4 weightless scorers: 4
    readings); light scorers now run benchmark by benchmark on one reading, with the same
    results."""
    from autocomp.eval.cells import evaluate
    from autocomp.formats.runs import Benchmark

    run = shape_color_run(tmp_path)
    models = ["reference:oracle", "reference:random", "blind:unigram", "blind:length"]
    pattern = ["shape_color-n2/*-confusion"]
    alone = {m: evaluate(run.dir, [m], tmp_path / f"alone-{i}", pattern)
             for i, m in enumerate(models)}
    reads, real = [], Benchmark.items

    def counted(self):
        reads.append(self.name)
        return real(self)
    monkeypatch.setattr(Benchmark, "items", counted)
    together = evaluate(run.dir, models, tmp_path / "together", pattern)
    assert sorted(reads) == ["shape_color-n2/contextual-confusion",
                             "shape_color-n2/minimal-confusion"]  # once each, not 4 times
    for r in together:
        (same,) = [a for a in alone[r["model"]] if a["benchmark"] == r["benchmark"]]
        assert r["metrics"] == same["metrics"], (r["model"], r["benchmark"])


def test_eval_where_results_cannot_be_written_says_which_option(tmp_path):
    run = shape_color_run(tmp_path)
    (run.dir / "results").write_text("a file where the results folder goes")
    out = CliRunner().invoke(main, ["eval", str(run.dir), "--model", "reference:oracle"])
    assert out.exit_code != 0 and "pass --output DIR" in out.output, out.output
    assert "Traceback" not in out.output
    ok = CliRunner().invoke(main, ["eval", str(run.dir), "--model", "reference:oracle",
                                   "--output", str(tmp_path / "elsewhere")])
    assert ok.exit_code == 0, ok.output


def test_eval_checks_specs_and_device_first_and_redoes_truncated_results(tmp_path):
    run = shape_color_run(tmp_path)
    runner = CliRunner()
    out = runner.invoke(main, ["eval", str(run.dir), "--model", "reference:oracle",
                               "--model", "nosuchfamily:x"])
    assert out.exit_code != 0 and "nosuchfamily" in out.output
    assert not (run.dir / "results").exists() or not list((run.dir / "results").rglob("*.json"))
    import torch

    if not torch.cuda.is_available():
        out = runner.invoke(main, ["eval", str(run.dir), "--model", "reference:oracle",
                                   "--device", "cuda"])
        assert out.exit_code != 0 and "no CUDA device on this machine" in out.output
    ok = runner.invoke(main, ["eval", str(run.dir), "--model", "reference:oracle"])
    assert ok.exit_code == 0
    result = next((run.dir / "results").rglob("*-swap-*.json"))
    result.write_text(result.read_text()[:40])  # killed while writing
    with pytest.warns(UserWarning, match="cannot be read"):
        assert runner.invoke(main, ["report", str(run.dir / "results")]).exit_code == 0
    again = runner.invoke(main, ["eval", str(run.dir), "--model", "reference:oracle",
                                 "--skip_existing"])
    assert again.exit_code == 0 and "done   reference:oracle" in again.output
    assert '"metrics"' in result.read_text()


def test_eval_removes_only_its_own_orphaned_temp_files(tmp_path):
    import time

    from autocomp.config import parse_config
    from autocomp.eval.cells import evaluate
    from autocomp.pipeline import run_pipeline
    from autocomp.run import Run

    run = Run.create(parse_config({"name": "n", "concepts": [
        {"task": "shape_color", "n": [2], "count": 2}]}), tmp_path / "run")
    run_pipeline(run, progress=False)
    out = tmp_path / "res"
    out.mkdir()
    killed = out / ".x-swap.json.predictions.jsonl.123.autocomp.tmp"  # an eval killed -9
    theirs = out / ".notes.tmp"
    for p in (killed, theirs):
        p.write_text("half")
        os.utime(p, (time.time() - 7200, time.time() - 7200))
    evaluate(run.dir, ["reference:random"], out)
    assert not killed.exists() and theirs.exists()


def test_captions_identical_within_the_context_are_flagged(tmp_path):
    """Two captions alike in their first 80 words: CLIP's 77-token text tower sees the
    same words, so they tie; eval says so (result and line), the audit counts them."""
    from PIL import Image
    from tiny_models import tiny_open_clip

    from autocomp.audit import structure

    model = f"open_clip:local-dir:{tiny_open_clip(tmp_path / 'oc')}"
    images = tmp_path / "img"
    images.mkdir()
    Image.new("RGB", (32, 32), (200, 30, 30)).save(images / "a.png")
    head = " ".join(["a red cube on a table"] * 14)  # 84 words
    rows = [{"img": "a.png", "cap": f"{head} and a blue ball", "negs": [f"{head} and a cat"]},
            {"img": "a.png", "cap": "a red cube", "negs": ["a blue cube"]}]
    path = tmp_path / "long.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "res"
    got = CliRunner().invoke(main, ["eval", str(path), "--source-format", "columns",
                                    "--images", str(images), "--columns",
                                    "image=img,positive=cap,negatives=negs",
                                    "--model", model, "--output",
                                    str(out)])
    assert got.exit_code == 0, got.output
    assert "1 items where a negative scores exactly as the positive" in got.output
    (cell,) = [json.loads(p.read_text()) for p in out.rglob("*.json")
               if "metrics" in json.loads(p.read_text())]
    assert cell["identical_text_ties"] == 1
    items = [{"positive": r["cap"], "negatives": [{"caption": n} for n in r["negs"]],
              "image": r["img"]} for r in rows]
    assert structure(items)["same_in_context"] == 1

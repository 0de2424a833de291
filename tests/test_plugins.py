"""core/plugins.py: where a plugin's output enters results, each family holds it to its
contract in one line naming it (exit 1: the same command fails alike until the plugin is
fixed). Each plugin below makes one deliberate mistake."""

import subprocess
import sys
import types
from dataclasses import dataclass

import numpy as np
import pytest
from click.testing import CliRunner

from autocomp.cli import main
from autocomp.core import registry
from autocomp.core.errors import AutocompError
from autocomp.core.families import FAMILY
from autocomp.core.fields import flag, text
from autocomp.core.plugins import PluginError
from autocomp.eval.scorers.base import ItemScorer
from autocomp.kinds.base import ValueKind
from autocomp.t2i.metrics import Metric, Scored, scored_by
from autocomp.validators.base import CheckResult
from autocomp.validators.checks import Check


class NoRead(ValueKind):  # a value kind that never says how to read its values back
    look = ("rim",)


def test_a_kind_without_its_own_read_is_refused_by_its_shape(registered):
    registered("kind", "noread", "test_plugins:NoRead")
    with pytest.raises(AutocompError) as err:
        registry.resolve("kind", "noread")
    assert str(err.value) == ("kind 'noread' (test_plugins:NoRead) has no method read() of "
                              "its own")


class Flaky(Metric):  # a t2i metric: fine on its first batch, NaN on the next
    column = "Flaky (%)"
    calls = 0

    def score(self, batch, judge):
        Flaky.calls += 1
        return [0.5 if Flaky.calls == 1 else float("nan")] * len(batch)


def _batch(k: int) -> list[Scored]:
    row = {"right": True, "dsg": True, "p": None}
    return [Scored(np.zeros((4, 4, 3), np.uint8), None, None, [row], [], True, [True])
            for _ in range(k)]


def test_a_metric_is_held_to_its_contract_on_every_batch(registered):
    registered("metric", "flaky", "test_plugins:Flaky")
    Flaky.calls = 0
    judge = types.SimpleNamespace(vqa=None, clip=None)
    assert [r["flaky"] for r in scored_by(_batch(2), judge)] == [0.5, 0.5]
    with pytest.raises(PluginError) as err:
        scored_by(_batch(2), judge)
    assert str(err.value) == ("metric 'flaky' (test_plugins:Flaky) breaks the metric "
                              "contract (autocomp/contracts.py): score() gave nan: a value "
                              "is a number in [0, 1.0] or None")
    assert err.value.exit_code == 1


def not_a_scorer(name, pretrained=None, device="cpu", batch_size=None):
    return {"name": name}


def listed(source, images, columns, skip_missing):
    return [{"id": "0"}]


def test_a_factory_must_make_what_its_family_makes(registered, tmp_path):
    from autocomp.eval.scorers import load_scorer
    from autocomp.formats import open_suite

    registered("scorer", "notascorer", "test_plugins:not_a_scorer")
    with pytest.raises(PluginError) as err:
        load_scorer("notascorer:x")
    assert str(err.value) == ("scorer 'notascorer' (test_plugins:not_a_scorer) breaks the "
                              "scorer contract (autocomp/contracts.py): it returned dict, not "
                              "a Scorer")
    registered("format", "listy", "test_plugins:listed")
    (tmp_path / "x.json").write_text("[]")
    with pytest.raises(PluginError) as err:
        open_suite(tmp_path / "x.json", "listy")
    assert str(err.value).endswith("format 'listy' (test_plugins:listed) breaks the format "
                                   "contract (autocomp/contracts.py): it returned list, not a "
                                   "Suite")


class Boom(ItemScorer):  # an item scorer with a bug of its own
    family = "boom"

    def score_item(self, item, candidates, truth):
        return [len(candidates)] + None  # TypeError


def test_a_plugins_own_bug_is_one_line_that_says_rerunning_will_not_help(registered,
                                                                         demo_run, tmp_path):
    registered("scorer", "boom", "test_plugins:Boom")
    got = CliRunner().invoke(main, ["eval", str(demo_run), "--model", "boom:x", "--benchmark",
                                    "shape_color-n2/minimal-swap", "-o", str(tmp_path / "r")])
    assert got.exit_code == 1, got.output
    last = got.output.strip().splitlines()[-1]
    assert last.startswith("Error: scorer 'boom' (test_plugins:Boom) raised TypeError while "
                           "scoring shape_color-n2/minimal-swap (")
    assert last.endswith("): fix the plugin; running the same command again fails alike")
    assert "Traceback" not in got.output
    assert not list((tmp_path / "r").rglob("*.json"))


def test_unregister_forgets_every_cache_of_the_entry(registered):
    from autocomp.concepts import drawable

    registered("metric", "flaky", "test_plugins:Flaky")
    FAMILY["metric"].passed.add(("flaky", ""))
    registry.resolve("metric", "flaky")
    before = drawable.kind("rgb")
    registry.unregister("metric", "flaky")
    assert "flaky" not in FAMILY["metric"].checked
    assert not {k for k in FAMILY["metric"].passed if k[0] == "flaky"}
    registered("kind", "noread2", "test_plugins:NoRead")
    registry.unregister("kind", "noread2")
    assert drawable.kind("rgb") is not before  # the kinds made before are made again


def test_the_plugins_registered_are_recorded_with_their_source(registered, demo_run,
                                                                 tmp_path):
    import hashlib
    import json
    from pathlib import Path

    from autocomp.eval.cells import result_file
    from autocomp.run import provenance

    registered("metric", "flaky", "test_plugins:Flaky")
    want = [{"family": "metric", "name": "flaky", "target": "test_plugins:Flaky",
             "distribution": None, "version": None,
             "source_sha256": hashlib.sha256(Path(__file__).read_bytes()).hexdigest()}]
    assert provenance()["plugins"] == want
    got = CliRunner().invoke(main, ["eval", str(demo_run), "--model", "blind:length",
                                    "--benchmark", "shape_color-n2/minimal-swap",
                                    "-o", str(tmp_path / "r")])
    assert got.exit_code == 0, got.output
    result = json.loads(result_file(tmp_path / "r", "blind:length",
                                    "shape_color-n2/minimal-swap").read_text())
    assert result["plugins"] == want
    check = CliRunner().invoke(main, ["results", "check", str(tmp_path / "r")])
    assert check.exit_code == 0, check.output


class CpuWriter:  # a caption writer on the CPU that does not say what it costs
    pass


def _cpu_writer():
    from autocomp.core.backend import Backend

    class Writer(Backend):
        def write(self, requests):
            return ["a cube." for _ in requests]
    return Writer


def test_a_backend_that_declares_no_cost_is_listed_not_priced_as_a_12b_model(registered,
                                                                            tmp_path):
    from autocomp.config import load_config
    from autocomp.planning import memory
    from autocomp.planning.plan import format_plan, plan

    CpuWriter.Writer = _cpu_writer()
    registered("writer", "cpu", "test_plugins:CpuWriter.Writer")
    (tmp_path / "c.yaml").write_text("name: c\nconcepts:\n  - {task: shape_color, n: [2], "
                                     "count: 10000}\ncaptions: {writer: cpu}\n")
    cfg = load_config(tmp_path / "c.yaml")
    got = plan(cfg, gpus=("H100",))
    captions = next(r for r in got["stages"] if r["stage"] == "captions")
    assert captions["estimate"]["H100"] == [0.0, 0.0]
    assert got["unpriced"] == [
        "captions: writer 'cpu' (test_plugins:CpuWriter.Writer) declares no GPU cost (its "
        "class's gpu_cost: model, served or none): counted as 0 GPU-h, its memory not planned"]
    assert "captions" not in {r["stage"] for r in memory.stage_rows(cfg)}
    assert "  Not priced: captions: writer 'cpu'" in format_plan(got)
    CpuWriter.Writer.gpu_cost = "none"
    assert plan(cfg, gpus=("H100",))["unpriced"] == []
    CpuWriter.Writer.gpu_cost = "model"  # says it runs a model: priced from its options
    priced = next(r for r in plan(cfg, gpus=("H100",))["stages"] if r["stage"] == "captions")
    assert priced["estimate"]["H100"][1] > 0


@dataclass(frozen=True)
class _PlainOptions:
    strict: bool = False  # a plain field: no config could ever set it


@dataclass(frozen=True)
class _DeclaredOptions:
    strict: bool = flag(False, doc="refuse every image")
    note: str = text("none", doc="a word for the log")


class PlainCheck(Check):
    name, label, Options = "plain", "Plain", _PlainOptions

    def check(self, s):
        return CheckResult("plain", True, "fine")


class DeclaredCheck(Check):
    name, label, Options = "declared", "Declared", _DeclaredOptions

    def check(self, s):
        return CheckResult("declared", not self.options.strict, self.options.note)


def test_options_are_declared_with_a_helper_and_read_from_the_config(registered, tmp_path):
    from autocomp.config import load_config

    registered("check", "plain", "test_plugins:PlainCheck")
    with pytest.raises(AutocompError) as err:
        registry.resolve("check", "plain")
    assert str(err.value) == (
        "check 'plain' (test_plugins:PlainCheck) declares its option 'strict' as a plain "
        "dataclass field, which no config can set: declare it with integer, number, choice, "
        "flag or text (core/fields.py)")
    registry.unregister("check", "plain")
    registered("check", "declared", "test_plugins:DeclaredCheck")
    base = "name: c\nconcepts:\n  - {task: shape_color, n: [2], count: 2}\n"
    (tmp_path / "c.yaml").write_text(base + "validate:\n  declared: {strict: true, note: hi}\n")
    got = load_config(tmp_path / "c.yaml").validate.checks["declared"]
    assert (got.strict, got.note) == (True, "hi")
    (tmp_path / "d.yaml").write_text(base + "validate:\n  declared: {strict: 'yes'}\n")
    with pytest.raises(AutocompError, match="field validate.declared.strict: expected true or "
                                            "false, got 'yes'"):
        load_config(tmp_path / "d.yaml")


def test_an_adapter_listing_a_file_twice_breaks_its_contract(tmp_path):
    from autocomp.contracts import adapter_problems

    (tmp_path / "a.txt").write_text("x")
    got = {"title": "T", "usage": "u", "files": ["a.txt", "a.txt"]}
    assert adapter_problems(got, tmp_path) == ["file 'a.txt' is listed twice"]
    assert adapter_problems({**got, "files": ["a.txt"]}, tmp_path) == []


def test_a_plugin_that_raises_at_import_is_one_line_and_the_rest_still_runs(tmp_path):
    (tmp_path / "broken_plugin.py").write_text("raise RuntimeError('my bug')\n")
    env = {"PYTHONPATH": str(tmp_path), "AUTOCOMP_PLUGINS": "broken_plugin",
           "PATH": "/usr/bin:/bin"}
    got = subprocess.run([sys.executable, "-m", "autocomp", "vocab", "list"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert got.returncode == 0, got.stderr  # a command that needs no plugin still runs
    assert "colors" in got.stdout and "Traceback" not in got.stderr
    warned = [line for line in got.stderr.splitlines() if "broken_plugin" in line]
    assert len(warned) == 1 and "failed to load (RuntimeError: my bug)" in warned[0]
    # a lookup that finds nothing says which plugin did not load
    (tmp_path / "cfg.yaml").write_text("name: r\nconcepts: [{task: shape_color, n: [2], "
                                       "count: 2}]\ncaptions: {writer: mine}\n")
    got = subprocess.run([sys.executable, "-m", "autocomp", "run", str(tmp_path / "cfg.yaml"),
                          "--dry-run"], env=env, capture_output=True, text=True, timeout=120)
    assert got.returncode != 0 and "Traceback" not in got.stderr
    assert "failed to load (RuntimeError: my bug)" in got.stderr.splitlines()[-1]

"""Run configs: loading, defaults, and one-line errors naming the field."""

import subprocess
import sys

import pytest
import yaml
from click.testing import CliRunner
from conftest import assert_file_error

from autocomp.cli import main
from autocomp.config import load_config, parse_config
from autocomp.core.errors import AutocompError

GOOD = """
name: small
seed: 3
concepts:
  - {task: shape_color, n: [2], count: 5}
  - {task: shape_position, count: 4}
generate:
  generator: procedural
  options: {size: 128, faults: {swap: 0.5}}
"""


def test_good_config_and_defaults(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(GOOD)
    cfg = load_config(path)
    assert cfg.name == "small" and cfg.seed == 3 and cfg.processes == 1
    assert cfg.concepts[1].n == (2, 3)  # the task's default complexities
    assert cfg.captions.writer.name == "template" and cfg.captions.retries == 3
    background = cfg.validate.options("background")
    assert background.min_fraction == 0.7 and background.min_gray == 190
    assert background.region == "boxes"  # the paper masks by the detector's boxes
    assert cfg.generate.generator.options == {"size": 128, "faults": {"swap": 0.5}}
    again = parse_config(cfg.to_dict(), path)
    assert again.to_dict() == cfg.to_dict()


@pytest.mark.parametrize("body, needle", [
    ("concepts: []\n", "field concepts: expected a non-empty list"),
    ("concepts: [{task: shape_color, count: 5}]\nspeed: 3\n", "field speed: unknown field"),
    ("concepts: [{task: shape_color, count: ten}]\n", "field concepts[0].count: expected an"),
    ("concepts: [{task: nothing, count: 5}]\n", "field concepts[0].task: no task 'nothing'"),
    ("concepts: [{task: shape_color, n: [9], count: 5}]\n", "field concepts[0].n: N=9"),
    ("concepts: [{task: shape_color, n: [1], count: 500}]\n",
     "field concepts[0].count: task 'shape_color' has at most 160 distinct concepts of N=1"),
    ("concepts: [{task: color, count: 5}]\n", "field concepts[0].task: generator 'procedural'"
                                              " cannot draw task 'color'"),
    ("concepts: [{task: shape_color, count: 5}]\ngenerate: {generator: dalle}\n",
     "field generate.generator: unknown generator 'dalle' (known: diffusers, procedural)"),
    ("concepts: [{task: shape_color, count: 5}]\ngenerate: {batch_size: 0}\n",
     "field generate.batch_size: expected an integer >= 1"),
    ("concepts: [{task: shape_color, count: 5}]\ngenerate: {options: {faults: {fog: 1}}}\n",
     "field generate.options.faults.fog: unknown fault"),
    ("concepts: [{task: shape_color, count: 5}]\nvalidate: {background: {min_fraction: 2}}\n",
     "field validate.background.min_fraction: expected a number in [0.0, 1.0], got 2"),
    ("concepts: [{task: shape_color, count: 5}]\ncaptions: {options: {slip_rate: x}}\n",
     "field captions.options.slip_rate: expected int/float"),
    ("concepts: [{task: shape_color, count: 5}]\nbuild: {benchmarks: [swapp]}\n",
     "field build.benchmarks: unknown benchmark"),
    ("concepts: [{task: shape_color, count: 5}\n", "YAML"),
    ("concepts: [{task: shape_color, n: [5], count: 5}]\n",
     "field concepts[0].n: task 'shape_color' N=5: confusion would enumerate 9,765,624 "
     "negatives per concept, above the limit of 100,000"),
    ("concepts: [{task: shape_color, n: [4], count: 5}]\nbuild: {max_negatives: 1000}\n",
     "field concepts[0].n: task 'shape_color' N=4: confusion would enumerate 65,535"),
    ("concepts: [{task: shape_color, count: 5}]\nvalidate: {background: {region: blobs}}\n",
     "field validate.background.region: expected one of boxes, masks, got 'blobs'"),
    ("concepts: [{task: shape_color, count: 5}]\nvalidate: {detector: grounding-dino+sam2, "
     "detector_options: {masks: false}, background: {region: masks}}\n",
     "field validate.background.region: masks needs the detector's masks"),
    ("concepts: [{task: shape_color, count: 5}]\nbuild: {max_negatives: 0}\n",
     "field build.max_negatives: expected an integer >= 1"),
])
def test_malformed_config_one_line_error(tmp_path, body, needle):
    assert_file_error(load_config, tmp_path, body, needle)


def test_cli_malformed_config_no_traceback(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("concepts: [{task: shape_color, count: 5}]\ngenerate: {batch_size: -1}\n")
    proc = subprocess.run([sys.executable, "-m", "autocomp", "run", str(bad), "--out",
                           str(tmp_path / "run")], capture_output=True, text=True)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert lines == [f"Error: {bad}: field generate.batch_size: expected an integer >= 1, "
                     "got -1"]
    assert not (tmp_path / "run").exists()


def test_run_directory_refuses_another_config(tmp_path):
    from autocomp.run import Run

    a = tmp_path / "a.yaml"
    a.write_text(GOOD)
    Run.create(load_config(a), tmp_path / "run")
    Run.create(load_config(a), tmp_path / "run")  # the same config: fine (resume)
    a.write_text(GOOD.replace("seed: 3", "seed: 4"))
    with pytest.raises(AutocompError, match=r"another config \(seed differs"):
        Run.create(load_config(a), tmp_path / "run")


REAL = """
name: real
concepts:
  - {task: color, n: [2], count: 5}
captions:
  writer: transformers
  options: {model: /w/gemma, batch_size: 32}
  batch_size: 256
generate:
  generator: diffusers
  options: {model: /w/sd35, size: 1024, steps: 28}
  batch_size: 16
validate:
  detector: grounding-dino+sam2
  answerer: transformers
  answerer_options: {model: /w/gemma}
"""


def test_resume_after_out_of_memory_with_run_only_changes(tmp_path):
    """Batch sizes, processes, offload, tiling, compile and timeouts only decide how the
    run runs: a resume may change them, and the provenance says when and from what."""

    from autocomp.run import Run

    a = tmp_path / "a.yaml"
    a.write_text(REAL)
    Run.create(load_config(a), tmp_path / "run")
    smaller = (REAL.replace("batch_size: 16", "batch_size: 4")
               .replace("steps: 28}", "steps: 28, cpu_offload: true, vae_tiling: true}")
               .replace("batch_size: 32}", "batch_size: 8}")
               .replace("name: real", "name: real\nprocesses: 4\nlaunch: {wait_timeout: 600}"))
    a.write_text(smaller)
    run = Run.create(load_config(a), tmp_path / "run")
    assert run.config.generate.batch_size == 4 and run.config.processes == 4
    assert run.config.generate.generator.options["cpu_offload"] is True
    saved = yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())
    (change,) = saved["provenance"]["changes"]
    assert change["fields"] == {
        "captions.options.batch_size": {"was": 32, "now": 8},
        "generate.batch_size": {"was": 16, "now": 4},
        "generate.options.cpu_offload": {"was": None, "now": True},
        "generate.options.vae_tiling": {"was": None, "now": True},
        "launch": {"was": {"wait_timeout": 86400, "stall_timeout": 300,
                           "rendezvous_timeout": 600},
                   "now": {"wait_timeout": 600, "stall_timeout": 300,
                           "rendezvous_timeout": 600}},
        "processes": {"was": 1, "now": 4}}
    Run.create(load_config(a), tmp_path / "run")  # the same again: the history stays
    saved = yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())
    assert len(saved["provenance"]["changes"]) == 1
    for output_field in ("steps: 28", "size: 1024"):  # these decide the images
        a.write_text(smaller.replace(output_field, output_field.replace("28", "20")
                                     .replace("1024", "512")))
        with pytest.raises(AutocompError, match=r"generate\.options\.(steps|size) differs"):
            Run.create(load_config(a), tmp_path / "run")


def test_patterns_drawn_too_small_to_read_are_warned_about(tmp_path):
    from autocomp.config import load_config

    path = tmp_path / "small.yaml"
    path.write_text("name: small\nconcepts: [{task: shape_pattern, n: [2], count: 2}]\n"
                    "generate: {options: {size: 128}}\n")
    with pytest.warns(UserWarning, match=r"task 'shape_pattern': pattern values drawn at "
                                         r"128 px are read back unreliably \(at least 256"):
        load_config(path)
    path.write_text("name: small\nconcepts: [{task: shape_pattern, n: [2], count: 2}]\n")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_config(path)  # the default 256 px: no warning


def test_config_refuses_repeated_specs_and_broken_run_config(tmp_path):
    from autocomp.config import parse_config
    from autocomp.run import Run

    with pytest.raises(AutocompError, match=r"concepts\[1\]: repeats concepts\[0\] \(task "
                                            r"'color' N=2\)"):
        parse_config({"name": "r", "concepts": [{"task": "color", "n": [1, 2], "count": 2},
                                                {"task": "color", "n": [2], "count": 5}]})
    with pytest.raises(AutocompError, match="repeats"):
        parse_config({"name": "r", "concepts": [{"task": "scenes", "count": 2},
                                                {"task": "scenes", "count": 5}]})
    run = Run.create(parse_config({"name": "r", "concepts": [
        {"task": "shape_color", "n": [2], "count": 2}]}), tmp_path / "run")
    (run.dir / "config.yaml").write_text("name: [unclosed\n")
    out = CliRunner().invoke(main, ["status", str(run.dir)])
    assert out.exit_code != 0 and "config.yaml: not valid YAML" in out.output
    assert "Traceback" not in out.output
    out = CliRunner().invoke(main, ["concepts", "--task", "color", "--count", "0", "--out",
                                    str(tmp_path / "c")])
    assert out.exit_code == 2 and not (tmp_path / "c").exists()


@pytest.mark.parametrize("name", ["../outside", "/tmp/abs", "a/b", ".hidden", "..", "x" * 101,
                                  "with space"])
def test_a_config_name_must_be_a_plain_file_name(name, tmp_path):
    """A name that is a path wrote the run outside runs/."""
    from autocomp.config import parse_config

    with pytest.raises(AutocompError) as err:
        parse_config({"name": name, "concepts": [{"task": "shape_color", "n": [2],
                                                  "count": 2}]})
    assert "name" in str(err.value) and "plain file name" in str(err.value)
    path = tmp_path / "my run (2).yaml"
    path.write_text("concepts: [{task: shape_color, n: [2], count: 2}]\n")
    from autocomp.config import load_config

    assert load_config(path).name == "my-run-2"  # the file's stem, made safe

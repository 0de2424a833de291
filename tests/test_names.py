"""Issue 53, round 4: names that cannot escape, generated files written by a serialiser,
readers that give one line, and a CLI a broken plugin cannot take down."""

import subprocess
import sys

import pytest
import yaml
from click.testing import CliRunner

from autocomp.cli import main
from autocomp.core.errors import AutocompError

TASK = "name: {name}\nkind: attribute\nobjects: shapes\nvalues: colors\nn: [1]\n"


@pytest.mark.parametrize("name, shown", [
    ('"../../../escape"', "'../../../escape'"),
    ('"a/b"', "'a/b'"),
    ('"a\\nb"', "'a\\nb'"),
    ('"inj\\ndataset_path: attacker_repo"', "'inj\\ndataset_path: attacker_repo'"),
    ('".hidden"', "'.hidden'"),
    ("x" * 101, "'" + "x" * 101 + "'"),
])
def test_a_task_name_that_is_no_plain_name_is_one_line(tmp_path, name, shown):
    path = tmp_path / "t.yaml"
    path.write_text(TASK.format(name=name))
    out = CliRunner().invoke(main, ["vocab", "check", str(path)])
    assert out.exit_code != 0
    lines = [line for line in out.output.splitlines() if line.strip()]
    assert len(lines) == 1, out.output
    assert lines[0].startswith(f"error: {path}: field name: task name {shown} is not a plain")
    # and `autocomp run` stops before writing anything anywhere
    (tmp_path / "cfg.yaml").write_text(f"name: r\nconcepts:\n  - {{task: {path}, n: [1], "
                                       "count: 2}\n")
    got = CliRunner().invoke(main, ["run", str(tmp_path / "cfg.yaml"), "-o",
                                    str(tmp_path / "deep" / "er" / "run")])
    assert got.exit_code != 0 and "is not a plain name" in got.output
    assert not (tmp_path / "deep").exists() and not (tmp_path / "escape-n1").exists()


def test_vocabulary_and_value_names_cannot_hold_paths_or_control_characters(tmp_path):
    from autocomp.concepts.vocab import parse_vocabulary

    with pytest.raises(AutocompError, match=r"v.yaml: field name: vocabulary name 'a/b' "
                                            r"must be 1-100 characters"):
        parse_vocabulary({"name": "a/b", "kind": "attributes", "entries": ["red"]},
                         tmp_path / "v.yaml")
    with pytest.raises(AutocompError, match=r"entry 2: field name: value name 're\\x1bd'"):
        parse_vocabulary({"name": "c", "kind": "attributes", "entries": ["blue", "re\x1bd"]},
                         tmp_path / "v.yaml")
    # spaces and punctuation inside a value stay allowed ("light blue", "polka-dot")
    vocab = parse_vocabulary({"name": "my colors", "kind": "attributes",
                              "entries": ["light blue", "polka-dot"]}, tmp_path / "v.yaml")
    assert vocab.names == ("light blue", "polka-dot")


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


def test_a_truncated_parquet_file_is_one_line(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from autocomp.formats.suite import parquet_rows

    path = tmp_path / "test-00000-of-00001.parquet"
    pq.write_table(pa.Table.from_pylist([{"id": str(i), "x": i} for i in range(500)]), path)
    assert len(list(parquet_rows(path))) == 500
    data = path.read_bytes()
    for cut in (len(data) // 2, 100):
        path.write_bytes(data[:cut])
        with pytest.raises(AutocompError, match="not a readable parquet file") as err:
            list(parquet_rows(path))
        assert str(path) in str(err.value)


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


def test_integers_that_land_in_json_stay_exact_for_every_reader(tmp_path):
    out = CliRunner().invoke(main, ["export", str(tmp_path), "-o", str(tmp_path / "x"),
                                    "--max-negatives", "99999999999999999999"])
    assert out.exit_code == 2 and "--max-negatives" in out.output
    assert "9007199254740991" in out.output  # the range, said
    out = CliRunner().invoke(main, ["preview", "shape_color", "--seed", str(2 ** 60)])
    assert out.exit_code == 2 and "--seed" in out.output


def test_a_library_configuring_the_root_logger_does_not_double_the_lines(tmp_path):
    """open_clip calls logging.basicConfig: each of autocomp's lines was printed twice."""
    code = ("import logging, sys\n"
            "from autocomp.core.log import attach, package_logger\n"
            "attach()\n"
            "logging.basicConfig(level=logging.INFO)  # what a library does\n"
            "package_logger('autocomp.eval.cells').info('one line')\n")
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert got.stderr.splitlines() == ["one line"], got.stderr


def test_blind_scorers_read_numerals_as_words():
    """Issue 53: VALSE's counting foils change only a numeral; with numerals dropped the
    blind scorers saw the caption and its foil as the same words (a forced tie)."""
    from autocomp.eval.scorers import load_scorer

    texts = ["There are 3 dogs.", "There are 4 dogs.", "There are dogs."]
    unigram = load_scorer("blind:unigram").score_texts(texts)[:, 0]
    assert unigram[0] != unigram[1]
    length = load_scorer("blind:length").score_texts(texts)[:, 0]
    assert list(length) == [4, 4, 3]


def test_the_card_says_who_wrote_the_contextual_captions_and_cites_with_a_year():
    from autocomp.publish.card import CITATION, tracks

    assert "template writer (no language model)" in tracks("template")["contextual"]
    assert "a language model (the transformers writer)" in tracks("transformers")["contextual"]
    assert "year   = {" in CITATION and "url    = {https://pypi.org/project/autocomp/}" \
        in CITATION


@pytest.mark.slow  # the demo run
def test_the_python_api_takes_what_a_user_would_pass(demo_run, tmp_path):
    """Issue 53: api.split took only a folder; api.evaluate read one spec as its letters
    and leaked Request.__init__ on a misspelt option; api.items did not list the names."""
    from conftest import copy_run

    from autocomp import api

    copy_run(demo_run, tmp_path / "demo")  # split() writes into the run
    run = api.open_run(tmp_path / "demo")
    with pytest.raises(AutocompError, match=r"unknown option\(s\) tie \(known: .*ties"):
        api.evaluate(run, "reference:oracle", tmp_path / "r", tie="argmax")
    got = api.evaluate(run, "reference:oracle", tmp_path / "r", "shape_color-n2/minimal-swap")
    assert {r["model"] for r in got} == {"reference:oracle"}
    with pytest.raises(AutocompError, match=r"no benchmark 'nope' \(benchmarks: shape_"):
        api.items(run, "nope")
    with pytest.raises(AutocompError, match="the run has no splits"):  # a Run: no TypeError
        api.split(run)


def test_an_enumeration_no_limit_could_allow_is_not_told_to_raise_the_limit():
    from autocomp.concepts.load import load_task
    from autocomp.negatives.generate import FEASIBLE, count_problem, expected_count

    task = load_task("color")
    n = next(k for k in range(2, 12) if expected_count(task, k, "confusion") > FEASIBLE)
    problem = count_problem(task, n, "confusion")
    assert "far more than can be enumerated" in problem and "raise it" not in problem
    small = next(k for k in range(2, 12) if 100_000 < expected_count(task, k, "confusion")
                 <= FEASIBLE)
    assert "raise it with build.max_negatives" in count_problem(task, small, "confusion")


def test_a_vocabulary_mixing_kinds_is_warned_about(tmp_path):
    """Issue 53: patterns with one `material: fabric` value passed vocab check and run with
    no warning, then "woven" was drawn plain and read as plain 35 of 35 times."""
    path = tmp_path / "mixed.yaml"
    path.write_text("name: mixed\nkind: attributes\nentries:\n"
                    "  - {name: striped, pattern: stripes}\n  - {name: dotted, pattern: dots}\n"
                    "  - {name: checkered, pattern: checks}\n  - {name: woven, material: fabric}\n")
    out = CliRunner().invoke(main, ["vocab", "check", str(path)])
    assert "entries are drawn by 2 kinds (pattern: 3, material: 1)" in out.output
    assert "'woven' (material) will be drawn plain" in out.output
    plain = tmp_path / "plain.yaml"
    plain.write_text("name: plain\nkind: attributes\nentries:\n"
                     "  - {name: striped, pattern: stripes}\n  - {name: dotted, pattern: dots}\n")
    assert "drawn by" not in CliRunner().invoke(main, ["vocab", "check", str(plain)]).output


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


def test_the_t2i_figure_draws_whole_numbers_of_n_on_one_scale(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from unittest import mock

    from autocomp.t2i import figure

    got = {"mean": 80.0, "interval": [70.0, 90.0]}
    clip = {"mean": 30.0, "interval": [25.0, 35.0]}
    summary = {"a": {"by_n": {"2": {"tifa": got, "clipscore": clip},
                              "3": {"tifa": got, "clipscore": clip}}}}
    seen = {}

    def keep(fig, stem):
        seen["axes"] = fig.axes
        return [stem]
    with mock.patch.object(figure, "save", keep):
        figure.by_n_figure(summary, tmp_path / "by-n")
    for ax in seen["axes"]:
        assert list(ax.get_xticks()) == [2, 3] and ax.get_ylim() == (0.0, 101.0)
    assert figure.by_n_figure({"a": {"by_n": {}}}, tmp_path / "none") == []


def test_a_command_gives_the_log_propagation_back(caplog):
    """The CLI keeps its lines single while a command runs, then leaves logging as it was:
    a caller's own handlers (pytest's caplog too) see autocomp's records again."""
    import logging

    from autocomp.core.log import package_logger

    CliRunner().invoke(main, ["vocab", "list"])
    assert logging.getLogger("autocomp").propagate
    with caplog.at_level("INFO", logger="autocomp"):
        package_logger("autocomp.eval.cells").info("seen by the caller")
    assert "seen by the caller" in caplog.text

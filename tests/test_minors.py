"""Issue 23's minor cases and newcomer messages: each one line, nothing lost."""

import errno
import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import shape_color_run

from autocomp.cli import main


def test_status_of_a_partial_run_is_plain(tmp_path):
    """Warnings are one line without source lines; a stage that has not run is "-", not
    0.0%."""
    import subprocess
    import sys

    run = shape_color_run(tmp_path, stages=("concepts", "captions"))
    (run.dir / "captions" / "merged.jsonl").write_text("{broken\n")  # warns, read from parts
    out = subprocess.run([sys.executable, "-m", "autocomp", "status", str(run.dir)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    row = next(ln for ln in out.stdout.splitlines() if ln.startswith("shape_color N=2"))
    assert "100.0%" in row and " 0.0%" not in row and row.split()[-1] == "-"
    warned = [ln for ln in out.stderr.splitlines() if ln.strip()]
    assert warned and all(ln.startswith("warning: ") and "merged.jsonl" in ln
                          for ln in warned), out.stderr


def test_disk_full_says_disk_full_and_keeps_the_cache_whole(tmp_path, monkeypatch):
    import os

    run = shape_color_run(tmp_path)
    real = os.fsync
    calls = {"n": 0}

    def full(fd):
        calls["n"] += 1
        if calls["n"] > 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd)
    monkeypatch.setattr("autocomp.eval.cache.os.fsync", full)
    out = CliRunner().invoke(main, ["eval", str(run.dir), "--model", "blind:distinct"])
    assert out.exit_code == 83  # disk full (core/errors.py, issue 66)
    assert "disk full (No space left on device)" in out.output
    assert "Traceback" not in out.output and "damaged" not in out.output
    monkeypatch.setattr("autocomp.eval.cache.os.fsync", real)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "unreadable" shard: it was cut back whole
        again = CliRunner().invoke(main, ["eval", str(run.dir), "--model", "blind:distinct"])
    assert again.exit_code == 0, again.output


def test_ctrl_c_says_rerunning_resumes(tmp_path, monkeypatch):
    run = shape_color_run(tmp_path, stages=("concepts",))

    def interrupted(*a, **k):
        raise KeyboardInterrupt
    monkeypatch.setattr("autocomp.pipeline.run_pipeline", interrupted)
    out = CliRunner().invoke(main, ["generate", str(run.dir)])
    assert out.exit_code == 130
    assert "run the same command again to resume" in out.output
    assert "Aborted!" not in out.output


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


def test_compass_set_mixed_by_a_killed_rebuild_is_refused(tmp_path):
    from autocomp.compass.build import build_run
    from autocomp.compass.sets import check_set
    from autocomp.core.errors import AutocompError

    run = shape_color_run(tmp_path)
    out = tmp_path / "set"
    build_run(run.dir, out)
    manifest = check_set(out)
    assert set(manifest["files"]) == {"composed", "decomposed", "skill-O", "skill-A",
                                      "skill-R"}
    composed = out / "composed.jsonl"
    composed.write_text(composed.read_text() + "\n")  # a file of another build
    with pytest.raises(AutocompError, match="composed.jsonl is not the file this set's"):
        check_set(out)
    rep = CliRunner().invoke(main, ["compass", "report", str(out)])
    assert rep.exit_code == 1 and "rebuild the set" in rep.output
    (out / "manifest.json").unlink()  # a rebuild killed before its end
    ev = CliRunner().invoke(main, ["compass", "eval", str(out), "--model",
                                   "reference:oracle"])
    assert ev.exit_code == 1 and "no manifest.json" in ev.output
    missing = CliRunner().invoke(main, ["compass", "report", str(tmp_path / "nowhere")])
    assert missing.exit_code == 1 and "Traceback" not in missing.output


def test_compass_perplexity_hint_names_its_own_option(tmp_path):
    run = shape_color_run(tmp_path)
    from autocomp.compass.build import build_run

    build_run(run.dir, tmp_path / "set")
    out = CliRunner().invoke(main, ["compass", "perplexity", str(tmp_path / "set"), "--lm",
                                    str(tmp_path / "no-lm")])
    assert out.exit_code == 81 and "--lm DIR" in out.output  # weights missing
    assert "options.model" not in out.output
    json.dumps(out.output)


def _cpu_seconds(pid: int) -> float:
    """The CPU time (user + system) process `pid` has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _lines_in_time(args: list[str], env: dict) -> tuple[list[str], float]:
    """Run `autocomp ARGS` with stdout and stderr as one pipe (not a terminal); its lines,
    and the longest wait for a line (from the start, between lines, to the end). A wait is
    the lesser of its wall-clock time and the CPU time the command spent in it: other
    processes on a loaded machine stretch the first, threads working at once the second."""
    import subprocess
    import sys
    import time

    env = {**env, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    longest, lines, last = 0.0, [], (time.monotonic(), 0.0)
    with subprocess.Popen([sys.executable, "-m", "autocomp", *args], env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT) as proc:

        def wait() -> float:
            nonlocal last
            now = (time.monotonic(), _cpu_seconds(proc.pid))
            waited, last = min(now[0] - last[0], now[1] - last[1]), now
            return waited

        for line in proc.stdout:
            longest = max(longest, wait())
            lines.append(line.rstrip("\n"))
        longest = max(longest, wait())  # exited, not yet reaped: /proc still has its times
    assert proc.returncode == 0, "\n".join(lines[-20:])
    return lines, longest


@pytest.mark.slow
def test_long_commands_print_progress_lines_off_a_terminal(tmp_path):
    """Never silent: with a small interval ($AUTOCOMP_PROGRESS_EVERY) and output that is
    not a terminal, validate, build, eval (model loading and encoding), audit, compass
    build, export and chance print a line at once and progress lines ("... ") as they work:
    no wait for a line is 10 s or more, counted as _lines_in_time says (compass build was
    silent 62 s, audit 26 s, export 22-36 s, eval 24 s before "load")."""
    run = shape_color_run(tmp_path, stages=("concepts", "captions", "images"),
               concept={"task": "shape_color", "n": [3], "count": 6})
    env = {**os.environ, "AUTOCOMP_PROGRESS_EVERY": "0"}
    waits = {}

    def cli(*args):
        lines, waits[args[0] if args[0] != "compass" else "compass build"] = \
            _lines_in_time(list(args), env)
        return "\n".join(lines)

    validated = cli("validate", str(run.dir))
    assert "... validation: " in validated and " of 12 (" in validated
    built = cli("build", str(run.dir))
    assert "benchmark items" in built
    scored = cli("eval", str(run.dir), "--model", "blind:distinct", "--benchmark",
                 "shape_color-n3/minimal-*")
    assert scored.startswith(f"read   {run.dir}\n") and "load   blind:distinct" in scored
    assert "...    blind:distinct shape_color-n3/minimal-confusion: " in scored
    audited = cli("audit", str(run.dir))
    assert "... audit: " in audited and "structure: " in audited and "captions read" in audited
    compass = cli("compass", "build", str(run.dir), "-o", str(tmp_path / "set"),
                  "--similarity", "none")
    assert compass.startswith("compass build: ") and "... compass build: " in compass
    exported = cli("export", str(run.dir), "--export-format", "webdataset", "-o",
                   str(tmp_path / "wds"))
    assert exported.startswith("export ") and "... export: " in exported
    chance = cli("chance", "--task", "color", "--task", "position")
    assert "... chance: 1 of 2 (50%) tasks, color" in chance
    assert max(waits.values()) < 10.0, waits


def test_a_missing_benchmark_path_says_it_does_not_exist(tmp_path):
    out = CliRunner().invoke(main, ["eval", str(tmp_path / "nowhere"), "--model",
                                    "reference:oracle"])
    assert out.exit_code == 1 and "nowhere: does not exist" in out.output
    assert "cannot tell its format" not in out.output


def test_api_key_env_that_is_not_a_key_warns():
    import warnings

    from autocomp.models.chat import ChatClient

    with pytest.warns(UserWarning, match="AWS_SECRET_ACCESS_KEY.*is sent to http://x/v1"):
        ChatClient("m", "http://x/v1", api_key_env="AWS_SECRET_ACCESS_KEY")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ChatClient("m", "http://x/v1", api_key_env="TOGETHER_API_KEY")
        ChatClient("m", "http://x/v1", api_key_env="HF_TOKEN")


def test_a_second_run_on_a_busy_stage_is_refused_until_the_first_ends(tmp_path):
    """Two `autocomp run` on one run: the second refuses in one line naming the stage and
    the other process, instead of doing the same work twice; a killed holder leaves no
    stale lock."""
    import subprocess
    import sys

    from autocomp.core.errors import AutocompError
    from autocomp.pipeline import run_pipeline

    run = shape_color_run(tmp_path, stages=("concepts",))
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom autocomp.core.locks import holding\n"
         "with holding({'captions': sys.argv[1]}, 'stage'):\n"
         "    print('held', flush=True); time.sleep(60)", str(run.paths.stage_lock("captions"))],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(AutocompError, match=f"pid {holder.pid}.*'captions'"):
            run_pipeline(run, stages=("captions", "images"), progress=False)
        assert not run.paths.parts("captions")  # refused before doing any work
    finally:
        holder.kill()
        holder.wait()
    run_pipeline(run, stages=("captions",), progress=False)
    assert run.paths.parts("captions")


@pytest.mark.parametrize("text, needle", [
    ("image: f\npositive: p\nnegatives: [n]\nid: [a, b]\n",
     "field id: expected one column name, got ['a', 'b']"),
    ("image: f\npositive: {a: 1}\nnegatives: n\n", "field positive: expected one column"),
    ("image: f\npositive: p\nnegatives: []\n", "field negatives: expected a column name or"),
    ("image: f\npositive: p\nnegatives: [n, 3]\n", "field negatives: expected a column"),
])
def test_a_column_mapping_with_a_list_where_a_name_belongs_is_one_line(tmp_path, text,
                                                                        needle):
    from autocomp.core.errors import AutocompError
    from autocomp.formats.columns import parse_mapping

    path = tmp_path / "map.yaml"
    path.write_text(text)
    with pytest.raises(AutocompError, match=f"map.yaml: {re.escape(needle)}"):
        parse_mapping(str(path))


def test_a_huge_entry_name_is_refused_at_once_in_one_short_line(tmp_path):
    from autocomp.core.errors import AutocompError

    path = tmp_path / "v.yaml"
    path.write_text("name: x\nkind: objects\nentries: [" + "a" * 100_000 + ", cup]\n")
    out = CliRunner().invoke(main, ["vocab", "check", str(path)])
    assert out.exit_code == 1 and "Traceback" not in out.output
    assert "field 'name' is 100,000 characters long (at most 64" in out.output
    assert len(out.output) < 400
    from autocomp.concepts.vocab import parse_vocabulary

    with pytest.raises(AutocompError, match="field 'inverse' is 5,000 characters"):
        parse_vocabulary({"name": "r", "kind": "relations",
                          "entries": [{"name": "on", "inverse": "u" * 5000}]}, "r.yaml")


@pytest.mark.parametrize("name, needle", [
    ("\u0430pple", "mixes letters of several alphabets that look alike: cyrillic 'а' "
                   "(U+0430), latin 'p'"),
    ("cu\u200bp", "contains the invisible character U+200B"),
    ("\uff43at", "compatibility characters (plain form 'cat')"),
])
def test_look_alike_letters_in_a_vocabulary_warn(name, needle):
    import warnings

    from autocomp.concepts.vocab import parse_vocabulary

    with pytest.warns(UserWarning, match=re.escape(needle)):
        parse_vocabulary({"name": "x", "kind": "objects", "entries": [name, "cup"]}, "v.yaml")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one alphabet, however unusual, is fine
        parse_vocabulary({"name": "x", "kind": "objects", "entries": ["кот", "τσάι", "cup"]},
                         "v.yaml")


def test_the_caption_check_is_not_exponential_in_repeated_words():
    """Attributes whose words overlap ("big", "big big"): 38 repeated words took 61-79 s
    (twice as long per word); now well under a second, so 400 words finish in this
    generous limit only when matching is linear (scripts/bench_check.py times it)."""
    import subprocess
    import sys

    code = ("from autocomp.core.scene import Object, Relation, SceneGraph\n"
            "from autocomp.language.check import check_caption\n"
            "from autocomp.language.grammar import Noun\n"
            "g = SceneGraph((Object('cube', ('red', 'big', 'big big')), Object('ball')),"
            " (Relation(0, 'on', 1),))\n"
            "noun = lambda n: Noun(n, 'a', n + 's')\n"
            "for k in (38, 400):\n"
            "    assert not check_caption('a ' + 'big ' * k + 'x', g, noun).passed\n"
            "g = SceneGraph((Object('cube', ('red', 'big', 'shiny')), Object('ball')),"
            " (Relation(0, 'on', 1),))\n"
            "for c in ('a shiny big red cube on a ball', 'a big green red shiny cube'):\n"
            "    r = check_caption(c, g, noun)\n"
            "    print(r.passed, r.failed)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [  # other attributes in any order; no other words
        "True ()", "False ('red cube', 'big cube', 'shiny cube', 'cube on ball')"]


def test_compass_eval_confines_images_to_the_sets_image_folder(tmp_path):
    """A set's items may only name images inside the folder its manifest records (the run
    or the VG images); before, eval read any path on the machine."""
    from PIL import Image

    from autocomp.compass.build import build_run
    from autocomp.compass.sets import file_digest

    run = shape_color_run(tmp_path)
    out = tmp_path / "set"
    build_run(run.dir, out)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["image_root"] == str(run.dir.resolve())
    ok = CliRunner().invoke(main, ["compass", "eval", str(out), "--model", "reference:oracle"])
    assert ok.exit_code == 0, ok.output
    outside = tmp_path / "elsewhere.png"
    Image.new("RGB", (8, 8)).save(outside)
    path = out / "composed.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[0]["image"] = str(outside)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    manifest["files"]["composed"] = file_digest(path)  # a consistent, hostile set
    (out / "manifest.json").write_text(json.dumps(manifest))
    from tiny_models import tiny_open_clip

    model = f"open_clip:local-dir:{tiny_open_clip(tmp_path / 'oc')}"  # it reads the images
    bad = CliRunner().invoke(main, ["compass", "eval", str(out), "--model", model])
    assert bad.exit_code == 1 and "Traceback" not in bad.output
    assert f"image '{outside}' lies outside {run.dir.resolve()}" in bad.output
    del manifest["image_root"]
    (out / "manifest.json").write_text(json.dumps(manifest))
    old = CliRunner().invoke(main, ["compass", "eval", str(out), "--model", "reference:oracle"])
    assert old.exit_code == 1 and "records no image folder" in old.output


def test_review_on_a_run_it_cannot_write_to_names_the_option(tmp_path, monkeypatch):
    from autocomp.review.sample import load_or_draw
    from autocomp.run import Run

    run = shape_color_run(tmp_path)
    (run.dir / "review").write_text("a file where the review folder goes")
    out = CliRunner().invoke(main, ["review", str(run.dir), "--port", "0"])
    assert out.exit_code == 1 and "Traceback" not in out.output
    assert "cannot write the review folder" in out.output
    assert "pass --review-dir DIR" in out.output
    import tempfile

    real = tempfile.TemporaryFile
    ro_dir = tmp_path / "read-only-mount"  # root writes anywhere: simulate the mount
    ro_dir.mkdir()

    def refused(*args, dir=None, **kw):
        if str(dir) == str(ro_dir):
            raise PermissionError(13, "Permission denied")
        return real(*args, dir=dir, **kw)

    monkeypatch.setattr(tempfile, "TemporaryFile", refused)
    ro = CliRunner().invoke(main, ["review", str(run.dir), "--review-dir", str(ro_dir)])
    assert ro.exit_code == 1 and "(permission denied)" in ro.output, ro.output
    assert "--review-dir" not in ro.output  # the user's own folder: no option to suggest
    elsewhere = tmp_path / "mine"
    sample = load_or_draw(Run.open(run.dir), "validate", 2, 0, elsewhere)
    assert (elsewhere / "validate.sample.json").is_file() and sample["units"]
    rep = CliRunner().invoke(main, ["review", str(run.dir), "--review-dir", str(elsewhere),
                                    "--report"])
    assert rep.exit_code == 1 and "no validate judgments on this run's sample" in rep.output


def test_the_pages_json_block_holds_no_angle_bracket():
    import json

    from autocomp.report.html import json_block

    images = {"<!--<script>x.png": "data:", "a</script>b.png": "data:"}
    block = json_block(images)
    assert "<" not in block and json.loads(block) == images


def test_a_column_named_twice_in_a_list_is_refused():
    from autocomp.core.errors import AutocompError
    from autocomp.formats.columns import parse_mapping

    with pytest.raises(AutocompError, match="column 'a' is named twice"):
        parse_mapping("images=a+a,captions=c+d")
    assert parse_mapping("images=a+b,captions=c+d")["images"] == ["a", "b"]


def test_vocab_check_says_a_vocabulary_problem_once(tmp_path):
    """A task naming a broken vocabulary printed the vocabulary's error a second time."""
    (tmp_path / "hues.yaml").write_text("name: hues\nkind: colors\nentries: [red]\n")
    (tmp_path / "hue.yaml").write_text(
        "name: hue\nkind: attribute\nobjects: shapes\nvalues: hues.yaml\nn: [2]\n")
    got = CliRunner().invoke(main, ["vocab", "check", str(tmp_path / "hues.yaml"),
                                    str(tmp_path / "hue.yaml")])
    lines = got.output.splitlines()
    assert got.exit_code == 1 and len(lines) == 2, got.output
    assert "got 'colors'" in lines[0]
    assert lines[1].endswith("hue.yaml: names " + str(tmp_path / "hues.yaml")
                             + ", whose problem is above")


def test_a_second_compass_build_into_one_output_refuses_at_once(tmp_path):
    """Two builds into one folder both did the whole work, writing over each other."""
    from autocomp.core.locks import holding

    run = shape_color_run(tmp_path)
    out = tmp_path / "set"
    with holding({str(out): out / ".build.lock"}, "compass build", "into this folder"):
        got = CliRunner().invoke(main, ["compass", "build", str(run.dir), "-o", str(out),
                                        "--similarity", "none"])
    assert got.exit_code == 4 and "is running compass build" in got.output, got.output
    assert "into this folder; wait for it to finish" in got.output
    assert not (out / "manifest.json").exists()
    again = CliRunner().invoke(main, ["compass", "build", str(run.dir), "-o", str(out),
                                      "--similarity", "none"])
    assert again.exit_code == 0 and (out / "manifest.json").is_file(), again.output


@pytest.mark.slow
def test_report_json_long_csv_figure_flags_and_where_the_figure_of_a_run_goes(tmp_path):
    """CSV was CRLF with each table's own header in one stream; report had no --json;
    `report` took --figure and `compass report` --figures; report given a run (not its
    results) wrote min_vs_ctx.png among the run's own figures."""
    import csv
    import io

    run = shape_color_run(tmp_path)
    runner = CliRunner()
    assert runner.invoke(main, ["eval", str(run.dir), "--model", "reference:oracle"]
                         ).exit_code == 0
    results = str(run.dir / "results")
    got = runner.invoke(main, ["report", results, "--no-figures", "--table-format", "csv"])
    assert got.exit_code == 0 and "\r" not in got.stdout, got.output
    import pandas as pd

    from autocomp.report.table_format import LONG_COLUMNS

    rows = list(csv.DictReader(io.StringIO(got.stdout)))
    assert list(rows[0]) == LONG_COLUMNS and len({r["table"] for r in rows}) > 1
    # a number per row with its own keys and its interval's bounds as numbers (issue 52)
    cell = next(r for r in rows if r["table"].startswith("Table 4")
                and r["model"] == "reference:oracle")
    assert cell["value"] == "100.0" and cell["text"].startswith("100.0 [")
    low, high = (float(x) for x in cell["text"][7:-1].split(", "))
    # issue 69: the numbers unrounded, the text as printed
    assert abs(float(cell["low"]) - low) <= 0.05 and float(cell["high"]) == high == 100.0
    assert cell["task"] == "shape_color" and cell["n"] in ("1", "2") and float(cell["low"])
    chance = next(r for r in rows if r["table"].startswith("Table 4")
                  and r["model"] == "Random Chance" and r["text"] == "6.3")
    assert chance["value"] == "6.25"  # was the printed 6.3
    p = [r for r in rows if r["table"].startswith("Table 5") and r["column"].startswith("p")]
    assert p and all(r["value"] for r in p if r["text"] not in ("-", ""))  # "<0.001" too
    t5 = [r for r in rows if r["table"].startswith("Table 5") and r["row"] != "-1"]
    assert t5 and all(r["model"] and r["task"] and r["n"] and r["benchmark"] for r in t5)
    df = pd.read_csv(io.StringIO(got.stdout))
    wide = df.pivot(index=["table", "row"], columns="column", values="text")  # unique keys
    assert len(wide) == len(df[["table", "row"]].drop_duplicates())
    got = runner.invoke(main, ["report", results, "--no-figure", "--json"])
    data = json.loads(got.stdout)
    assert got.exit_code == 0 and data["tables"] and {"title", "header", "rows", "notes"} <= \
        set(data["tables"][0])
    got = runner.invoke(main, ["report", str(run.dir)])
    assert got.exit_code == 0, got.output
    assert (run.dir / "results" / "figures" / "min_vs_ctx.png").is_file()
    assert not (run.dir / "figures" / "min_vs_ctx.png").exists()


def test_compass_eval_output_benchmark_and_a_report_of_that_output(tmp_path):
    """compass eval lacked --output, --benchmark, --precision and --workers; its results
    could only go inside the set."""
    from autocomp.compass.build import build_run

    run = shape_color_run(tmp_path)
    build_run(run.dir, tmp_path / "set")
    out = tmp_path / "elsewhere"
    got = CliRunner().invoke(main, ["compass", "eval", str(tmp_path / "set"), "--model",
                                    "reference:oracle", "-o", str(out), "--benchmark",
                                    "*composed", "--precision", "fp32", "--workers", "0"])
    assert got.exit_code == 0, got.output
    assert sorted(p.name for p in out.glob("reference_oracle-*/*.predictions.jsonl")) \
        == ["composed.predictions.jsonl", "decomposed.predictions.jsonl"]
    assert not (tmp_path / "set" / "results").exists()
    rep = CliRunner().invoke(main, ["compass", "report", str(out), "--json"])
    assert rep.exit_code == 0, rep.output
    table2 = json.loads(rep.stdout)["tables"][0]
    assert table2["rows"] and table2["rows"][0][0] == "reference:oracle"
    assert (out / "figures" / "integration.png").is_file()
    bad = CliRunner().invoke(main, ["compass", "eval", str(tmp_path / "set"), "--model",
                                    "reference:oracle", "--benchmark", "nothing*"])
    assert bad.exit_code == 1 and "no file of the set matches nothing*" in bad.output


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

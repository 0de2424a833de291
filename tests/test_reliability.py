"""Issue 15: bad input and damaged run directories get one line and lose nothing."""

import json
import sys

import pytest
from click.testing import CliRunner
from conftest import read_only, shape_color_run

from autocomp.cli import main
from autocomp.core.errors import AutocompError


def test_object_names_ending_in_a_non_word_character_match(tmp_path):
    from autocomp.captions.template import TemplateWriter
    from autocomp.captions.writers import write_with_retries
    from autocomp.concepts.load import load_task
    from autocomp.concepts.sampling import sample_concepts
    from autocomp.language.check import check_caption

    (tmp_path / "odd.yaml").write_text(
        "name: odd\nkind: objects\nentries: ['c++', 'star*', '(box)', 'lamp', 'c']\n")
    (tmp_path / "task.yaml").write_text(
        "name: oddtask\nkind: attribute\nobjects: odd.yaml\nvalues: colors\nn: [1, 2, 3]\n")
    task = load_task(str(tmp_path / "task.yaml"))
    concepts = [c for n in (1, 2, 3) for c in sample_concepts(task, n, 10, seed=0)]
    for c in concepts:
        caption = task.minimal_caption(c.graph)
        assert check_caption(caption, c.graph, task.noun, task.object_forms).passed, caption
    written = write_with_retries(TemplateWriter(), [(c.id, c.graph, task, c.seed)
                                                    for c in concepts], 0)
    assert all(w["caption"] for w in written.values())
    # "c" does not match inside "c++": the longer name is written there
    from autocomp.core.scene import attribute_graph

    g = attribute_graph(["c"], ["red"])
    assert not check_caption("a red c++ on a white background", g, task.noun,
                             task.object_forms).passed


@pytest.mark.parametrize("geometry, needle", [
    ("{dx: left, dy: 0}", "field 'geometry.dx' must be a number, got 'left'"),
    ("{dx: 1}", "needs dx and dy together"),
    ("{east: 1}", "field 'geometry.east' is not known"),
    ("{size: true}", "field 'geometry.size' must be a number, got True"),
])
def test_relation_geometry_is_type_checked(tmp_path, geometry, needle):
    from autocomp.concepts.vocab import load_vocabulary

    path = tmp_path / "rel.yaml"
    path.write_text(f"name: rel\nkind: relations\nentries:\n  - {{name: near, geometry: "
                    f"{geometry}}}\n")
    with pytest.raises(AutocompError, match=needle) as err:
        load_vocabulary(path)
    assert str(path) in str(err.value) and "\n" not in str(err.value)


def test_damaged_embedding_cache_warns_and_recomputes_only_what_it_lost(tmp_path):
    import numpy as np

    from autocomp.eval.cache import EmbeddingCache

    cache = EmbeddingCache(tmp_path, "blind:unigram")
    cache.put_many(["a", "b"], np.ones((2, 3)))
    cache.close()
    (cache.path / "other.vec").write_bytes(b"this is not a shard" * 100)
    with pytest.warns(UserWarning, match=r"other\.vec: unreadable from byte 0"):
        again = EmbeddingCache(tmp_path, "blind:unigram")
    assert again.missing(["a", "b", "c"]) == ["c"]  # the good shard still serves

    run = shape_color_run(tmp_path)
    runner = CliRunner()
    ok = runner.invoke(main, ["eval", str(run.dir), "--model", "blind:unigram"])
    assert ok.exit_code == 0, ok.output
    results = {p: p.read_bytes() for p in sorted((run.dir / "results").rglob("*.json"))}
    for shard in (run.dir / "cache").rglob("*.vec"):
        data = shard.read_bytes()
        shard.write_bytes(data[:len(data) // 2] + b"garbage" * 50)  # torn and damaged
    out = runner.invoke(main, ["eval", str(run.dir), "--model", "blind:unigram"])
    assert out.exit_code == 0 and "Traceback" not in out.output
    after = {p: p.read_bytes() for p in sorted((run.dir / "results").rglob("*.json"))}
    assert [json.loads(after[p])["metrics"] for p in after] == \
        [json.loads(results[p])["metrics"] for p in results]


def test_ranks_on_several_nodes_share_one_cache_folder(tmp_path):
    """Processes write their own shards at once, with no lock; each reads the others'."""
    import subprocess

    code = ("import sys, numpy as np; from autocomp.eval.cache import EmbeddingCache as C; "
            "c = C(sys.argv[1], 's'); r = int(sys.argv[2]); "
            "[c.put_many([f'{r}-{i}-{j}' for j in range(10)], np.full((10, 8), r)) "
            "for i in range(50)]; c.close()")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path), str(r)])
             for r in range(4)]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    from autocomp.eval.cache import EmbeddingCache

    reader = EmbeddingCache(tmp_path, "s")
    keys = [f"{r}-{i}-{j}" for r in range(4) for i in range(50) for j in range(10)]
    assert reader.missing(keys) == [] and len(list(reader.path.glob("*.vec"))) == 4
    got = reader.get_many(keys)
    assert all(float(got[k][0]) == int(k.split("-")[0]) for k in keys)


def test_result_folders_are_one_to_one():
    from autocomp.eval.cache import folder_name, slug

    pairs = [("open_clip:local-dir:/w/ckpt v2", "open_clip:local-dir:/w/ckpt_v2"),
             ("hf:/org/m", "hf:org/m")]
    for a, b in pairs:
        assert slug(a) == slug(b) and folder_name(a) != folder_name(b)
    assert folder_name("reference:oracle") == folder_name("reference:oracle")


def test_two_runs_with_different_configs_started_at_once_one_is_refused(tmp_path,
                                                                        monkeypatch):
    import threading
    import time

    from autocomp import run as run_mod
    from autocomp.config import parse_config

    slow_write = run_mod.write_text

    def slow(path, text):  # widen the window between "no config yet" and writing it
        time.sleep(0.3)
        slow_write(path, text)

    monkeypatch.setattr(run_mod, "write_text", slow)
    configs = [parse_config({"name": "r", "seed": s, "concepts": [
        {"task": "shape_color", "n": [2], "count": 2}]}) for s in (1, 2)]
    outcome = []

    def start(cfg):
        try:
            run_mod.Run.create(cfg, tmp_path / "run")
            outcome.append("ok")
        except AutocompError as exc:
            outcome.append(str(exc))

    threads = [threading.Thread(target=start, args=(c,)) for c in configs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(o == "ok" for o in outcome) == [False, True], outcome
    assert any("made with another config" in o for o in outcome)


def test_status_writes_nothing(tmp_path):
    run = shape_color_run(tmp_path, ("concepts", "captions", "images", "validation"),
               {"task": "scenes", "count": 4})

    def snapshot():
        return {str(p): (p.stat().st_mtime_ns, p.stat().st_size)
                for p in run.dir.rglob("*")}

    before = snapshot()
    out = CliRunner().invoke(main, ["status", str(run.dir)])
    assert out.exit_code == 0, out.output
    assert snapshot() == before
    assert "concepts           4      4      4" in out.output  # a scene spec's count


def test_a_damaged_line_inside_a_part_file_is_skipped_and_redone(tmp_path):
    from autocomp.pipeline import run_pipeline
    from autocomp.runtime.parts import part_files, read_part

    run = shape_color_run(tmp_path, ("concepts", "captions"),
               {"task": "shape_color", "n": [2], "count": 6})
    (part,) = part_files(run.dir / "captions")
    lines = part.read_text().splitlines(keepends=True)
    lost = lines[2]
    lines[2] = '{"id": "x", "broken\n'
    part.write_text("".join(lines))
    with pytest.warns(UserWarning, match=rf"{part}:3: 1 damaged line\(s\) skipped"):
        assert len(list(read_part(part))) == len(lines) - 1
    out = CliRunner().invoke(main, ["status", str(run.dir)])
    assert out.exit_code == 0, out.output
    with pytest.warns(UserWarning):
        run_pipeline(run, stages=("captions",), progress=False)  # the item is done again
    assert lost in (run.dir / "captions" / "merged.jsonl").read_text()


@pytest.mark.parametrize("image, needle", [
    ("../../etc/passwd", "lies outside"),
    ("/etc/hostname", "lies outside"),
    ("/dev/zero", "lies outside"),
    ("images/fifo", "is not a regular file"),
    ("images/none.png", "does not exist"),
    ("images/truncated.png", "image cannot be read"),
    ("images/text.png", "image cannot be read"),
])
def test_eval_item_images_are_confined_and_checked(tmp_path, image, needle):
    import json
    import os

    from tiny_models import tiny_open_clip

    run = shape_color_run(tmp_path)
    os.mkfifo(run.dir / "images" / "fifo")
    good = next((run.dir / "images").rglob("*.png")).read_bytes()
    (run.dir / "images" / "truncated.png").write_bytes(good[:len(good) // 2])
    (run.dir / "images" / "text.png").write_text("not an image")
    path = next((run.dir / "bench").glob("shape_color-n2/minimal-swap.jsonl"))
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    rows[1]["image"] = image
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    spec = f"open_clip:local-dir:{tiny_open_clip(tmp_path / 'oc')}"
    out = CliRunner().invoke(main, ["eval", str(run.dir), "--model", spec, "--benchmark",
                                    "shape_color-n2/minimal-swap"])
    assert out.exit_code != 0 and needle in out.output, out.output
    assert f"item {rows[1]['id']}" in out.output and "Traceback" not in out.output


def test_compass_vg_input_types_are_checked_and_counted(tmp_path):
    import json
    from collections import Counter

    from autocomp.compass.vg import load_vg

    vg = tmp_path / "vg"
    vg.mkdir()
    images = [
        {"image_id": 1, "objects": [{"object_id": 10, "names": "sofa", "attributes": "red"},
                                    {"object_id": 11, "names": ["lamp"]}],
         "relationships": [{"subject_id": 11, "object_id": 10, "predicate": "near"}]},
        {"image_id": 2, "objects": 5},
        {"image_id": 3, "objects": [{"object_id": 1, "names": ["cup"]}], "relationships": 7},
        {"image_id": 4, "objects": [{"object_id": 1, "names": ["cup"]},
                                    {"object_id": 2, "names": ["mug"]}],
         "relationships": [{"subject_id": [1], "object_id": 2, "predicate": "near"},
                           {"subject_id": 1, "object_id": {"id": 2}, "predicate": "on"}]},
    ]
    (vg / "scene_graphs.json").write_text(json.dumps(images))
    skipped = Counter()
    got = load_vg(vg, skipped=skipped)
    assert [img.image_id for img in got] == [1, 3, 4]
    assert not got[2].graph.relations  # ids that are lists or objects: skipped, counted
    assert skipped["relation: subject_id or object_id not an integer"] == 2
    sofa = got[0].graph.objects[0]
    assert sofa.name == "sofa" and sofa.attributes == ("red",)
    assert skipped["object names: a string where a list belongs, read as one item"] == 1
    assert skipped["object attributes: a string where a list belongs, read as one item"] == 1
    assert skipped["image objects: not a list (int), left out"] == 1
    assert skipped["image relationships: not a list (int), left out"] == 1
    assert skipped["image: no usable object"] == 1
    (vg / "scene_graphs.json").write_text(json.dumps({"image_id": 1, "objects": []}))
    with pytest.raises(AutocompError, match="expected a JSON list of images at the top level"):
        load_vg(vg)
    (vg / "scene_graphs.json").write_text('[{"image_id": 1, "objects": [}]')
    with pytest.raises(AutocompError, match="not valid JSON") as err:
        load_vg(vg)
    assert "\n" not in str(err.value) and "scene_graphs.json" in str(err.value)


def test_damaged_merged_files_are_read_from_the_part_files(tmp_path):
    run = shape_color_run(tmp_path, ("concepts", "captions"),
               {"task": "shape_color", "n": [2], "count": 8})
    merged = run.dir / "captions" / "merged.jsonl"
    full = merged.read_text()
    want = run.records("captions")
    assert len(want) == 8
    for damaged in (full.splitlines(keepends=True)[0] * 3,  # shortened
                    full.replace("}\n", "}\n{not json\n", 1),  # a broken line
                    ""):
        merged.write_text(damaged)
        with pytest.warns(UserWarning, match="read from them instead"):
            assert run.records("captions") == want
    merged.unlink()  # not merged yet (a stage running or stopped): read quietly (issue 68:
    import warnings  # `status` called a stage that never finished "missing, damaged ...")

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert run.records("captions") == want


def test_eval_where_results_cannot_be_written_says_which_option(tmp_path):
    run = shape_color_run(tmp_path)
    (run.dir / "results").write_text("a file where the results folder goes")
    out = CliRunner().invoke(main, ["eval", str(run.dir), "--model", "reference:oracle"])
    assert out.exit_code != 0 and "pass --output DIR" in out.output, out.output
    assert "Traceback" not in out.output
    ok = CliRunner().invoke(main, ["eval", str(run.dir), "--model", "reference:oracle",
                                   "--output", str(tmp_path / "elsewhere")])
    assert ok.exit_code == 0, ok.output


@pytest.mark.parametrize("text, needle", [
    (b"name: x\nkind: objects\nentries: [caf\xe9]\n", "not UTF-8 text"),
    (b"name: x\nkind: objects\nentries: !!python/object/apply:os.system [ls]\n",
     "unsafe or unknown YAML tag at line 3"),
    (b"name: x\nkind: objects\nname: y\nentries: [cup]\n", "duplicate key 'name' at line 3"),
    (b"name: x\nkind: objects\n? [a, b]\n: c\nentries: [cup]\n",
     "a mapping key must be a plain value, got a list at line 3"),
    (b"name: x\nkind: objects\nentries: {{a: 1}: cup}\n",
     "a mapping key must be a plain value, got a dict at line 3"),
])
def test_yaml_problems_are_one_line(tmp_path, text, needle):
    from autocomp.concepts.vocab import load_vocabulary

    path = tmp_path / "v.yaml"
    path.write_bytes(text)
    with pytest.raises(AutocompError, match=needle) as err:
        load_vocabulary(path)
    assert str(path) in str(err.value) and "\n" not in str(err.value)


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


def test_hf_scorer_cuts_long_captions_to_the_text_towers_positions(tmp_path):
    from tiny_models import tiny_hf_clip

    from autocomp.eval.scorers import load_scorer

    scorer = load_scorer(f"hf:{tiny_hf_clip(tmp_path / 'clip')}")
    long = "a red cube next to a blue sphere " * 20  # ~660 tokens with this vocabulary
    vecs = scorer.encode_texts([long, "a red cube"])
    assert vecs.shape[0] == 2 and abs(float((vecs[0] ** 2).sum()) - 1) < 1e-4


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


def test_no_op_stages_are_refused_and_old_temp_files_cleaned(tmp_path):
    import os
    import time

    from autocomp.config import parse_config
    from autocomp.pipeline import run_pipeline
    from autocomp.run import Run

    cfg_path = tmp_path / "c.yaml"
    cfg_path.write_text("name: n\nconcepts: [{task: shape_color, n: [2], count: 2}]\n")
    out = CliRunner().invoke(main, ["run", str(cfg_path), "--out", str(tmp_path / "run"),
                                    "--stages", "images"])
    assert out.exit_code != 0
    assert "stage images needs the records of stage captions" in out.output
    run = Run.create(parse_config({"name": "n", "concepts": [
        {"task": "shape_color", "n": [2], "count": 2}]}), tmp_path / "run2")
    run_pipeline(run, stages=("concepts",), progress=False)
    out = CliRunner().invoke(main, ["build", str(run.dir)])
    assert out.exit_code != 0 and "needs the records of stage validation" in out.output
    old = run.dir / "captions" / ".merged.jsonl.abc.autocomp.tmp"
    new = run.dir / "captions" / ".part.def.autocomp.tmp"
    theirs = run.dir / "captions" / ".editor-swap.tmp"  # another program's, however old
    old.parent.mkdir(exist_ok=True)
    for p in (old, new, theirs):
        p.write_text("half")
    for p in (old, theirs):
        os.utime(p, (time.time() - 7200, time.time() - 7200))
    run_pipeline(run, stages=("captions",), progress=False)
    assert not old.exists() and new.exists()  # a live writer's file is left alone
    assert theirs.exists()


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


def test_eval_removes_only_its_own_orphaned_temp_files(tmp_path):
    import os
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


def test_temp_files_of_a_process_killed_minus_9_are_cleaned_by_the_next_command(tmp_path):
    """kill -9 in the middle of an image, a predictions file and an export left their temp
    files, and a later run, eval or export within the hour kept them (only age counted):
    a temp file now names its writer (host, pid), and a gone writer's is removed at once."""
    import subprocess
    import sys

    from autocomp.bench.export import export_run
    from autocomp.eval.cells import evaluate
    from autocomp.pipeline import run_pipeline

    run = shape_color_run(tmp_path)
    out, export = tmp_path / "res", tmp_path / "exported"
    out.mkdir()
    killer = f"""
import os, signal
from pathlib import Path
from autocomp.core.records import atomic_dir, atomic_open, temp_path
stack = [atomic_open(Path({str(run.dir / "images" / "minimal" / "x.png")!r}), "wb"),
         atomic_dir(Path({str(export)!r}))]
for ctx in stack:
    ctx.__enter__()
temp_path(Path({str(out / "a.predictions.jsonl")!r})).write_text("half")
os.kill(os.getpid(), signal.SIGKILL)
"""
    got = subprocess.run([sys.executable, "-c", killer], capture_output=True, text=True)
    assert got.returncode == -9, got.stderr
    left = {p.parent.name for p in tmp_path.rglob("*.autocomp.tmp")}
    assert left == {"minimal", "res", tmp_path.name}, left
    live = run.dir / "images" / ".y.png.@elsewhere~1.abc.autocomp.tmp"  # another host's
    live.write_text("half")
    run_pipeline(run, stages=("images",), progress=False)
    evaluate(run.dir, ["reference:random"], out)
    export_run(run.dir, "webdataset", export)
    assert [p.name for p in tmp_path.rglob("*.autocomp.tmp")] == [live.name]


def test_atomic_writes_follow_the_umask(tmp_path):
    """mkstemp makes 0600 files: a run shared with a group was unreadable to it."""
    import os

    from autocomp.core.records import write_jsonl

    old = os.umask(0o002)
    try:
        write_jsonl(tmp_path / "shared.jsonl", [{"a": 1}])
    finally:
        os.umask(old)
    assert (tmp_path / "shared.jsonl").stat().st_mode & 0o777 == 0o664


@pytest.mark.slow
def test_build_refuses_a_partial_run_and_eval_redoes_changed_benchmarks(tmp_path):
    """Issue 23, major 7: build on a run whose validation is not finished is refused (or
    marked with --partial); a result carries the fingerprint of the benchmark it scored,
    and `eval --skip_existing` redoes a cell whose benchmark changed."""
    from test_store import _all_passed

    from autocomp.core.records import read_jsonl, write_jsonl
    from autocomp.eval.cells import result_file

    run = shape_color_run(tmp_path, stages=("concepts", "captions", "images", "validation"))
    _all_passed(run)
    merged = run.dir / "validation" / "merged.jsonl"
    rows = list(read_jsonl(merged))
    write_jsonl(merged, rows[:2])  # validation stopped after 2 of 6 images
    runner = CliRunner()
    refused = runner.invoke(main, ["build", str(run.dir)])
    assert refused.exit_code == 1
    assert "validation: 2 of 6 done" in refused.output
    assert "--partial" in refused.output and "Traceback" not in refused.output
    assert not (run.dir / "bench").exists()
    partial = runner.invoke(main, ["build", str(run.dir), "--partial"])
    assert partial.exit_code == 0, partial.output
    stats = json.loads((run.dir / "stats" / "build.json").read_text())
    assert stats["partial"] == ["validation: 2 of 6"]
    assert "benchmark items of a partial run: validation: 2 of 6 done" in runner.invoke(
        main, ["status", str(run.dir)]).output

    out = tmp_path / "res"
    args = ["eval", str(run.dir), "--model", "reference:oracle", "--output", str(out),
            "--benchmark", "shape_color-n2/minimal-swap", "--skip_existing"]
    first = runner.invoke(main, args)
    assert first.exit_code == 0, first.output
    result = result_file(out, "reference:oracle", "shape_color-n2/minimal-swap")
    assert json.loads(result.read_text())["n_items"] == 1
    assert "skip   reference:oracle" in runner.invoke(main, args).output  # unchanged
    write_jsonl(merged, rows)  # the run resumed and finished; rebuilt
    assert runner.invoke(main, ["build", str(run.dir)]).exit_code == 0
    assert "partial" not in json.loads((run.dir / "stats" / "build.json").read_text())
    again = runner.invoke(main, args)
    assert "redo   reference:oracle shape_color-n2/minimal-swap (the benchmark changed" \
        in again.output
    assert json.loads(result.read_text())["n_items"] == 3
    # a result written before results carried a fingerprint is done again as well
    data = json.loads(result.read_text())
    del data["benchmark_fingerprint"]
    result.write_text(json.dumps(data))
    old = runner.invoke(main, args)
    assert "redo   reference:oracle shape_color-n2/minimal-swap (the result does not say" \
        in old.output
    assert "skip" in runner.invoke(main, args).output


def test_a_read_only_run_is_one_line_and_its_report_still_comes(tmp_path, monkeypatch):
    from click.testing import CliRunner
    from conftest import built_run

    from autocomp.cli import main

    config = ("name: ro\nconcepts:\n  - {task: shape_color, n: [2], count: 6}\n"
              "generate: {options: {size: 64}}\n")
    run = built_run(tmp_path, config)
    got = CliRunner().invoke(main, ["eval", str(run.dir), "--model", "reference:random"])
    assert got.exit_code == 0, got.output
    read_only(monkeypatch, run.dir)
    again = CliRunner().invoke(main, ["run", str(tmp_path / "run.yaml"), "--output",
                                      str(run.dir), "--no-progress"])
    assert again.exit_code == 1 and isinstance(again.exception, SystemExit), again.exception
    assert "cannot write to the run folder (Read-only file system)" in again.output
    page = tmp_path / "page.html"
    rep = CliRunner().invoke(main, ["report", str(run.dir / "results"), "--html", str(page)])
    assert rep.exit_code == 0, (rep.output, rep.exception)
    assert "figure not written: cannot write" in rep.output and page.is_file()


def test_a_damaged_cache_shard_is_never_read_as_vectors(tmp_path):
    """A shard cut inside a vector and padded with other bytes once gave that vector's
    frame garbage floats (a best negative scored 1.7e11); every frame now carries a CRC-32,
    so the damaged frame is not read, counted, and its vector computed again."""
    import numpy as np

    from autocomp.eval.cache import EmbeddingCache

    keys = [f"k{i:02d}" for i in range(20)]
    vectors = np.random.default_rng(0).standard_normal((20, 16)).astype(np.float32)
    cache = EmbeddingCache(tmp_path, "scorer")
    cache.put_many(keys, vectors)
    cache.close()
    shard = next(tmp_path.rglob("*.vec"))
    data = shard.read_bytes()
    frame = (len(data) - 7) // 20  # after the 7-byte magic, 20 frames of one size
    cut = 7 + 10 * frame + frame // 2  # inside frame 10's vector
    shard.write_bytes(data[:cut] + np.random.default_rng(1).bytes(len(data) - cut))
    with pytest.warns(UserWarning, match="unreadable from byte"):
        again = EmbeddingCache(tmp_path, "scorer")
    got = again.get_many(keys)
    assert again.damaged == 1 and sorted(got) == keys[:10]
    for key, vector in got.items():
        assert np.array_equal(vector, vectors[keys.index(key)])
    assert again.missing(keys) == keys[10:]  # computed again
    old = tmp_path / "old"
    shard_dir = EmbeddingCache(old, "scorer").path
    (shard_dir / "host-1-abc.vec").write_bytes(b"ACVEC1\n" + data[7:])  # before checksums
    with pytest.warns(UserWarning, match="written by an older autocomp"):
        assert EmbeddingCache(old, "scorer").missing(keys) == keys


def test_a_part_file_linked_outside_the_run_is_never_cut_nor_appended_to(tmp_path):
    """Issue 68: a part file linked to an outside file had its last line cut by the repair
    and 400 records appended; a dangling link created its target. One line naming the part
    file; the outside file untouched."""
    from autocomp.core.errors import AutocompError
    from autocomp.runtime.parts import PartWriter, part_path, read_part, repair

    stage = tmp_path / "run" / "captions"
    stage.mkdir(parents=True)
    outside = tmp_path / "outside.txt"
    outside.write_text("line one\nhalf a line")
    part = part_path(stage, 0)
    part.symlink_to(outside)
    for call in (lambda: repair(part), lambda: PartWriter(stage, 0),
                 lambda: list(read_part(part))):
        with pytest.raises(AutocompError, match="a symbolic link stands where a part file "
                                                "should be: autocomp writes through no link"):
            call()
    assert outside.read_text() == "line one\nhalf a line"
    part.unlink()
    part.symlink_to(tmp_path / "made-by-a-link")
    with pytest.raises(AutocompError):
        PartWriter(stage, 0)
    assert not (tmp_path / "made-by-a-link").exists()
    part.unlink()
    part.mkdir()
    with pytest.raises(AutocompError, match="a directory stands where a part file should be"):
        PartWriter(stage, 0)

"""`autocomp compass build` and `compass eval` on a run: a set is one build (a killed
rebuild is refused), its items name images only inside its image folder, and eval's own
options (--output, --benchmark, a perplexity hint)."""

import json

import pytest
from click.testing import CliRunner
from conftest import shape_color_run

from autocomp.cli import main


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

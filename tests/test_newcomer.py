"""Issue 23: what a newcomer meets in eval: a wrong open_clip tag or folder, a model that
cannot load, a downloaded dataset folder left as it was."""

import json

import pytest
from click.testing import CliRunner
from test_external import coco, crepe, sugarcrepe  # noqa: F401 (fixtures)

from autocomp.cli import main


def _files(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize("spec, needle, code", [
    ("open_clip:ViT-B-32@laion2b_nope",
     "open_clip has no weights 'laion2b_nope' for ViT-B-32 (known tags: openai, ", 1),
    ("open_clip:local-dir:{tmp}/nowhere", "no folder {tmp}/nowhere (local-dir: names a folder",
     81),  # weights missing, as for hf: (issue 68: it was 1)
    ("open_clip:local-dir:{tmp}", "the folder {tmp} has no open_clip_config.json", 81),
])
def test_a_wrong_open_clip_tag_or_folder_is_one_line_saying_what_is_known(
        sugarcrepe, coco, tmp_path, spec, needle, code):  # noqa: F811
    spec, needle = (x.format(tmp=tmp_path) for x in (spec, needle))
    out = CliRunner().invoke(main, ["eval", str(sugarcrepe), "--images", str(coco),
                                    "--model", spec, "--output", str(tmp_path / "r")])
    assert out.exit_code == code and "Traceback" not in out.output
    assert needle in " ".join(out.output.split()), out.output


def test_eval_leaves_a_dataset_folder_as_downloaded_and_a_failed_load_leaves_nothing(
        sugarcrepe, coco, tmp_path, monkeypatch):  # noqa: F811
    before = _files(sugarcrepe)
    monkeypatch.chdir(tmp_path)
    bad = CliRunner().invoke(main, ["eval", str(sugarcrepe), "--images", str(coco), "--model",
                                    f"open_clip:local-dir:{tmp_path / 'nowhere'}"])
    assert bad.exit_code == 81 and "no folder" in bad.output
    assert not (tmp_path / "sugarcrepe.autocomp").exists()  # no empty results/ or cache/
    ok = CliRunner().invoke(main, ["eval", str(sugarcrepe), "--images", str(coco), "--model",
                                   "blind:length"])
    assert ok.exit_code == 0, ok.output
    assert _files(sugarcrepe) == before  # nothing written into the dataset's folder
    results = tmp_path / "sugarcrepe.autocomp" / "results"
    got = [json.loads(p.read_text()) for p in results.rglob("*.json")
           if not p.name.endswith("predictions.json")]
    assert {r["benchmark"] for r in got if "benchmark" in r} == {"sugarcrepe/add_obj",
                                                                   "sugarcrepe/swap_att"}


def test_audit_over_several_formats_selects_across_them_and_names_the_bad_source(
        sugarcrepe, coco, crepe, tmp_path):  # noqa: F811
    """A --benchmark pattern holds across the sources (before, a source without a match
    stopped the audit); a source that cannot be read is named."""
    import shutil

    d, vg = crepe
    images = tmp_path / "both"
    shutil.copytree(coco, images)
    for p in vg.iterdir():
        shutil.copy(p, images / p.name)
    runner = CliRunner()
    out = runner.invoke(main, ["audit", str(sugarcrepe), str(d), "--images", str(images),
                               "--benchmark", "crepe/*", "--json"])
    assert out.exit_code == 0, out.output
    assert {r["benchmark"] for r in json.loads(out.output)} == {"crepe/atom-n5",
                                                               "crepe/swap-n4"}
    both = runner.invoke(main, ["audit", str(sugarcrepe), str(d), "--images", str(images),
                                "--json"])
    assert {r["benchmark"].split("/")[0] for r in json.loads(both.output)} == {
        "sugarcrepe", "crepe"}
    none = runner.invoke(main, ["audit", str(sugarcrepe), str(d), "--images", str(images),
                                "--benchmark", "vl-checklist/*"])
    assert none.exit_code == 1 and "known: sugarcrepe/add_obj" in none.output
    stray = tmp_path / "stray.jsonl"
    stray.write_text('{"a": 1}\n')
    bad = runner.invoke(main, ["audit", str(sugarcrepe), str(stray), "--images", str(images)])
    assert bad.exit_code == 1 and f"{stray}: the column mapping needs" in bad.output

"""Issue 23: what a newcomer meets in eval: a wrong open_clip tag or folder, a model that
cannot load, a downloaded dataset folder left as it was."""

import json

import pytest
from click.testing import CliRunner
from test_external import coco, sugarcrepe  # noqa: F401 (fixtures)

from autocomp.cli import main


def _files(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize("spec, needle", [
    ("open_clip:ViT-B-32@laion2b_nope",
     "open_clip has no weights 'laion2b_nope' for ViT-B-32 (known tags: openai, "),
    ("open_clip:local-dir:{tmp}/nowhere", "no folder {tmp}/nowhere (local-dir: names a folder"),
    ("open_clip:local-dir:{tmp}", "the folder {tmp} has no open_clip_config.json"),
])
def test_a_wrong_open_clip_tag_or_folder_is_one_line_saying_what_is_known(
        sugarcrepe, coco, tmp_path, spec, needle):  # noqa: F811
    spec, needle = (x.format(tmp=tmp_path) for x in (spec, needle))
    out = CliRunner().invoke(main, ["eval", str(sugarcrepe), "--images", str(coco),
                                    "--model", spec, "--output", str(tmp_path / "r")])
    assert out.exit_code == 1 and "Traceback" not in out.output
    assert needle in " ".join(out.output.split()), out.output


def test_eval_leaves_a_dataset_folder_as_downloaded_and_a_failed_load_leaves_nothing(
        sugarcrepe, coco, tmp_path, monkeypatch):  # noqa: F811
    before = _files(sugarcrepe)
    monkeypatch.chdir(tmp_path)
    bad = CliRunner().invoke(main, ["eval", str(sugarcrepe), "--images", str(coco), "--model",
                                    f"open_clip:local-dir:{tmp_path / 'nowhere'}"])
    assert bad.exit_code == 1 and "no folder" in bad.output
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

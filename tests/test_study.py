"""`autocomp study`: a validity study in one command (configs/studies/), on tiny random
models, the demo run and a SugarCrepe folder written by hand in its release's layout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from autocomp.cli import main

ROOT = Path(__file__).parents[1]


def test_the_shipped_study_names_table4s_encoders_and_six_real_benchmarks():
    from autocomp.eval.modelset import model_entries
    from autocomp.report.study import read_study

    study = read_study(ROOT / "configs" / "studies" / "validity.yaml")
    assert len(model_entries(study.models)) == 20
    names = [s.path.name for s in study.references]
    assert names == ["sugarcrepe", "winoground", "aro", "colorswap", "sugarcrepe_pp", "VALSE"]
    assert study.synthetic.path.resolve() == (ROOT / "runs" / "autocomp-cp").resolve()


@pytest.mark.parametrize("body, needle", [
    ("models: m.yaml\nsynthetic: {source: x}\n", "field 'references': missing"),
    ("models: m.yaml\nsynthetic: {source: x}\nreferences: [{source: y, colour: 1}]\n",
     "field 'references[0]': unknown key 'colour'"),
    ("models: 3\nsynthetic: {source: x}\nreferences: [{source: y}]\n",
     "field 'models': expected a models file's path, got 3"),
    ("models: m.yaml\nsynthetic: x\nreferences: [{source: y}]\n",
     "field 'synthetic': expected {source: PATH, ...}, got 'x'"),
])
def test_a_bad_study_file_is_one_line(tmp_path, body, needle):
    from conftest import assert_file_error

    from autocomp.report.study import read_study

    assert_file_error(read_study, tmp_path, body, needle)


def _sugarcrepe(folder: Path) -> tuple[Path, Path]:
    """SugarCrepe's layout: a JSON per subset keyed "0", "1", ...; COCO images by name."""
    from PIL import Image

    images = folder / "coco"
    images.mkdir(parents=True)
    colors = ["red", "blue", "green", "yellow", "purple", "orange"]
    rows = {}
    for i, (a, b) in enumerate(zip(colors, colors[1:] + colors[:1], strict=True)):
        name = f"{i:012d}.jpg"
        Image.new("RGB", (32, 32), a).save(images / name)
        rows[str(i)] = {"filename": name, "caption": f"a {a} square beside a {b} circle",
                        "negative_caption": f"a {b} square beside a {a} circle"}
    data = folder / "sugarcrepe"
    data.mkdir()
    (data / "swap_att.json").write_text(json.dumps(rows))
    (data / "replace_att.json").write_text(json.dumps(
        {k: {**r, "negative_caption": r["caption"].replace("square", "triangle")}
         for k, r in rows.items()}))
    return data, images


@pytest.mark.slow
def test_a_study_scores_every_source_and_prints_the_agreement(demo_run, tiny_clips, tmp_path):
    data, images = _sugarcrepe(tmp_path / "real")
    specs = [f"open_clip:local-dir:{w}" for w in tiny_clips[:3]]
    (tmp_path / "models.yaml").write_text("models:\n" + "".join(
        f"  - {{spec: '{s}', label: clip{k}}}\n" for k, s in enumerate(specs))
        + "  - {spec: 'blind:length', label: length}\n")
    study = tmp_path / "study.yaml"
    study.write_text(f"models: models.yaml\nsynthetic: {{source: {demo_run}, benchmarks: "
                     f"['shape_color-n2/minimal-*']}}\nreferences:\n"
                     f"  - {{source: real/sugarcrepe, images: real/coco}}\n")
    out = tmp_path / "out"
    got = CliRunner().invoke(main, ["study", str(study), "-o", str(out)])
    assert got.exit_code == 0, got.output
    assert "**Rank agreement of models between benchmarks" in got.output
    rows = [ln for ln in got.output.splitlines() if ln.startswith("| shape_color")]
    # each synthetic benchmark and the task x N pooled, against sugarcrepe pooled; the
    # 3 CLIPs (blind:length is a baseline: left out, said)
    assert [ln.split(" | ")[1] for ln in rows] == ["sugarcrepe"] * 3
    assert all(ln.split(" | ")[2] == "3*" for ln in rows)
    assert "1 baselines and models not listed (blind:length" in got.output
    assert (out / "figures" / "agreement-sugarcrepe.png").is_file()
    before = {p: p.stat().st_mtime_ns for p in (out / "results").rglob("*.json")}
    assert len(before) == 4 * 4  # 4 models x (2 synthetic + 2 sugarcrepe benchmarks)
    again = CliRunner().invoke(main, ["study", str(study), "-o", str(out)])  # resumes
    assert again.exit_code == 0 and again.stdout == got.stdout
    assert "skip   blind:length shape_color-n2/minimal-confusion (exists)" in again.output
    assert {p: p.stat().st_mtime_ns for p in (out / "results").rglob("*.json")} == before

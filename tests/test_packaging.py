import subprocess
import sys
import zipfile

import pytest

from autocomp.core.resources import data_dir, prompt_text


def test_data_folders_found_from_checkout():
    assert (data_dir("catalog") / "vocab" / "objects.yaml").is_file()
    assert "{obj_colors_text}" in prompt_text("contextual_user.txt")


@pytest.mark.slow
def test_wheel_ships_data_and_finds_it(tmp_path):
    root = data_dir("catalog").parent
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(tmp_path / "dist"), str(root)], check=True)
    wheel = next((tmp_path / "dist").glob("autocomp-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in ("objects", "colors", "relations", "shapes", "sizes"):
        assert f"autocomp/_data/catalog/vocab/{name}.yaml" in names
    for name in ("color", "position", "shape_color", "relative_size"):
        assert f"autocomp/_data/catalog/tasks/{name}.yaml" in names
    assert "autocomp/_data/prompts/contextual_system.txt" in names
    assert "autocomp/_data/prompts/contextual_retry.txt" in names
    assert "autocomp/_data/configs/demo.yaml" in names
    assert "autocomp/review/page.html" in names  # the review page
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target",
                    str(site), str(wheel)], check=True)
    code = ("from autocomp.core.resources import data_dir; from autocomp.concepts.load import "
            "load_task; from autocomp.cli.run import config_path; print(data_dir('catalog')); "
            "print(len(load_task('color').objects)); print(config_path('demo'))")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, check=True, text=True,
                         capture_output=True, env={"PYTHONPATH": str(site), "PATH": ""}).stdout
    assert str(site) in out.splitlines()[0]
    assert out.splitlines()[1] == "235"
    assert out.splitlines()[2].startswith(str(site))  # `autocomp run demo` from a wheel

"""A full disk (issue 53): a disk that fills up (a real tmpfs of 200 KiB, where this machine
may mount one) under `autocomp run`, `t2i` and `export`: each stops with one line saying the
disk is full, keeps what it wrote, and the same command after space is freed finishes with
the same files as a run that never stopped."""

import json
import subprocess

import pytest
from click.testing import CliRunner

from autocomp.cli import main

CONFIG = "name: small\nseed: 3\nconcepts:\n  - {task: shape_color, n: [2], count: 6}\n" \
         "generate: {options: {size: 256}}\n"


@pytest.fixture
def small_disk(tmp_path):
    """`small_disk(name)`: a fresh 200 KiB tmpfs at tmp_path/name, and `grow(folder)` to give
    it room; skipped where mounting is not allowed (not root, no CAP_SYS_ADMIN)."""
    mounted = []

    def make(name):
        where = tmp_path / name
        where.mkdir()
        made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=200k", "tmpfs", str(where)],
                              capture_output=True, text=True, check=False)
        if made.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {made.stderr.strip()[:100]}")
        mounted.append(where)
        return where

    yield make
    for where in mounted:
        subprocess.run(["umount", "-l", str(where)], check=False)


def grow(where):
    subprocess.run(["mount", "-o", "remount,size=256m", str(where)], check=True)


def _full(args) -> None:
    got = CliRunner().invoke(main, args)
    assert got.exit_code == 83, got.output  # disk full (issue 66: its own status)
    line = got.output.strip().splitlines()[-1]
    assert line.startswith("Error: disk full (") and "what was written before is kept" in line


def _files(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


@pytest.mark.slow
def test_a_full_disk_stops_in_one_line_and_resumes(small_disk, tmp_path):
    (tmp_path / "small.yaml").write_text(CONFIG)
    ref = tmp_path / "ref"
    ok = CliRunner().invoke(main, ["run", str(tmp_path / "small.yaml"), "-o", str(ref)])
    assert ok.exit_code == 0, ok.output
    t2i = ["t2i", str(ref), "-g", "procedural", "--tasks", "shape_color-n2"]
    fresh = CliRunner().invoke(main, [*t2i, "-o", str(tmp_path / "t2i-ref")])
    assert fresh.exit_code == 0, fresh.output
    for args, name in ((["run", str(tmp_path / "small.yaml")], "run"), (t2i, "t2i"),
                       (["export", str(ref), "--no-audit"], "export")):
        where = small_disk(name)
        _full([*args, "-o", str(where / name)])
        grow(where)
        done = CliRunner().invoke(main, [*args, "-o", str(where / name)])
        assert done.exit_code == 0, (name, done.output)
    for part in ("bench", "captions", "validation"):  # as the run that never stopped
        assert _files(tmp_path / "run" / "run" / part) == _files(ref / part), part
    for name in ("images.jsonl", "scores.jsonl"):
        ids = [json.loads(ln)["id"] for ln in
               (tmp_path / "t2i" / "t2i" / "procedural" / name).read_text().splitlines()]
        assert len(ids) == len(set(ids)), name
    got = json.loads((tmp_path / "t2i" / "t2i" / "summary.json").read_text())["summary"]
    assert got == json.loads((tmp_path / "t2i-ref" / "summary.json").read_text())["summary"]
    assert json.loads((tmp_path / "export" / "export" / "autocomp_export.json").read_text())[
        "configs"]

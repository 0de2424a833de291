"""Same config, same bytes: two full runs of the demo config (its every stage, faults,
retries and figures; 30 concepts per task and N instead of 100, to keep the suite short), in
processes with different hash seeds (so set iteration order differs), leave identical
files, figures included. Only the wall-clock files under stats/timing/ may differ."""

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _digests(run: Path) -> dict[str, str]:
    return {str(p.relative_to(run)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(run.rglob("*")) if p.is_file()
            and p.relative_to(run).parts[:2] != ("stats", "timing")}


def _config(tmp: Path) -> Path:
    import yaml

    data = yaml.safe_load((ROOT / "configs" / "demo.yaml").read_text(encoding="utf-8"))
    for spec in data["concepts"]:
        spec["count"] = 30
    path = tmp / "demo.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def _run(out: Path, hash_seed: str) -> None:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    proc = subprocess.run([sys.executable, "-m", "autocomp", "run",
                           str(_config(out.parent)), "--out", str(out)],
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]


@pytest.mark.slow
def test_two_demo_runs_are_byte_identical(tmp_path):
    _run(tmp_path / "a", "1")
    _run(tmp_path / "b", "2")
    a, b = _digests(tmp_path / "a"), _digests(tmp_path / "b")
    assert "figures/distribution.png" in a and "figures/funnel.png" in a
    assert any(k.startswith("bench/") and k.endswith("confusion.jsonl") for k in a)
    assert sorted(a) == sorted(b)
    differ = [k for k in a if a[k] != b[k]]
    assert differ == []
    timing = sorted(p.name for p in (tmp_path / "a" / "stats" / "timing").iterdir())
    assert "images.json" in timing and "images.rank-0.json" in timing

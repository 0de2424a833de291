"""scripts/bench_scale.py, the paper-scale bench, at a tiny scale: it runs end to end on
the current records and stages, so its Table 2 numbers can be measured again."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parents[1] / "scripts" / "bench_scale.py"


@pytest.mark.slow
def test_bench_scale_runs_at_a_tiny_scale(tmp_path):
    out = subprocess.run([sys.executable, str(SCRIPT), "--scale", "0.002", "--processes", "2",
                          "--no-clip", "--output", str(tmp_path / "scale")],
                         capture_output=True, text=True,
                         env={**os.environ, "HF_HUB_OFFLINE": "1"}, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr[-3000:]
    text = out.stdout
    concepts, items = (int(v.replace(",", "")) for v in re.search(
        r"Table 2 x 0.002: ([\d,]+) concepts, ([\d,]+) items", text).groups())
    # Table 2's half-sizes per track x 0.002, rounded: 63 + 6 + 69 + 13 concepts
    assert concepts == 151 and items > concepts
    for step in ("concepts", "captions", "images (stand-in pool)", "build stage (compact)",
                 "total", "autocomp stages"):
        assert re.search(rf"build  {re.escape(step)} +\d+\.\d s", text), step
    assert re.search(r"store  compact bench [\d.]+ MiB", text)
    assert len(re.findall(r"eval   .* peak RSS [\d,]+ MiB", text)) == 2  # all, the largest
    captions = [ln for p in (tmp_path / "scale" / "run" / "captions").glob("part-*.jsonl")
                for ln in p.read_text().splitlines()]
    assert len(captions) == concepts  # two ranks' part files, every concept once

"""What a launched rank reads of a stage's part files at each launch (issue 66): seconds
and peak memory of the ids it shares the work out by, read the old way (every record
whole, `done_records`) and the new way (`done_ids`: each record dropped as it is read).

    python scripts/bench_parts.py [--records 200000] [--ranks 8]

Writes `--records` validation-like records (the shape of a real validation record: its
checks, evidence and boxes, ~1.6 kB a line) over `--ranks` part files in a temp folder,
then reads them in a fresh process each way and prints the seconds, the growth of the
process's peak RSS, and the ratios. 809,400 is configs/autocomp-cp.yaml's image count.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

READ = """
import resource, sys, time
from pathlib import Path
from autocomp.runtime.parts import done_ids, done_records
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
got = (done_records if sys.argv[2] == "old" else done_ids)(Path(sys.argv[1]))
took = time.perf_counter() - start
grew = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 2**20
print(len(got), round(took, 2), round(grew, 3))
"""


def record(i: int) -> dict:
    box = [[12.5 + i % 7, 40.25, 300.75, 512.0]]
    return {"id": f"c{i:07d}-{'minimal' if i % 2 else 'contextual'}", "concept": f"c{i:07d}",
            "task": "color", "n": 2, "track": "minimal", "passed": i % 3 != 0,
            "checks": [{"name": name, "passed": True, "reason": "", "evidence": {
                "detector": "grounding-dino+sam2", "boxes": box * 2,
                "scores": [0.81, 0.77], "labels": ["dog", "chair"],
                "answers": ["yes", "red", "yes"], "dtype": "bfloat16"}}
                for name in ("objects", "background", "attributes")]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--ranks", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "validation"
        folder.mkdir()
        files = [open(folder / f"part-{r:05d}.jsonl", "w", encoding="utf-8")  # noqa: SIM115
                 for r in range(args.ranks)]
        size = 0
        for i in range(args.records):
            line = json.dumps(record(i), sort_keys=True, separators=(",", ":")) + "\n"
            files[i % args.ranks].write(line)
            size += len(line)
        for fh in files:
            fh.close()
        print(f"{args.records:,} records over {args.ranks} part files, {size / 1e6:.0f} MB "
              f"({size / args.records:.0f} bytes a line)")
        got = {}
        for way in ("old", "new"):
            out = subprocess.run([sys.executable, "-c", READ, str(folder), way], check=True,
                                 capture_output=True, text=True).stdout.split()
            got[way] = (int(out[0]), float(out[1]), float(out[2]))
            print(f"  {way}: {got[way][0]:,} ids in {got[way][1]:.2f} s, peak RSS +"
                  f"{got[way][2]:.3f} GiB")
        (n0, t0, m0), (n1, t1, m1) = got["old"], got["new"]
        assert n0 == n1 == args.records
        print(f"memory {m0 / max(m1, 1e-3):.1f}x less, time {t0 / t1:.2f}x "
              f"(scaled to 809,400 records: old ~{m0 * 809_400 / args.records:.1f} GiB a "
              f"rank, new ~{m1 * 809_400 / args.records:.2f} GiB)")


if __name__ == "__main__":
    main()

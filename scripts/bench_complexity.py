"""The most branched functions of the package (issue 56): cyclomatic complexity as radon
measures it (McCabe's count of decision points, `and`/`or` included) and as ruff's C901
counts it, with each function's lines, for the functions named and the top of the list.

    python scripts/bench_complexity.py [--top 10] [--root OTHER_CHECKOUT]

`--root` measures another checkout (a `git worktree add` of an older commit): before and
after in one run, on one machine.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAMED = ("formats/autocomp_hf.py:load_autocomp_hf", "formats/__init__.py:detect_format",
         "bench/build.py:build", "report/seen.py:seen_table", "report/categories.py:table6")


def radon(root: Path) -> dict[str, tuple[int, int]]:
    """'path:function' -> (complexity, lines) for every function and method."""
    from radon.complexity import cc_visit

    out = {}
    for path in sorted((root / "autocomp").rglob("*.py")):
        rel = path.relative_to(root / "autocomp").as_posix()
        for block in cc_visit(path.read_text(encoding="utf-8")):
            name = (f"{block.classname}.{block.name}" if getattr(block, "classname", None)
                    else block.name)
            out[f"{rel}:{name}"] = (block.complexity, block.endline - block.lineno + 1)
    return out


def mccabe(root: Path) -> dict[str, int]:
    """'path:function' -> ruff's C901 complexity (every function over 1)."""
    got = subprocess.run([sys.executable, "-m", "ruff", "check", "--select", "C901",
                          "--config", "lint.mccabe.max-complexity = 1", "--output-format",
                          "json", "--no-cache", str(root / "autocomp")],
                         capture_output=True, text=True)
    out = {}
    for d in json.loads(got.stdout or "[]"):
        rel = Path(d["filename"]).relative_to(root / "autocomp").as_posix()
        name, value = d["message"].split("`")[1], int(d["message"].split("(")[1].split()[0])
        out[f"{rel}:{name}"] = value
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--root", type=Path, default=ROOT)
    args = ap.parse_args()
    cc, ruff = radon(args.root), mccabe(args.root)
    print(f"{args.root}: {len(cc):,} functions and methods (n)")
    print(f"{'function':<58} {'radon':>5} {'ruff':>5} {'lines':>6}")
    for key in NAMED:
        value, lines = cc.get(key, (None, None))
        print(f"{key:<58} {value if value is not None else '-':>5} "
              f"{ruff.get(key, 1):>5} {lines if lines else '-':>6}")
    print(f"top {args.top} by radon:")
    for key, (value, lines) in sorted(cc.items(), key=lambda kv: -kv[1][0])[:args.top]:
        print(f"{key:<58} {value:>5} {ruff.get(key, 1):>5} "
              f"{lines:>6}")
    over = sum(1 for v, _ in cc.values() if v > 20)
    print(f"functions over 20 (radon): {over} of {len(cc):,}")


if __name__ == "__main__":
    main()

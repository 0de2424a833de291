"""Entry point of one launched process: `python -m autocomp.runtime.worker RUN_DIR`."""

from __future__ import annotations

import argparse
from pathlib import Path

from autocomp.runtime.pipeline import PARALLEL, run_parallel_stages


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--stages", default=",".join(PARALLEL))
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    stages = [s for s in args.stages.split(",") if s]
    unknown = [s for s in stages if s not in PARALLEL]
    if unknown:
        parser.error(f"unknown stage(s) {', '.join(unknown)} (known: {', '.join(PARALLEL)})")
    run_parallel_stages(args.run_dir, stages, progress=not args.no_progress)


if __name__ == "__main__":
    main()

"""One of tests/test_locks.py's three writers: takes the stage lock `images` (lock files,
as on Lustre without flock) and appends `<name> <i>` to LOG `count` times, 0.1 s apart,
each after core/locks.fence(); a writer that lost its lock ends with LockLost's status."""

import sys
import time
from pathlib import Path

from autocomp.core import locks


def main(name: str, lock: Path, log: Path, count: int) -> int:
    try:
        with locks.holding({"images": lock}, "stage", wait=60):
            for i in range(count):
                locks.fence()
                with open(log, "a", encoding="utf-8") as fh:
                    fh.write(f"{name} {i}\n")
                time.sleep(0.1)
    except locks.LockLost as exc:
        print(f"autocomp: {exc}", file=sys.stderr, flush=True)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4])))

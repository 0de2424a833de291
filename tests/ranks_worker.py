"""A launched rank for tests/test_multinode.py: two item stages over a run folder, with a
rank that is killed or slow on request. Run under `accelerate launch`:
    python -m accelerate.commands.launch ... tests/ranks_worker.py ROOT BEHAVIOUR PG_TIMEOUT
BEHAVIOUR: none | kill (rank 1 dies at its second batch) | slow (rank 1 sleeps per batch).
"""

import os
import signal
import sys
import time
from pathlib import Path
from types import SimpleNamespace

from autocomp.core.run_paths import RunPaths
from autocomp.runtime.launch import distributed
from autocomp.runtime.runner import run_stages
from autocomp.runtime.stage import Item, ItemStage

ITEMS = 12


class Work(ItemStage):
    batch_size = 2

    def __init__(self, run, name, behaviour, rank):
        super().__init__(run)
        self.name, self.behaviour, self.rank, self.calls = name, behaviour, rank, 0

    def items(self):
        return [Item(f"{self.name}-{k:02d}-{'minimal' if k % 2 else 'contextual'}")
                for k in range(ITEMS)]

    def stratum(self, item):
        return item.id.rsplit("-", 1)[1]

    def process(self, batch):
        self.calls += 1
        if self.rank == 1 and self.behaviour == "kill" and self.calls == 2:
            os.kill(os.getpid(), signal.SIGKILL)
        if self.rank == 1 and self.behaviour == "slow":
            time.sleep(1.5)
        return [{"id": it.id, "rank": self.rank, "pid": os.getpid()} for it in batch]


def main():
    root, behaviour, timeout = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    rank, world, share, _ = distributed(timeout)
    run = SimpleNamespace(paths=RunPaths(root))
    stages = [Work(run, name, behaviour, rank) for name in ("first", "second")]
    run_stages(stages, rank, world, share, progress=False, wait_timeout=120, stall=30)


if __name__ == "__main__":
    main()

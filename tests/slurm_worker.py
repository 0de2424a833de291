"""A stand-in for `accelerate launch ... -m autocomp.pipeline RUN` in the sbatch tests of
failure classes: one process that fails the way $FAKE_FAILURE names through autocomp's
own code (runtime/sync.py's peer watch, runtime/runner.py's classification, the worker's
failure record) and exits with the status a launched worker would.

  stall   a peer whose heartbeat stands still past stall_timeout (SIGSTOP, an NFS hang)
  oom     the GPU out of memory in the images stage (torch's own OutOfMemoryError)
  disk    a full disk under the run in the images stage (ENOSPC)
  skew    missing weights, recorded by a worker whose clock is 600 s behind the batch host
  crash   the same unforeseen error in every launch (a deterministic crash)
  none    no failure: the launch ends well
"""

import errno
import os
import sys
import time
import uuid
from pathlib import Path

from autocomp.core.errors import WeightsMissing
from autocomp.core.registry import make_stage
from autocomp.run import Run
from autocomp.runtime import runner
from autocomp.runtime.failures import record
from autocomp.runtime.sync import Peers


def main() -> int:
    run_dir = Path(sys.argv[sys.argv.index("autocomp.pipeline") + 1])
    how = os.environ["FAKE_FAILURE"]
    if how == "stall":
        peers = Peers(run_dir, uuid.uuid4().hex, 0, 2, stall=0.5, beat=0.05, poll=0.05)
        peers.finished("captions")
        try:
            peers.wait_all("captions")  # rank 1 never beats: it stalled
        except Exception as exc:  # noqa: BLE001
            return record(run_dir, exc, 0)
        finally:
            peers.close()
        return 0
    if how in ("oom", "disk"):
        import torch

        stage = make_stage("images", Run.open(run_dir), "cpu")
        cause = (torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.50 GiB")
                 if how == "oom" else OSError(errno.ENOSPC, "No space left on device"))
        return record(run_dir, runner._classified(stage, cause, 40), 3)
    if how == "skew":
        real = time.time
        time.time = lambda: real() - 600  # this worker's clock is 600 s behind
        return record(run_dir, WeightsMissing(
            "model 'org/not-on-this-machine' is not in the cache and HF_HUB_OFFLINE=1"), 5)
    if how == "crash":
        return record(run_dir, KeyError("the same key every time"), 0)
    if how == "none":  # the launch finishes (its stages' work is not what is tested)
        return 0
    raise SystemExit(f"unknown FAKE_FAILURE {how!r}")


if __name__ == "__main__":
    raise SystemExit(main())

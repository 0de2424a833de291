"""What a launched rank keeps on its node's own disk and how many CPUs it may use to
compile, from what the job script says of the node: $AUTOCOMP_LOCAL_DIR (a local folder,
scripts/slurm_autocomp.sbatch: $SLURM_TMPDIR or $TMPDIR) and $AUTOCOMP_CPUS_PER_RANK (the
task's CPUs over its ranks). Set before torch or vLLM read them; a variable the user set
already is left alone.

  TORCHINDUCTOR_CACHE_DIR, TRITON_CACHE_DIR   torch.compile's caches, one folder a rank
  VLLM_CACHE_ROOT                             vLLM's compile cache, one folder a rank (eight
                                              engines compiling into one shared cache at
                                              once is what vLLM does not expect)
  TORCHINDUCTOR_COMPILE_THREADS               compile workers (unset, inductor starts one a
                                              CPU it sees, up to 32, in every rank)

$AUTOCOMP_LOAD_STAGGER (seconds, default 0): each rank of a node starts a stage's first
batch, where its models load, LOCAL_RANK times that long after the first, so one rank's
in-flight tensors are in host memory at a time (autocomp/planning/host_memory.py plans both ways).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def rank_environment(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables to set for this rank (LOCAL_RANK of `env`, default os.environ)."""
    env = os.environ if env is None else env
    out: dict[str, str] = {}
    local = env.get("AUTOCOMP_LOCAL_DIR", "").strip()
    if local:
        base = Path(local) / f"rank-{env.get('LOCAL_RANK', '0') or '0'}"
        out.update(TORCHINDUCTOR_CACHE_DIR=str(base / "inductor"),
                   TRITON_CACHE_DIR=str(base / "triton"), VLLM_CACHE_ROOT=str(base / "vllm"))
    cpus = env.get("AUTOCOMP_CPUS_PER_RANK", "").strip()
    if cpus.isdigit() and int(cpus) > 0:
        out["TORCHINDUCTOR_COMPILE_THREADS"] = cpus
    return {k: v for k, v in out.items() if not env.get(k)}


def apply() -> dict[str, str]:
    """Set this rank's variables in os.environ; returns what was set."""
    got = rank_environment()
    os.environ.update(got)
    return got


def load_delay(env: Mapping[str, str] | None = None) -> float:
    """Seconds this rank waits before a stage's first batch (see the module's notes)."""
    from autocomp.core.lockfiles import seconds_env

    env = os.environ if env is None else env
    return int(env.get("LOCAL_RANK", "0") or 0) * seconds_env("AUTOCOMP_LOAD_STAGGER", 0.0,
                                                              env)

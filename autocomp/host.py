"""Host memory per node, planned before a launch: what a node's `--mem` must hold while its
ranks load a stage's models.

Each rank reads its weights straight onto its GPU (models/loading.device_map: safetensors
files mapped and copied tensor by tensor, never a whole host copy), so a rank's own
memory is its process (Python, torch, the CUDA context: RANK_BASE) plus the tensors in
flight while loading (RANK_LOAD). The files themselves pass through the page cache, which
the node's ranks share (they read the same files) and which a cgroup's memory limit
charges to the job: the largest stage's weights once per node. Measured: a process
holding every component of the paper's pipeline on an H200 peaked at 2.9 GiB of host RSS
(scripts/gpu_check.py); RANK_LOAD is an estimate.
"""

from __future__ import annotations

import math

RANK_BASE = 3.0  # GiB per rank: Python, torch, CUDA context, PNG writer buffers (measured 2.9)
RANK_LOAD = 2.0  # GiB per rank of tensors in flight while loading (estimate)
MARGIN = 0.15  # over the sum, for the allocator, the page cache's own slack and the OS


def plan(rows: list[dict], per_node: int) -> dict:
    """{"page_cache", "per_rank", "total", "mem"} in GiB for `per_node` ranks a node, from
    memory.stage_rows' weights (the largest stage's files are in the page cache at once)."""
    cache = max((r["weights"] for r in rows), default=0.0)
    per_rank = RANK_BASE + (RANK_LOAD if rows else 0.0)
    total = (cache + per_node * per_rank) * (1 + MARGIN)
    return {"page_cache": cache, "per_rank": per_rank, "ranks": per_node, "total": total,
            "mem": math.ceil(total / 8) * 8}


def format_plan(host: dict) -> list[str]:
    return [f"Host memory per node: {host['ranks']} rank(s) x {host['per_rank']:.1f} GiB "
            f"(process {RANK_BASE:.0f} + loading {RANK_LOAD:.0f}) + {host['page_cache']:.1f} "
            f"GiB of the largest stage's weights in the page cache, shared, + "
            f"{MARGIN:.0%} = {host['total']:.0f} GiB: "
            f"sbatch --mem={host['mem']}G (scripts/slurm_autocomp.sbatch asks "
            f"{SBATCH_MEM}G)"]


SBATCH_MEM = 96  # scripts/slurm_autocomp.sbatch's #SBATCH --mem (checked by the suite)

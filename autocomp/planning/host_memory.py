"""Host memory per node, planned before a launch: what a node's `--mem` must hold while its
ranks load a stage's models.

Each rank reads its weights straight onto its GPU (transformers and diffusers with a device
map: models/loading.device_map, synth/diffusers_gen.load_pipeline; each tensor goes from the
memory-mapped safetensors file to the device, never a whole host copy). Loaded to the host
and then moved, as SD3.5 was before issue 66, a rank held its pipeline's weights in its own
memory: T5-XXL in fp16 asked in bf16 alone ~10 GiB, 8 ranks past the sbatch's --mem. On the
CPU (tests/test_host_memory.py) a device-map load of an fp16 pipeline asked in bf16 adds
1.09x its bf16 weights, the weights once, which on a GPU live on the card.

So a rank's own memory is its process (Python, torch, the CUDA context: RANK_BASE, measured
2.9 GiB holding every component of the paper's pipeline on an H200) plus the tensors in
flight while it loads (RANK_LOAD: an estimate, 2 GiB, until scripts/gpu_check.py's
host_memory part measures it; a --calibrate file that has it replaces it). The files pass
through the page cache, which the node's ranks share (they read the same files) and which a
cgroup's memory limit charges to the job: the largest stage's weights once per node.

When a node's ranks load at once, their in-flight tensors add up; staggered
($AUTOCOMP_LOAD_STAGGER seconds between ranks, runtime/runner.py), one rank loads at a
time. The plan prints both.
"""

from __future__ import annotations

import math

RANK_BASE = 3.0  # GiB per rank: Python, torch, CUDA context, PNG writer buffers (measured 2.9)
RANK_LOAD = 2.0  # GiB per rank of tensors in flight while loading (estimate)
MARGIN = 0.15  # over the sum, for the allocator, the page cache's own slack and the OS


def plan(rows: list[dict], per_node: int, load: float | None = None) -> dict:
    """{"page_cache", "per_rank", "total", "mem", "staggered", ...} in GiB for `per_node`
    ranks a node, from memory.stage_rows' weights (the largest stage's files are in the page
    cache at once); `load`: a measured RANK_LOAD (gpu_check's host_memory), else the
    estimate."""
    cache = max((r["weights"] for r in rows), default=0.0)
    loading = (RANK_LOAD if load is None else max(load, 0.0)) if rows else 0.0
    total = (cache + per_node * (RANK_BASE + loading)) * (1 + MARGIN)
    staggered = (cache + per_node * RANK_BASE + loading) * (1 + MARGIN)
    return {"page_cache": cache, "per_rank": RANK_BASE + loading, "load": loading,
            "load_measured": load is not None, "ranks": per_node, "total": total,
            "mem": math.ceil(total / 8) * 8, "staggered": staggered,
            "mem_staggered": math.ceil(staggered / 8) * 8}


def format_plan(host: dict) -> list[str]:
    how = "measured" if host["load_measured"] else "estimated"
    lines = [f"Host memory per node: {host['ranks']} rank(s) x {host['per_rank']:.1f} GiB "
             f"(process {RANK_BASE:.0f} + loading {host['load']:.1f}, {how}) + "
             f"{host['page_cache']:.1f} GiB of the largest stage's weights in the page cache, "
             f"shared, + {MARGIN:.0%} = {host['total']:.0f} GiB: "
             f"sbatch --mem={host['mem']}G (scripts/slurm_autocomp.sbatch asks "
             f"{SBATCH_MEM}G)"]
    if host["mem"] > SBATCH_MEM:
        lines.append(f"  over the sbatch's --mem: ask --mem={host['mem']}G, or load one rank "
                     f"at a time (export AUTOCOMP_LOAD_STAGGER=60: {host['staggered']:.0f} "
                     f"GiB, --mem={host['mem_staggered']}G)")
    return lines


SBATCH_MEM = 96  # scripts/slurm_autocomp.sbatch's #SBATCH --mem (checked by the suite)

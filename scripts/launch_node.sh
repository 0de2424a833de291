#!/usr/bin/env bash
# One multi-GPU node: every stage of a run, the heavy ones on all GPUs of this node.
#   scripts/launch_node.sh CONFIG RUN_DIR [NUM_GPUS]
# Re-running the same command resumes the run where it stopped.
set -euo pipefail
config=${1:?usage: launch_node.sh CONFIG RUN_DIR [NUM_GPUS]}
run_dir=${2:?usage: launch_node.sh CONFIG RUN_DIR [NUM_GPUS]}
gpus=${3:-$(nvidia-smi --list-gpus 2>/dev/null | wc -l)}
[ "$gpus" -ge 1 ] || { echo "no GPU found; pass NUM_GPUS" >&2; exit 1; }
# autocomp starts `accelerate launch --multi_gpu --num_processes $gpus` for the GPU stages
autocomp run "$config" --output "$run_dir" --processes "$gpus" --no-progress

#!/usr/bin/env bash
# Runs on the GPU machine: Nsight Compute on tile's kernels and their Triton
# peers (bench/ncu_targets.py), reports as text under $OUT.
# Usage: bash scripts/device-ncu.sh [norms] [matmul] [cluster] [attention] [attention-d64] [backward] [backward-fused] [backward-delayed]
# KERNELS: a regex of the kernel names to profile (default: tile's and peers').
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/tile-out}
mkdir -p "$OUT"
[ -d bundle ] || tar xJf bundle.tar.xz
cp bundle/python/tile/_tile*.so python-frontend/tile/
export PYTHONPATH=$PWD/python-frontend PYTHONUNBUFFERED=1 TILE_BACKEND=cuda
export TILE_CACHE_DIR=${TILE_CACHE_DIR:-/tmp/tile-cache} TILE_OPT=$PWD/bundle/bin/tile-opt
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
groups=("$@"); [ ${#groups[@]} -eq 0 ] && groups=(norms matmul)
for group in "${groups[@]}"; do
  python3 bench/ncu_targets.py "$group" # compile outside the profiler
  timeout ${NCU_TIMEOUT:-240} "$NCU" --clock-control none -f -o "$OUT/$group" -k "regex:${KERNELS:-layernorm|softmax|mm_k|matmul|attention|flash|fmha|sdpa|cudnn}" \
    --section SpeedOfLight --section LaunchStats --section Occupancy \
    --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
    --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis \
    --section InstructionStats --section SourceCounters \
    python3 bench/ncu_targets.py "$group" > "$OUT/$group-ncu-log.txt" 2>&1
  "$NCU" -i "$OUT/$group.ncu-rep" --page details > "$OUT/$group.txt" 2>&1
  echo "== $group: $(grep -c 'Section: GPU Speed Of Light' "$OUT/$group.txt") kernels profiled"
done

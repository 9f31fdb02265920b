#!/usr/bin/env bash
# Runs on the GPU machine, in the tree the device tool copies, with bundle/
# carried: the GPU test suite, the examples and the benchmarks, results to $OUT.
# Usage: bash scripts/device-run.sh [tests|examples|bench|all] [bench args...]
#        bash scripts/device-run.sh python SCRIPT [args...]  (e.g. bench/sweep_backward.py)
#        bash scripts/device-run.sh attention  (issue 19's acceptance in one call:
#          the attention rows of every shape, then the GPU suite on 14 workers)
#        bash scripts/device-run.sh multi-gpu  (issue 21's acceptance in one call, on a
#          kind with two GPUs: the tensor-parallel example and bench/tp_mlp.py on
#          1 and 2 ranks under torchrun, then the GPU suite on the second GPU)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/tile-out}
mkdir -p "$OUT"
what=${1:-all}; shift || true
if [[ $what == attention ]]; then
  # About 150 s of bench, then about 190 s of tests on an H100.
  BENCH_TIMEOUT=${BENCH_TIMEOUT:-240} bash "$0" bench --only attention,attention-bwd \
    --impls tile,tile-persistent,tile-fp8 || true
  TEST_WORKERS=${TEST_WORKERS:-14} TEST_TIMEOUT=${TEST_TIMEOUT:-240} exec bash "$0" tests
fi
[ -d bundle ] || tar xJf bundle.tar.xz
cp bundle/python/tile/_tile*.so python-frontend/tile/
export PYTHONPATH=$PWD/python-frontend PYTHONUNBUFFERED=1 TILE_BACKEND=cuda
export TILE_CACHE_DIR=${TILE_CACHE_DIR:-/tmp/tile-cache} TILE_OPT=$PWD/bundle/bin/tile-opt
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader | tee "$OUT/gpu.txt"
status=0
if [[ $what == all || $what == tests ]]; then
  # TEST_SHARD=i/n: only every n-th test file from the i-th (sorted): the
  # whole GPU suite takes longer than one device call (cold cache, 2026-12-05:
  # 447 tests in 270 s), so two calls run 1/2 and 2/2.
  files=(test/python)
  if [[ -n ${TEST_SHARD:-} ]]; then
    IFS=/ read -r shard shards <<< "$TEST_SHARD"
    mapfile -t all < <(ls test/python/test_*.py | sort)
    files=()
    for i in "${!all[@]}"; do
      (( i % shards == shard - 1 )) && files+=("${all[$i]}")
    done
  fi
  # TEST_WORKERS=n: n pytest-xdist workers (the machine's image has it): the
  # suite is bound by compiling on the CPU, and the GPU machine has 16 cores.
  workers=()
  [[ -n ${TEST_WORKERS:-} ]] && workers=(-n "$TEST_WORKERS")
  # Tests that compare measured times (marker timing) run after, alone.
  selected=("gpu or numerics")
  [[ -n ${TEST_WORKERS:-} ]] && selected=("(gpu or numerics) and not timing" "(gpu or numerics) and timing")
  for i in "${!selected[@]}"; do
    (( i == 1 )) && workers=()
    timeout ${TEST_TIMEOUT:-300} python3 -m pytest -q -m "${selected[$i]}" --timeout=120 -p no:cacheprovider "${workers[@]}" "${files[@]}" \
      2>&1 | tee -a "$OUT/pytest-gpu.txt" | tail -40
    rc=${PIPESTATUS[0]}
    (( rc != 0 && rc != 5 )) && status=$rc  # 5: nothing selected
  done
fi
if [[ $what == all || $what == examples ]]; then
  for ex in examples/*.py; do
    echo "== $ex"; python3 "$ex" 2>&1 | tail -5 || status=1
  done 2>&1 | tee "$OUT/examples.txt"
fi
if [[ $what == multi-gpu ]]; then
  # NVLink multicast off (the GPU machines' rule; start_nccl sets it too).
  export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
  nvidia-smi --query-gpu=index,name --format=csv,noheader | tee -a "$OUT/gpu.txt"
  torchrun=(timeout 240 python3 -m torch.distributed.run --standalone)
  for run in "2 examples/tensor_parallel_mlp.py" "1 bench/tp_mlp.py" "2 bench/tp_mlp.py"; do
    read -r ranks script <<< "$run"
    echo "== $ranks rank(s): $script" | tee -a "$OUT/multi-gpu.txt"
    "${torchrun[@]}" --nproc_per_node="$ranks" "$script" 2>&1 \
      | tee -a "$OUT/multi-gpu.txt" | tail -20
    (( PIPESTATUS[0] != 0 )) && status=1
  done
  # The suite on device 1 alone: nothing may assume device 0.
  CUDA_VISIBLE_DEVICES=1 TEST_WORKERS=${TEST_WORKERS:-14} TEST_TIMEOUT=${TEST_TIMEOUT:-240} \
    bash "$0" tests || status=1
fi
if [[ $what == python ]]; then
  timeout ${BENCH_TIMEOUT:-300} python3 "$@" 2>&1 | tee "$OUT/python-log.txt" | tail -60
  status=${PIPESTATUS[0]}
fi
if [[ $what == all || $what == bench ]]; then
  timeout ${BENCH_TIMEOUT:-300} python3 bench/bench.py --out "$OUT" "$@" 2>&1 | tee "$OUT/bench-log.txt" | tail -60
fi
exit $status

#!/usr/bin/env bash
# One call on the GPU machine for the persistent GEMV kernels: the library builds in the background
# while the standalone experiment (gemv2_variants.cu) runs; then the GEMV/Q4_0 GPU tests under each
# kernel choice, the GPU test files and ctest, and memory_bound.py once per kernel choice.
#   bash benchmarks/experiments/gemv2_device_run.sh [EXPERIMENT_BINARY]
# CHOICES: "GEMV_KERNEL:Q4_KERNEL ..." (BWPROF_GEMV_KERNEL / BWPROF_Q4_KERNEL), the first is the baseline.
# FULL=1: memory_bound.py over every case afterwards (default kernels, PyTorch peers, CSV).
# NCU=1: ncu durations and DRAM bytes of one launch each (experiment's `ncu` mode); MEMCHECK=1:
# compute-sanitizer memcheck over the GEMV/Q4_0 GPU tests.
OUT=${OUT:-/tmp/gemv2-out}
mkdir -p "$OUT"
export PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
CHOICES=${CHOICES:-"x:tile x:split"}
(make gpu-build JOBS=14 >/tmp/build.log 2>&1; echo "build rc=$?" >>/tmp/build.log) &
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader >"$OUT/exp.txt"
EXP=${1:-}
if [ -z "$EXP" ]; then
  nvcc -O3 -std=c++17 -arch=sm_90 -Ikernels -o /tmp/gv2 benchmarks/experiments/gemv2_variants.cu && EXP=/tmp/gv2
fi
[ -n "$EXP" ] && "$EXP" ${EXP_ARGS:-} >>"$OUT/exp.txt" 2>&1
if [ -n "$NCU" ] && [ -n "$EXP" ]; then
  ncu --clock-control none -k regex:"^(empty|read_oneshot|gemv_lib|bwprof)" \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active \
    "$EXP" ncu >"$OUT/ncu.txt" 2>&1
fi
wait
if ! grep -q "build rc=0" /tmp/build.log; then tail -n 40 /tmp/build.log; exit 1; fi
{
  for c in $CHOICES; do
    echo "== tests GEMV=${c%%:*} Q4=${c##*:}"
    BWPROF_GEMV_KERNEL=${c%%:*} BWPROF_Q4_KERNEL=${c##*:} python3 -m pytest -q tests/python/test_gpu_kernels.py \
      -k "q4_0 or gemv" 2>&1 | tail -n 3
  done
  if [ -z "$SKIP_FULL_TESTS" ]; then
    echo "== GPU test files, default choice"
    python3 -m pytest -q tests/python/test_gpu_kernels.py tests/python/test_api.py tests/python/test_errors.py 2>&1 | tail -n 4
    echo "== ctest"
    ctest --test-dir build-gpu -j 4 2>&1 | tail -n 4
  fi
  if [ -n "$MEMCHECK" ]; then
    echo "== memcheck, GEMV/Q4_0 GPU tests, default choice"
    BWPROF_PEAK_ARRAY_BYTES=16777216 compute-sanitizer --tool memcheck --error-exitcode 3 \
      python3 -m pytest -q tests/python/test_gpu_kernels.py -k "q4_0 or gemv" 2>&1 | tail -n 3
    echo "memcheck exit ${PIPESTATUS[0]}"
  fi
} >"$OUT/tests.log" 2>&1
first=1
for c in $CHOICES; do
  torch=--no-torch
  [ -n "$first" ] && torch= && first=
  BWPROF_GEMV_KERNEL=${c%%:*} BWPROF_Q4_KERNEL=${c##*:} python3 benchmarks/memory_bound.py --repeats 50 \
    --only "${BENCH_ONLY:-GEMV|matmul|copy}" $torch $([ -z "$NO_CSV" ] && echo --csv "$OUT/mb_${c%%:*}_${c##*:}.csv") \
    >"$OUT/mb_${c%%:*}_${c##*:}.txt" 2>&1
done
if [ -n "$FULL" ]; then  # the whole benchmark, default kernels, with the PyTorch peers
  python3 benchmarks/memory_bound.py --repeats 50 --csv "$OUT/memory_bound_full.csv" >"$OUT/memory_bound_full.txt" 2>&1
fi
echo "== experiment"
grep -E "WRONG" "$OUT/exp.txt" | head -n 20
grep -cE "us \(min" "$OUT/exp.txt"
cat "$OUT/tests.log"
for c in $CHOICES; do echo "== memory_bound ${c}"; grep -E "^(stream|Q4_0|FP16)" "$OUT/mb_${c%%:*}_${c##*:}.txt" | cut -c1-100; done
[ -f "$OUT/ncu.txt" ] && grep -cE "gpu__time_duration" "$OUT/ncu.txt"
[ -f "$OUT/memory_bound_full.txt" ] && { echo "== memory_bound, all cases"; grep -E "^(device|stream|layernorm|bias|Q4_0|FP16|KV)" "$OUT/memory_bound_full.txt" | cut -c1-110; }

#!/usr/bin/env bash
# One call on the GPU machine: build the library (in the background) while the standalone GEMV
# experiment builds and runs, then the steps named as arguments: test, ncu, bench. Logs in $OUT.
#   bash benchmarks/experiments/gemv_device_run.sh [experiment] [test] [ncu] [bench]
OUT=${OUT:-/tmp/gemv-out}
mkdir -p "$OUT"
export PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
(make gpu-build JOBS=12 >"$OUT/build.log" 2>&1; echo "build rc=$?" >>"$OUT/build.log") &
has() { for a in "${ARGS[@]}"; do [ "$a" = "$1" ] && return 0; done; return 1; }
ARGS=("$@")
if has experiment; then
  nvcc -O3 -arch=sm_90 -std=c++17 -Ikernels -o /tmp/gv benchmarks/experiments/gemv_variants.cu && /tmp/gv >"$OUT/gv.txt" 2>&1
fi
wait
tail -n 3 "$OUT/build.log"
has test && python3 -m pytest -q tests/python/test_gpu_kernels.py -k "q4_0 or gemv" 2>&1 | tail -n 15 | tee "$OUT/test.log"
has ncu && bash benchmarks/experiments/ncu_gemv.sh 2>&1 | tee "$OUT/ncu.txt"
has bench && python3 benchmarks/memory_bound.py --repeats 30 --only "GEMV|matmul|FP16 dequant|copy" 2>&1 | tee "$OUT/bench.txt" | grep -E "GEMV|matmul|dequant|copy|device"
if [ -f "$OUT/gv.txt" ]; then
  echo "== experiment =="
  grep -E "WRONG" "$OUT/gv.txt" | head -n 20
  grep -vE "^Q4X M=(5|8) +(77|130)x|^Q4X M=1  1001x" "$OUT/gv.txt" | cut -c1-100
fi

#!/usr/bin/env bash
# On the GPU machine, the attention kernels' whole check in one call, without a build there: the
# Python module (mk/module_for.sh) and the C++ test binary (build/bwprof_tests) made on the CPU
# machine and carried compressed in CARRY (an untracked folder; default SCRATCH), the module under its
# own name plus .gz or .xz (xz keeps both under the device call's 64 MiB), the test binary as tests.gz
# or tests.xz. Runs the whole attention sweep beside PyTorch, the Python attention, decode and
# knob tests, the C++ GPU attention cases and compute-sanitizer memcheck of the FP16/BF16 flash cases;
# each step's log (and the sweep's CSV) goes to $OUT, a line a step to stdout. Exits 1 if a step
# failed, 2 if something it needs is missing. Usage, from the repository root:
#   OUT=/some/folder mk/attn_verify.sh [CARRY]
set -uo pipefail
CARRY=${1:-SCRATCH}
PY=${PYTHON:-python3}
[ -n "${OUT:-}" ] || { echo "attn_verify: set OUT to the folder for the logs" >&2; exit 2; }
mkdir -p "$OUT" || exit 2
packed() {  # the one of $1.gz, $1.xz that exists, or nothing
  local f
  for f in "$1.gz" "$1.xz"; do [ -f "$f" ] && { echo "$f"; return; }; done
}
unpack() {  # xz by Python's lzma (the GPU machine's Python has it; its xz tool may be absent)
  case $1 in
    *.xz) "$PY" -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), sys.stdout.buffer)' "$1" ;;
    *) gunzip -c "$1" ;;
  esac
}
mods=("$CARRY"/_core*.so.[gx]z)
[ -f "${mods[0]}" ] || { echo "attn_verify: no _core*.so.gz or .xz in $CARRY (make it with mk/module_for.sh, then gzip or xz it there)" >&2; exit 2; }
tests=$(packed "$CARRY/tests")
[ -n "$tests" ] || { echo "attn_verify: no tests.gz or tests.xz in $CARRY (gzip or xz build/bwprof_tests there)" >&2; exit 2; }
want="_core$("$PY" -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")"
mod=$(packed "$CARRY/$want")
[ -n "$mod" ] || { echo "attn_verify: $CARRY has no $want.gz or .xz for $PY (it has: ${mods[*]##*/})" >&2; exit 2; }
unpack "$mod" > "python/bwprof/$want" || exit 2
unpack "$tests" > "$CARRY/bwprof_tests" && chmod +x "$CARRY/bwprof_tests" || exit 2
rc=0
step() {
  local name=$1 s r
  shift
  s=$(date +%s)
  "$@" > "$OUT/$name.log" 2>&1
  r=$?
  echo "attn_verify: $name exit $r in $(( $(date +%s) - s )) s: $(tail -n 1 "$OUT/$name.log")"
  [ "$r" -eq 0 ] || rc=1
}
step sweep env PYTHONPATH=python "$PY" benchmarks/attention_sweep.py --repeats 10 --no-candidates \
  --csv "$OUT/attention_sweep.csv"
step pytest env PYTHONPATH=python "$PY" -m pytest -q tests/python/test_gpu_gemm_attention.py \
  tests/python/test_gpu_attention_decode.py tests/python/test_gpu_tuning_knobs.py
step gtest "$CARRY/bwprof_tests" --gtest_filter='Small/GpuCompute.*attention*:GpuComputeErrors.*'
step memcheck compute-sanitizer --tool memcheck --error-exitcode 1 "$CARRY/bwprof_tests" \
  --gtest_filter='Small/GpuCompute.*attention_flash_*16*'
exit "$rc"

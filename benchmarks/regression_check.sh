#!/usr/bin/env bash
# The same benchmark run twice reports no regression; a deliberately slowed kernel is caught (the
# third run's layernorm rows twice as slow: written from the second run's rows, bwprof having no
# hook that slows its own kernels; tests/python/test_gpu_regression.py slows a real one).
# Usage: benchmarks/regression_check.sh OUT_DIR   (needs a GPU build on PYTHONPATH)
set -u
out=${1:?OUT_DIR}
py=${PYTHON:-python3}
args=(bench --device gpu --kernels stream layernorm bias_act --no-progress)
rm -rf "$out/a" "$out/b" "$out/c"
$py -m bwprof "${args[@]}" --out "$out/a" > "$out/a.txt" || { echo "run a failed"; exit 2; }
$py -m bwprof "${args[@]}" --out "$out/b" > "$out/b.txt" || { echo "run b failed"; exit 2; }
mkdir -p "$out/c" && $py - "$out" <<'PY' || { echo "run c failed"; exit 2; }
import sys, pathlib, pandas as pd
out = pathlib.Path(sys.argv[1])
src = next((out / "b").glob("*/results.csv"))
df = pd.read_csv(src)
slow = df["kernel"] == "layernorm"
for col in ("time_median_us", "time_min_us", "time_max_us"):
    df.loc[slow, col] *= 2
(out / "c" / src.parent.name).mkdir(parents=True, exist_ok=True)
df.to_csv(out / "c" / src.parent.name / "results.csv", index=False)
PY
$py -m bwprof baseline "$out"/a/* --out "$out/baseline.json" || exit 2
$py -m bwprof compare "$out/baseline.json" "$out"/b/* > "$out/compare_same.txt"; same=$?
$py -m bwprof compare "$out/baseline.json" "$out"/c/* > "$out/compare_slowed.txt"; slowed=$?
echo "same benchmark twice: compare exit $same (0 = no regression)"
grep -c "slower" "$out/compare_same.txt" | sed 's/^/  rows flagged slower: /'
echo "layernorm slowed 2x: compare exit $slowed (1 = regression caught)"
grep "layernorm" "$out/compare_slowed.txt" | head -8
echo "rows flagged slower when only layernorm was slowed:"
grep "slower" "$out/compare_slowed.txt"
[ "$same" = 0 ] && [ "$slowed" = 1 ]

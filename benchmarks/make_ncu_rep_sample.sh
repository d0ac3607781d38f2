#!/usr/bin/env bash
# Make a real Nsight Compute report (.ncu-rep) and check bwprof's .ncu-rep reader against it.
#
# On a machine with an NVIDIA GPU, Nsight Compute (ncu) and a GPU build of bwprof:
#     benchmarks/make_ncu_rep_sample.sh OUT_DIR        (OUT_DIR defaults to $OUT)
#
# 1. profiles a few of bwprof's stream kernels: ncu --set basic -o OUT_DIR/sample ...
# 2. reads OUT_DIR/sample.ncu-rep with bwprof.traces.read (through NVIDIA's ncu_report module,
#    which the reader must find by itself beside ncu) and prints the frame;
# 3. exports the same report as a raw-page CSV (ncu --import ... --csv --page raw) and checks
#    that the .ncu-rep reader and the CSV reader agree on every launch.
# If OUT_DIR/sample.ncu-rep is under 1 MB, copy it to tests/data/traces/ncu_stream_h100.ncu-rep.
set -euo pipefail
out=${1:-${OUT:?give OUT_DIR or set OUT}}
py=${PYTHON:-python3}
root=$(cd "$(dirname "$0")/.." && pwd)
export PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p "$out"
command -v ncu >/dev/null || { echo "ncu is not on PATH"; exit 2; }
ncu --version | tail -1
$py -c "import bwprof, sys; sys.exit(0 if any(d.kind == 'gpu' for d in bwprof.devices()) else 1)" \
  || { echo "bwprof sees no GPU (build it with make build on this machine)"; exit 2; }

# Six launches of the stream kernels keep the report small (well under 1 MB with --set basic).
ncu --set basic --kernel-name regex:bwprof_stream --launch-count 6 -f -o "$out/sample" \
  $py -m bwprof bench --quick --kernels stream --device gpu --no-progress > "$out/bench.txt" 2> "$out/ncu.log" \
  || { echo "ncu run failed:"; tail -20 "$out/ncu.log"; exit 1; }
ls -l "$out/sample.ncu-rep"
ncu --import "$out/sample.ncu-rep" --csv --page raw --print-units base > "$out/sample_raw.csv"
echo "ncu_report.py found at: $(find "$(dirname "$(readlink -f "$(command -v ncu)")")/.." /opt/nvidia /usr/local \
  -name ncu_report.py -path '*extras/python*' 2>/dev/null | head -1)"

$py - "$out" <<'EOF'
import sys
from pathlib import Path

import numpy as np
import pandas as pd

import bwprof.traces as traces
from bwprof.traces.formats import ncu_report

out = Path(sys.argv[1])
module = ncu_report.find_ncu_report()
print("ncu_report module:", getattr(module, "__file__", None) or "NOT FOUND by bwprof")
if module is None:
    sys.exit("bwprof did not find ncu_report by itself: set BWPROF_NCU_REPORT_PATH to the "
             "extras/python folder above and report it")
rep = traces.read(out / "sample.ncu-rep")
csv = traces.read(out / "sample_raw.csv")
pd.set_option("display.width", 200)
print(rep[["short_name", "duration_ns", "grid_x", "block_x", "registers", "shared_mem_bytes",
           "device", "stream", "correlation_id"]].to_string())
print(f"{len(rep)} launches, {rep.shape[1]} columns from the .ncu-rep; {len(csv)} from the CSV")
bad = []
for col in ["kernel_name", "duration_ns", "grid_x", "grid_y", "grid_z", "block_x", "block_y",
            "block_z", "registers", "shared_mem_bytes", "device", "stream", "correlation_id"]:
    x, y = rep[col].tolist(), csv[col].tolist()
    if col == "duration_ns":
        ok = np.allclose(x, y, rtol=5e-3)
    else:
        ok = x == y
    if not ok:
        bad.append(col)
metrics = sorted(c for c in csv.columns if "__" in c)
missing = [c for c in metrics if c not in rep.columns]
for col in metrics:
    if col in missing:
        continue
    a, b = rep[col], csv[col]
    if b.dtype == np.float64:
        # The CSV prints rounded values (a few significant digits); the report holds them exact.
        if not np.allclose(pd.to_numeric(a, errors="coerce"), b, rtol=5e-3, equal_nan=True):
            bad.append(col)
    elif a.astype(str).tolist() != b.astype(str).tolist():
        bad.append(col)
print(f"{len(metrics)} metrics compared; missing from the .ncu-rep frame: {missing or 'none'}")
print("AGREE with the raw-page CSV reader" if not bad else f"DIFFER in: {bad}")
size = (out / "sample.ncu-rep").stat().st_size
print(f"report size {size} bytes: {'small enough to commit' if size < 1_000_000 else 'too large to commit'}")
sys.exit(1 if bad else 0)
EOF

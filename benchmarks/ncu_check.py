"""Profile `python3 -m bwprof bench --quick` through ncu via bwprof, and check it against bwprof.

1. bwprof's own event timings come from a plain run of the same command (under ncu every launch
   is serialized and replayed, so timings taken inside the profiled process measure the profiler).
2. ncu's kernel durations (gpu__time_duration.sum) for bwprof's stream kernels must agree with them.
3. Cold-cache streaming kernels must read at least their logical bytes from DRAM. Writes that fit
   in the L2 are written back after the kernel ends, so writes are checked on the 1 GiB stream
   kernels of the peak measurement (in the same profile): at least the logical bytes less one L2.

    PYTHONPATH=python python3 benchmarks/ncu_check.py OUT_DIR
"""
from __future__ import annotations

import math
import re
import statistics
import subprocess
import sys
from pathlib import Path

import bwprof
from bwprof import traces

# bwprof_stream<T, OP>: OP 0..3 = copy, scale, add, triad (kernels/stream/gpu.hip); two 16-byte vectors
# per thread, 256 threads per block.
OPS = {"0": "stream_copy", "1": "stream_scale", "2": "stream_add", "3": "stream_triad"}
SYMBOL = re.compile(r"bwprof_stream<(float|__half),\s*(?:\(int\))?(\d)>")
READS = {"stream_copy": 1, "stream_scale": 1, "stream_add": 2, "stream_triad": 2}


def grid_of(n: int, dtype: str) -> int:
    vecs = n // (4 if dtype == "fp32" else 8)
    return max(1, math.ceil(vecs / 512))


def main(out: str) -> int:
    out_dir = Path(out)
    plain, profiled, prof = out_dir / "runs_plain", out_dir / "runs_profiled", out_dir / "ncu"
    bench = [sys.executable, "-m", "bwprof", "bench", "--quick", "--device", "gpu", "--kernels", "stream",
             "--no-progress"]
    subprocess.run(bench + ["--out", str(plain)], check=True, capture_output=True)
    cmd = [sys.executable, "-m", "bwprof", "profile", "--tool", "ncu", "--out", str(prof), "--"] + bench + \
          ["--out", str(profiled)]
    print("$", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True)
    (out_dir / "profile_stdout.txt").write_text(r.stdout + "\n--- stderr ---\n" + r.stderr)
    results = bwprof.load_run(next(plain.iterdir()))
    trace = traces.dram_bytes(traces.read(prof))
    print(f"ncu trace rows: {len(trace)}; bwprof rows: {len(results)}")
    by_key = {}
    for rec in trace.to_dict("records"):
        m = SYMBOL.search(str(rec["kernel_name"]))
        if m:
            key = (OPS[m.group(2)], "fp32" if m.group(1) == "float" else "fp16", int(rec["grid_x"]))
            by_key.setdefault(key, []).append(rec)
    lines, ok, worst = [], True, 0.0
    for row in results.to_dict("records"):
        if row["kernel"] not in READS:
            continue
        n = int(str(row["shape"]).split("=")[1])
        recs = by_key.get((row["kernel"], row["dtype"], grid_of(n, row["dtype"])))
        if not recs:
            lines.append(f"{row['kernel']} {row['dtype']}: not found in the ncu trace")
            ok = False
            continue
        ncu_us = statistics.median(r["duration_ns"] for r in recs) / 1e3
        dram_read = statistics.median(r["dram_bytes_read"] for r in recs)
        diff = abs(row["time_median_us"] - ncu_us)
        worst = max(worst, diff / ncu_us)
        agrees = diff <= max(0.10 * ncu_us, 3.0)  # events also time the launch: a few us at most
        reads_ok = dram_read >= row["bytes_read"]
        ok &= agrees and reads_ok
        lines.append(f"{row['kernel']:13s} {row['dtype']}  bwprof {row['time_median_us']:7.2f} us  ncu {ncu_us:7.2f} us"
                     f"  diff {diff:5.2f} us  DRAM read/logical read {dram_read / row['bytes_read']:6.3f}"
                     f"  {'ok' if agrees and reads_ok else 'MISMATCH'}")
    # 1 GiB kernels: reads all come from DRAM; of the writes, up to an L2's worth may still sit in
    # the (write-back) L2 when the kernel ends, so DRAM writes >= logical writes - L2 size.
    l2 = bwprof.device("gpu").info["cache_bytes"]
    big = [(k, v) for k, v in by_key.items() if k[1] == "fp32" and k[2] == grid_of(1 << 28, "fp32")]
    for (kernel, dtype, _), recs in sorted(big):
        reads, writes = READS[kernel] * (1 << 28) * 4, (1 << 28) * 4
        dram_r = statistics.median(r["dram_bytes_read"] for r in recs)
        dram_w = statistics.median(r["dram_bytes_written"] for r in recs)
        good = dram_r >= reads and dram_w >= writes - l2
        ok &= good
        lines.append(f"{kernel:13s} {dtype} 1 GiB (peak run)  ncu {statistics.median(r['duration_ns'] for r in recs) / 1e3:8.1f} us"
                     f"  DRAM read/logical {dram_r / reads:6.4f}  DRAM write/logical {dram_w / writes:6.4f}"
                     f"  {'ok' if good else 'MISMATCH'}")
    print("\n".join(lines))
    print(f"largest relative timing difference {100 * worst:.1f} %; tolerance: within 10 % or 3 us; "
          f"cold kernels read >= their logical bytes from DRAM; 1 GiB kernels write >= logical - L2")
    return 0 if ok and lines else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

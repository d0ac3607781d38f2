"""Profile `python3 -m bwprof bench --quick` through ncu via bwprof, then check that ncu's kernel
durations agree with bwprof's own event timings and that cold-cache streaming kernels move at
least their logical bytes through DRAM.

    PYTHONPATH=python python3 benchmarks/ncu_check.py OUT_DIR
"""
from __future__ import annotations

import re
import statistics
import subprocess
import sys
from pathlib import Path

import bwprof
from bwprof import traces

# bwprof_stream<T, OP>: OP 0..3 = copy, scale, add, triad (kernels/stream.hip).
OPS = {"0": "stream_copy", "1": "stream_scale", "2": "stream_add", "3": "stream_triad"}
SYMBOL = re.compile(r"bwprof_stream<(float|__half),\s*(?:\(int\))?(\d)>")


def main(out: str) -> int:
    out_dir = Path(out)
    runs, prof = out_dir / "runs", out_dir / "ncu"
    cmd = [sys.executable, "-m", "bwprof", "profile", "--tool", "ncu", "--out", str(prof), "--",
           sys.executable, "-m", "bwprof", "bench", "--quick", "--device", "gpu", "--kernels", "stream",
           "--out", str(runs), "--no-progress"]
    print("$", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True)
    (out_dir / "profile_stdout.txt").write_text(r.stdout + "\n--- stderr ---\n" + r.stderr)
    print(r.stdout[-3000:], r.stderr[-2000:], sep="\n")
    results = bwprof.load_run(next(runs.iterdir()))
    trace = traces.dram_bytes(traces.read(prof))
    print(f"ncu trace rows: {len(trace)}; bwprof rows: {len(results)}")
    by_row = {}
    for rec in trace.to_dict("records"):
        m = SYMBOL.search(str(rec["kernel_name"]))
        if m:
            key = (OPS[m.group(2)], "fp32" if m.group(1) == "float" else "fp16")
            by_row.setdefault(key, []).append(rec)
    worst, lines, ok = 0.0, [], True
    for row in results.to_dict("records"):
        recs = by_row.get((row["kernel"], row["dtype"]))
        if not recs:
            continue
        ncu_us = statistics.median(r["duration_ns"] for r in recs) / 1e3
        logical = row["bytes_read"] + row["bytes_written"]
        dram = statistics.median((r.get("dram_bytes_read") or 0) + (r.get("dram_bytes_written") or 0) for r in recs)
        diff = abs(row["time_median_us"] - ncu_us)
        rel = diff / ncu_us
        worst = max(worst, rel)
        # Events around one launch also time the launch itself: a few microseconds at most.
        agrees = diff <= max(0.10 * ncu_us, 3.0)
        ok &= agrees and dram >= logical
        lines.append(f"{row['kernel']:13s} {row['dtype']}  bwprof {row['time_median_us']:8.2f} us  ncu {ncu_us:8.2f} us"
                     f"  diff {diff:6.2f} us ({100 * rel:5.1f} %)  DRAM/logical {dram / logical:5.3f}"
                     f"  {'ok' if agrees and dram >= logical else 'MISMATCH'}")
    print("\n".join(lines))
    print(f"compared {len(lines)} rows; largest relative difference {100 * worst:.1f} %; "
          f"tolerance: within 10 % or 3 us; DRAM bytes >= logical bytes")
    return 0 if ok and lines else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

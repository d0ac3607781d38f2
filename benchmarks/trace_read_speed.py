"""How fast bwprof reads large traces, and how much memory it takes (issues #12 and #17).

Targets on the 2-core development machine:
- a rocprofv3 ``kernel_trace.csv`` of 2,000,000 dispatches (about 277 MB): at most 5 s and 1 GB
  peak resident memory (issue #12);
- a PyTorch profiler trace (Chrome JSON) of 300,000 events: at most 2 s (issue #12);
- a rocpd (rocprofiler-sdk schema 3) database of 1,000,000 dispatches: at most 5 s (issue #17).

Each file is written into a temporary folder from the tool's documented layout (realistic
shapes: a few hundred distinct kernel names of the lengths real ones have, one row or event per
dispatch, CPU-side events around the GPU ones in the PyTorch trace), then read with
``bwprof.traces.read`` in a fresh child process per read, which reports its time and its peak
resident size (``resource.getrusage`` in the child, so that neither the writer nor an earlier
read counts).

    PYTHONPATH=python python3 benchmarks/trace_read_speed.py [--formats csv,pytorch,rocpd]
        [--csv-rows 2000000] [--events 300000] [--dispatches 1000000] [--repeat 3]

Exit status 1 when a target is missed (the best of the repeats against the time target, the
largest peak resident size against the memory target).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREE = ROOT
sys.path.insert(0, str(ROOT / "tests" / "data" / "traces"))

# --------------------------------------------------------------------------------------------
# Kernel names as real traces hold them: short runtime helpers, Tensile/hipBLASLt GEMMs, long
# templated PyTorch kernels, a few very long CUTLASS-style ones.
# --------------------------------------------------------------------------------------------

_TEMPLATES = [
    "__amd_rocclr_copyBuffer",
    "__amd_rocclr_fillBufferAligned",
    "Cijk_Ailk_Bljk_HHS_BH_MT{a}x{b}x32_MI32x32x8x1_SN_1LDSB{c}_GRVW8_K1",
    "void at::native::vectorized_elementwise_kernel<4, at::native::{op}_kernel_cuda<c10::Half>, "
    "std::array<char*, {c}> >(int, at::native::{op}_kernel_cuda<c10::Half>, std::array<char*, {c}>)",
    "void at::native::reduce_kernel<{a}, {c}, at::native::ReduceOp<float, at::native::{op}Ops<float>, "
    "unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::{op}Ops<float>, unsigned int, "
    "float, 4>)",
    "void bwprof_layernorm_fp16<{a}>(__half const*, __half*, int)",
    "triton_poi_fused_{op}_{a}",
    "void ck::kernel_gemm_xdl_cshuffle_v3<ck::GridwiseGemm_xdl_cshuffle_v3<{a}, {b}, {c}>, true, "
    "ck::InMemoryDataOperationEnum::Set, {op}>(ck::GridwiseGemm_xdl_cshuffle_v3<{a}, {b}, {c}>::Argument)",
    "flash_fwd_kernel_{op}_hdim{a}",
    "rocprim::detail::radix_sort_onesweep_kernel<{a}, {b}>",
]
_OPS = ["add", "mul", "gelu", "silu", "Sum", "Max", "copy", "div", "rsqrt", "exp", "softmax"]


def kernel_names(count, seed=1):
    """``count`` distinct, realistic kernel names (about 60 characters on average)."""
    rng = random.Random(seed)
    names, seen = [], set()
    while len(names) < count:
        t = rng.choice(_TEMPLATES)
        name = t.format(a=rng.choice([32, 64, 128, 256, 512]), b=rng.choice([64, 128, 256]),
                        c=rng.choice([1, 2, 3, 4]), op=rng.choice(_OPS))
        if name not in seen:
            seen.add(name)
            names.append(name)
    return names


def _zipf_weights(n, s=0.8):
    """A few kernels take most dispatches, as in a model's trace."""
    return [1.0 / (k + 1) ** s for k in range(n)]


# --------------------------------------------------------------------------------------------
# rocprofv3 kernel_trace.csv (rocprofiler-sdk's documented columns, the header of the
# documentation's example data in tests/data/traces/rocprofv3_kernel_trace.csv)
# --------------------------------------------------------------------------------------------

V3_HEADER = ("Kind", "Agent_Id", "Queue_Id", "Stream_Id", "Thread_Id", "Dispatch_Id", "Kernel_Id",
             "Kernel_Name", "Correlation_Id", "Start_Timestamp", "End_Timestamp",
             "Private_Segment_Size", "Group_Segment_Size", "Workgroup_Size_X", "Workgroup_Size_Y",
             "Workgroup_Size_Z", "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z")


def write_rocprofv3_csv(path, rows, distinct=209, seed=1):
    """A rocprofv3 kernel_trace.csv with ``rows`` dispatches of ``distinct`` kernels on 8 GPUs;
    returns the sum of durations in ns (the figure a correct reader must give).

    The most frequent kernels get the shortest names (runtime copies, fills, Triton pointwise
    kernels), which puts two million rows at about 277 MB, the size of issue #12's trace."""
    rng = random.Random(seed)
    names = sorted(kernel_names(distinct, seed), key=len)
    picks = rng.choices(range(distinct), weights=_zipf_weights(distinct, 1.35), k=rows)
    quoted = ['"' + n.replace('"', '""') + '"' for n in names]
    wg = [rng.choice([64, 128, 256, 512]) for _ in names]
    grid = [wg[k] * rng.choice([1, 8, 64, 304, 1024, 4096]) for k in range(distinct)]
    lds = [rng.choice([0, 0, 4096, 16384, 65536]) for _ in names]
    head = ",".join(f'"{h}"' for h in V3_HEADER)
    t = 2_414_192_765_353_337
    total = 0
    with open(path, "w", newline="") as f:
        f.write(head + "\n")
        out = []
        for i, k in enumerate(picks):
            dur = 1000 + (k * 7919 + i * 104729) % 90000
            total += dur
            agent = 2 + (i % 8)
            out.append(f'"KERNEL_DISPATCH",{agent},{agent - 1},0,21228,{i + 1},{k + 1},{quoted[k]},'
                       f'{i + 1},{t},{t + dur},0,{lds[k]},{wg[k]},1,1,{grid[k]},1,1\n')
            t += dur + 500
            if len(out) == 50_000:
                f.write("".join(out))
                out = []
        f.write("".join(out))
    return total


# --------------------------------------------------------------------------------------------
# PyTorch profiler trace (Kineto's Chrome trace: traceEvents of ph "X" with cat cpu_op,
# cuda_runtime, kernel, gpu_memcpy, gpu_memset; flow events "s"/"f" of cat ac2g linking a
# launch to its kernel), the layout of tests/data/traces/pytorch_trace.json
# --------------------------------------------------------------------------------------------

def pytorch_trace(events, distinct=150, seed=2):
    """(document, sum of GPU event durations in ns) of a trace with ``events`` trace events."""
    rng = random.Random(seed)
    names = kernel_names(distinct, seed)
    weights = _zipf_weights(distinct)
    trace, gpu_ns = [], 0
    ts, gts, corr = 1_000_000.0, 1_000_050.0, 1
    while len(trace) < events:
        # One operator: its CPU op, the launch, the kernel (or a copy/fill), the flow events.
        op = rng.choice(["aten::mm", "aten::add", "aten::gelu", "aten::layer_norm", "aten::copy_"])
        trace.append({"ph": "X", "cat": "cpu_op", "name": op, "pid": 4242, "tid": 4242,
                      "ts": round(ts, 3), "dur": 12.5,
                      "args": {"External id": corr, "Record function id": 0, "Ev Idx": corr,
                               "Input Dims": [[2048, 4096], [4096, 4096]],
                               "Input type": ["c10::Half", "c10::Half"]}})
        trace.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 4242,
                      "tid": 4242, "ts": round(ts + 2.0, 3), "dur": 4.25,
                      "args": {"External id": corr, "cbid": 211, "correlation": corr}})
        kind = rng.random()
        dur = round(rng.uniform(2.0, 400.0), 3)
        gpu_ns += round(dur * 1000.0)
        if kind < 0.9:
            trace.append({"ph": "X", "cat": "kernel", "name": rng.choices(names, weights)[0],
                          "pid": 0, "tid": 7, "ts": round(gts, 3), "dur": dur,
                          "args": {"External id": corr, "queued": 0, "device": 0, "context": 1,
                                   "stream": 7, "correlation": corr, "registers per thread": 128,
                                   "shared memory": 49152, "blocks per SM": 2.5,
                                   "warps per SM": 20.0, "grid": [1024, 1, 1], "block": [256, 1, 1],
                                   "est. achieved occupancy %": 31}})
        elif kind < 0.97:
            trace.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)",
                          "pid": 0, "tid": 7, "ts": round(gts, 3), "dur": dur,
                          "args": {"device": 0, "context": 1, "stream": 7, "correlation": corr,
                                   "bytes": 1048576, "memory bandwidth (GB/s)": 20.1}})
        else:
            trace.append({"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0,
                          "tid": 7, "ts": round(gts, 3), "dur": dur,
                          "args": {"device": 0, "context": 1, "stream": 7, "correlation": corr,
                                   "bytes": 65536, "memory bandwidth (GB/s)": 100.0}})
        trace.append({"ph": "s", "id": corr, "pid": 4242, "tid": 4242, "ts": round(ts + 2.0, 3),
                      "cat": "ac2g", "name": "ac2g"})
        trace.append({"ph": "f", "id": corr, "pid": 0, "tid": 7, "ts": round(gts, 3),
                      "cat": "ac2g", "name": "ac2g", "bp": "e"})
        ts += 20.0
        gts += dur + 1.0
        corr += 1
    del trace[events:]
    doc = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3",
                                                      "totalGlobalMem": 85520809984,
                                                      "computeMajor": 9, "computeMinor": 0,
                                                      "numSms": 132}],
           "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1},
           "traceEvents": trace, "traceName": "trace.json", "baseTimeNanoseconds": 1700000000000000000}
    return doc, gpu_ns


def write_pytorch_trace(path, events, seed=2):
    """Kineto writes one event per line; returns the GPU time of the kernel/copy/fill events
    that fit (the events list is cut at ``events``), in ns."""
    doc, _ = pytorch_trace(events, seed=seed)
    gpu_ns = sum(e["dur"] * 1000.0 for e in doc["traceEvents"]
                 if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"))
    with open(path, "w") as f:
        f.write('{\n  "schemaVersion": 1,\n  "deviceProperties": '
                + json.dumps(doc["deviceProperties"]) + ',\n  "traceEvents": [\n')
        f.write(",\n".join("  " + json.dumps(e) for e in doc["traceEvents"]))
        f.write('\n  ],\n  "traceName": "trace.json",\n  "baseTimeNanoseconds": '
                f'{doc["baseTimeNanoseconds"]}\n}}\n')
    return gpu_ns


# --------------------------------------------------------------------------------------------
# Timing in child processes
# --------------------------------------------------------------------------------------------

_CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[2])
t0 = time.perf_counter()
import bwprof.traces as traces
t1 = time.perf_counter()
u1 = resource.getrusage(resource.RUSAGE_SELF)
df = traces.read(sys.argv[1])
t2 = time.perf_counter()
u2 = resource.getrusage(resource.RUSAGE_SELF)
cpu = (u2.ru_utime + u2.ru_stime) - (u1.ru_utime + u1.ru_stime)
print(json.dumps({"read_s": t2 - t1, "cpu_s": cpu, "import_s": t1 - t0, "rows": len(df),
                  "gpu_ns": float(df["duration_ns"].sum()), "rss_mb": u2.ru_maxrss / 1024}))
"""

_BASELINE = r"""
import json, resource, sys
sys.path.insert(0, sys.argv[1])
import bwprof.traces
print(json.dumps({"rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def _child(path):
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(path), str(TREE / "python")],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"reading {path} failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure(label, path, expected_rows, expected_gpu_ns, repeat, limit_s, limit_mb):
    size_mb = os.path.getsize(path) / 1e6
    runs = [_child(path) for _ in range(repeat)]
    best = min(r["read_s"] for r in runs)
    rss = max(r["rss_mb"] for r in runs)
    rows, gpu_ns = runs[0]["rows"], runs[0]["gpu_ns"]
    right = rows == expected_rows and abs(gpu_ns - expected_gpu_ns) <= 1e-9 * expected_gpu_ns + 1
    ok_t = best <= limit_s
    ok_m = limit_mb is None or rss <= limit_mb
    cpu = min(r["cpu_s"] for r in runs)
    print(f"{label}: {rows} rows from {size_mb:.0f} MB; read best {best:.2f} s "
          f"(all {', '.join(format(r['read_s'], '.2f') for r in runs)} s; CPU time best {cpu:.2f} s), "
          f"peak resident {rss:.0f} MB; "
          f"GPU time {gpu_ns / 1e6:.1f} ms {'(right)' if right else f'(WRONG: expected {expected_rows} rows, {expected_gpu_ns / 1e6:.1f} ms)'}")
    target = f"at most {limit_s:.1f} s" + (f" and {limit_mb:.0f} MB" if limit_mb else "")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"  target {target} -> {'met' if ok_t and ok_m else 'MISSED'} (load average now {load:.1f}; "
          "under load the CPU time says what the read itself costs)")
    return ok_t and ok_m and right


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--formats", default="csv,pytorch,rocpd",
                    help="comma-separated: csv (rocprofv3 kernel_trace.csv), pytorch, rocpd")
    ap.add_argument("--csv-rows", type=int, default=2_000_000)
    ap.add_argument("--events", type=int, default=300_000)
    ap.add_argument("--dispatches", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3, help="timed reads (child processes) per file")
    ap.add_argument("--csv-limit-s", type=float, default=5.0)
    ap.add_argument("--csv-limit-mb", type=float, default=1000.0)
    ap.add_argument("--pytorch-limit-s", type=float, default=2.0)
    ap.add_argument("--rocpd-limit-s", type=float, default=5.0)
    ap.add_argument("--tree", default=str(ROOT),
                    help="source tree whose python/ the reads import (default: this one), to "
                         "time an older checkout with the same files")
    args = ap.parse_args(argv)
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    unknown = set(formats) - {"csv", "pytorch", "rocpd"}
    if unknown:
        ap.error(f"--formats: unknown {', '.join(sorted(unknown))} (csv, pytorch, rocpd)")
    global TREE
    TREE = Path(args.tree).resolve()
    base = json.loads(subprocess.run([sys.executable, "-c", _BASELINE, str(TREE / "python")],
                                     capture_output=True, text=True, check=True).stdout)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"python {sys.version.split()[0]}, cores {os.cpu_count()}, load average {load:.1f}; "
          f"a child that only imports bwprof.traces peaks at {base['rss_mb']:.0f} MB resident")
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        if "csv" in formats:
            path = Path(tmp) / "run_kernel_trace.csv"
            t0 = time.perf_counter()
            total = write_rocprofv3_csv(path, args.csv_rows)
            print(f"wrote {path.name} in {time.perf_counter() - t0:.1f} s")
            ok &= measure("rocprofv3 kernel_trace.csv", path, args.csv_rows, total, args.repeat,
                          args.csv_limit_s, args.csv_limit_mb)
            path.unlink()
        if "pytorch" in formats:
            path = Path(tmp) / "trace.json"
            t0 = time.perf_counter()
            total = write_pytorch_trace(path, args.events)
            doc = json.loads(path.read_text())
            gpu_events = sum(e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")
                             for e in doc["traceEvents"])
            del doc
            print(f"wrote {path.name} ({args.events} events, {gpu_events} on the GPU) in "
                  f"{time.perf_counter() - t0:.1f} s")
            ok &= measure("PyTorch trace", path, gpu_events, total, args.repeat,
                          args.pytorch_limit_s, None)
            path.unlink()
        if "rocpd" in formats:
            from sample_writers.rocpd import write_big_rocpd

            path = Path(tmp) / "results.db"
            t0 = time.perf_counter()
            write_big_rocpd(path, args.dispatches)
            print(f"wrote {path.name} ({args.dispatches} dispatches) in {time.perf_counter() - t0:.1f} s")
            kernels = 40
            total = sum(1000 + 37 * (i % kernels) for i in range(args.dispatches))
            ok &= measure("rocpd database", path, args.dispatches, total, args.repeat,
                          args.rocpd_limit_s, None)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

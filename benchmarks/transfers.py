"""Host transfers on one GPU: bwprof's h2d/d2h (pinned and pageable), d2d and memset beside
PyTorch doing the same copies, in one run.

Both sides: device events around the copy, the median of the repeats, bytes moved once per copy
(GB = 1e9 B). PyTorch's copies are ``dst.copy_(src, non_blocking=True)`` between a CUDA tensor and a
host tensor (``pin_memory()`` for pinned), ``copy_`` between two CUDA tensors, and ``fill_`` for
memset. bwprof's rows are judged against the host link the runtime reports (PCIe generation and
width, or NVLink-C2C).

    PYTHONPATH=python python3 benchmarks/transfers.py [--quick] [--csv FILE] [--no-torch]
"""
from __future__ import annotations

import argparse
import sys

import pandas as pd

import bwprof

SIZES = [4 << 10, 64 << 10, 1 << 20, 16 << 20, 256 << 20, 1 << 30]
QUICK = [4 << 10, 1 << 20, 64 << 20]


def torch_copy_us(kind: str, variant: str, size: int, repeats: int) -> float:
    """Median microseconds of PyTorch doing one copy of ``size`` bytes."""
    import torch
    dev = torch.device("cuda")
    host = torch.empty(size, dtype=torch.uint8)
    if variant == "pinned":
        host = host.pin_memory()
    host.random_(0, 255)
    gpu = torch.empty(size, dtype=torch.uint8, device=dev)
    other = torch.empty_like(gpu)
    ops = {"h2d": lambda: gpu.copy_(host, non_blocking=True), "d2h": lambda: host.copy_(gpu, non_blocking=True),
           "d2d": lambda: other.copy_(gpu), "memset": lambda: gpu.fill_(0x5a)}
    op = ops[kind]
    for _ in range(2):
        op()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        op()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e3)
    times.sort()
    return times[len(times) // 2]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--csv")
    ap.add_argument("--no-torch", action="store_true")
    args = ap.parse_args(argv)
    dev = bwprof.device("gpu")
    print(f"{dev.name} ({dev.id}), host link: {dev.info.get('host_link') or 'unknown'} "
          f"({dev.info.get('host_link_gbs') or 0:.1f} GB/s each way, theoretical)")
    torch_ok = not args.no_torch
    if torch_ok:
        try:
            import torch
            torch_ok = torch.cuda.is_available()
        except ImportError:
            torch_ok = False
    cases = [(k, v) for k in ("h2d", "d2h") for v in ("pinned", "pageable")] + [("d2d", "runtime"), ("memset", "runtime")]
    rows = []
    for size in (QUICK if args.quick else SIZES):
        for kind, variant in cases:
            m = bwprof.measure(kind, variant=variant, device=dev.id, cache="hot", repeats=args.repeats, bytes=size)
            r = m.to_dict()
            moved = size * (2 if kind == "d2d" else 1)  # d2d reads and writes device memory
            row = {"kernel": kind, "variant": variant, "bytes": size, "bwprof_us": r["time_median_us"],
                   "bwprof_gbs": r["bandwidth_gbs"], "pct_of_roof": r["bandwidth_pct_peak"], "bound": r["bound"],
                   "link": r["link"], "verified": r["verified"]}
            if torch_ok:
                t = torch_copy_us(kind, variant, size, args.repeats)
                row.update(torch_us=t, torch_gbs=moved / (t * 1e-6) / 1e9, bwprof_over_torch=r["bandwidth_gbs"] /
                           (moved / (t * 1e-6) / 1e9))
            rows.append(row)
            line = f"{kind:6s} {variant:8s} {size:>11d} B  bwprof {r['bandwidth_gbs']:8.2f} GB/s ({r['bound']})"
            if torch_ok:
                line += f"  torch {row['torch_gbs']:8.2f} GB/s  ratio {row['bwprof_over_torch']:.3f}"
            print(line, flush=True)
    df = pd.DataFrame(rows)
    if args.csv:
        df.to_csv(args.csv, index=False)
    big = df[df["bytes"] == df["bytes"].max()]
    print("\nat the largest size:")
    print(big.to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    return 0 if df["verified"].all() else 1


if __name__ == "__main__":
    sys.exit(main())

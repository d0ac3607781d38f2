"""Collectives and peer copies on a multi-GPU node: bwprof beside PyTorch's torch.distributed.

Three steps, on a node of two GPUs or more (NCCL_NVLS_ENABLE=0 in the environment, as every bwprof
test and benchmark runs):

    python3 benchmarks/collectives.py node --csv A.csv --p2p-csv P.csv --plots DIR
        bwprof in one process over every GPU: the P2P matrix, then each collective x dtype x size
    torchrun --standalone --nproc_per_node N benchmarks/collectives.py torch --csv B.csv
        PyTorch's dist.all_reduce (NCCL) of the same sizes and dtypes, one process per GPU, timed as
        nccl-tests does (warm-up, then back-to-back iterations between two events, per-rank mean,
        the slowest rank), busbw = size / time x 2(n-1)/n
    python3 benchmarks/collectives.py compare A.csv B.csv
        all-reduce bus bandwidth side by side, per dtype and size

bwprof's one-process all-reduce and PyTorch's one-process-per-GPU all-reduce are the same NCCL
collective on the same buffers; they differ in what the events enclose (bwprof: one collective per
timing, after a ~20 us spin that hides the launch; torch here: 20 back-to-back collectives).
"""
from __future__ import annotations

import argparse
import os
import sys

import pandas as pd

SIZES = [1024 * 4 ** i for i in range(11)]  # 1 KB .. 1 GB
DTYPES = ("fp32", "fp16", "bf16")


def node(args) -> int:
    import bwprof
    from bwprof import plots
    from bwprof.collective import library
    print("collective library:", library())
    print(bwprof.host_links().to_string(index=False))
    print(bwprof.peer_links().to_string(index=False))
    ok = True
    gpus = [d for d in bwprof.devices() if d.kind == "gpu"]
    if len(gpus) >= 2:
        p2p = bwprof.p2p(args.p2p_bytes, progress=True)
        ok &= bool(p2p["verified"].all())
        for d in ("uni", "bi"):
            print(f"\nP2P GB/s {d} (rows: source, columns: destination)")
            print(bwprof.p2p_matrix(p2p, direction=d).round(1).to_string())
            if args.plots:
                plots.p2p_heatmap(p2p, os.path.join(args.plots, f"p2p_{d}"), direction=d)
        if args.p2p_csv:
            p2p.to_csv(args.p2p_csv, index=False)
    from bwprof.collective import collectives
    sizes = SIZES[: args.max_exp + 1]
    df = collectives(None, DTYPES, sizes, repeats=args.repeats, progress=True)
    ok &= bool(df["verified"].astype(bool).all())
    cols = ["kernel", "dtype", "size_bytes", "time_median_us", "algbw_gbs", "busbw_gbs", "bandwidth_pct_peak", "link",
            "verified"]
    print(df[cols].to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    if args.csv:
        df.to_csv(args.csv, index=False)
    if args.plots:
        plots.collective_busbw(df, os.path.join(args.plots, "collectives_busbw"))
    return 0 if ok else 1


def torch_ranks(args) -> int:
    import torch
    import torch.distributed as dist
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    rank, world = dist.get_rank(), dist.get_world_size()
    types = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
    rows = []
    for dt in DTYPES:
        for size in SIZES[: args.max_exp + 1]:
            t = types[dt]
            n = size // torch.tensor([], dtype=t).element_size()
            x = torch.ones(n, dtype=t, device="cuda")
            for _ in range(5):
                dist.all_reduce(x)
            torch.cuda.synchronize()
            dist.barrier()
            iters = 20
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            for _ in range(iters):
                dist.all_reduce(x)
            b.record()
            b.synchronize()
            us = a.elapsed_time(b) * 1e3 / iters
            slow = torch.tensor([us], dtype=torch.float64, device="cuda")
            dist.all_reduce(slow, op=dist.ReduceOp.MAX)
            us = float(slow.item())
            algbw = size / (us * 1e-6) / 1e9
            rows.append({"dtype": dt, "size_bytes": size, "ranks": world, "torch_us": us, "torch_algbw_gbs": algbw,
                         "torch_busbw_gbs": algbw * 2 * (world - 1) / world})
            if rank == 0:
                print(f"torch all_reduce {dt} {size:>11d} B over {world}: {us:9.1f} us, busbw "
                      f"{rows[-1]['torch_busbw_gbs']:7.1f} GB/s", flush=True)
    if rank == 0 and args.csv:
        pd.DataFrame(rows).to_csv(args.csv, index=False)
    dist.destroy_process_group()
    return 0


def compare(args) -> int:
    a = pd.read_csv(args.bwprof)
    b = pd.read_csv(args.torch)
    a = a[a["kernel"] == "all_reduce"][["dtype", "size_bytes", "ranks", "time_median_us", "busbw_gbs"]]
    m = a.merge(b, on=["dtype", "size_bytes"], suffixes=("", "_torch"))
    m["bwprof_over_torch"] = m["busbw_gbs"] / m["torch_busbw_gbs"]
    print("all_reduce: bwprof (one process, all GPUs) beside torch.distributed (one process per GPU)")
    print(m.to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    big = m[m["size_bytes"] >= (256 << 20)]
    if len(big):
        print(f"\nat 256 MB and above: bwprof/torch busbw median {big['bwprof_over_torch'].median():.3f}")
    if args.csv:
        m.to_csv(args.csv, index=False)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="step", required=True)
    s = sub.add_parser("node")
    s.add_argument("--csv")
    s.add_argument("--p2p-csv")
    s.add_argument("--p2p-bytes", type=int, default=256 << 20)
    s.add_argument("--plots")
    s.add_argument("--repeats", type=int, default=20)
    s.add_argument("--max-exp", type=int, default=10, help="sizes 1 KB x 4^0..4^N (10: up to 1 GB)")
    s.set_defaults(func=node)
    s = sub.add_parser("torch")
    s.add_argument("--csv")
    s.add_argument("--max-exp", type=int, default=10)
    s.set_defaults(func=torch_ranks)
    s = sub.add_parser("compare")
    s.add_argument("bwprof")
    s.add_argument("torch")
    s.add_argument("--csv")
    s.set_defaults(func=compare)
    args = ap.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
